"""Typed settings, read once per process from the environment the template gives each function.

Every value the template sets is required here, with no default of its own: the template is the one
place where Herald's settings and their defaults live. Logic never reads ``os.environ``; composition
roots build a ``Settings`` and hand its parts to the services and adapters they construct.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec

from herald.domain.jobs import Channel, QueuePriority
from herald.domain.signin import SignInLimits
from herald.domain.vendors import VENDOR_REGIONS

if TYPE_CHECKING:
    from herald.domain.billing import PlanCatalog
    from herald.domain.inbound import Processor
    from herald.domain.money import Money

# Retries of AWS SDK calls. Not a template setting: tests against moto lower it (an unimplemented
# call answers 500 and retries only slow them down).
DEFAULT_AWS_MAX_ATTEMPTS = 3


class SettingsError(RuntimeError):
    """A required environment variable is missing or malformed (a deployment bug)."""


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"environment variable {name} is not set")
    return value


def _int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = env.get(name, "").strip()
    if not raw and default is not None:
        return default
    try:
        return int(_required(env, name))
    except ValueError as exc:
        raise SettingsError(f"environment variable {name} must be an integer") from exc


def _switch(env: Mapping[str, str], name: str) -> bool:
    value = _required(env, name)
    if value not in ("Enabled", "Disabled"):
        raise SettingsError(f"environment variable {name} must be Enabled or Disabled")
    return value == "Enabled"


class Settings(msgspec.Struct, frozen=True):
    table_name: str
    kms_key_id: str
    queue_urls: Mapping[tuple[Channel, QueuePriority], str]
    # The FIFO queue of each channel, for jobs with an ordering key.
    ordered_queue_urls: Mapping[Channel, str]
    dlq_url: str
    # An event's fan-out pages (template.yaml, FanoutQueue).
    fanout_queue_url: str
    alert_topic_arn: str
    region: str
    stage: str
    max_attempts: int
    retry_base_delay_seconds: int
    # Each tenant vendor's API base URLs, by the template parameter the provider table names.
    provider_base_urls: Mapping[str, str]
    platform_sender: str
    # The bucket holding email attachments (template.yaml, AttachmentsBucket).
    attachments_bucket: str
    # Template parameter CircuitBreakers (Enabled / Disabled).
    circuit_breakers: bool
    breaker_cooldown_seconds: int
    endpoint_disable_after_seconds: int
    # Only the local stack sets this (HERALD_LOCAL_WEBHOOK_ORIGIN): the one loopback origin webhooks
    # may target, its provider sandbox. The template never sets it, so deployed stacks always refuse.
    local_webhook_origin: str | None = None
    aws_max_attempts: int = DEFAULT_AWS_MAX_ATTEMPTS
    # PynamoDB builds its own botocore client and ignores AWS_ENDPOINT_URL, so it is passed on.
    dynamodb_endpoint: str | None = None

    def queues_by_name(self) -> dict[str, str]:
        """Every queue's URL by its name (what CloudWatch's dimensions call a queue), the DLQ's too."""
        urls = [*self.queue_urls.values(), self.fanout_queue_url, self.dlq_url]
        return {url.rsplit("/", 1)[-1]: url for url in urls}

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        queue_urls = {
            (channel, priority): _required(
                env, f"HERALD_QUEUE_{channel.value.upper()}_{priority.value.upper()}"
            )
            for channel in Channel
            for priority in QueuePriority
        }
        return cls(
            table_name=_required(env, "HERALD_TABLE"),
            kms_key_id=_required(env, "HERALD_KMS_KEY_ID"),
            queue_urls=queue_urls,
            ordered_queue_urls={
                channel: _required(env, f"HERALD_QUEUE_{channel.value.upper()}_ORDERED")
                for channel in Channel
            },
            dlq_url=_required(env, "HERALD_DLQ"),
            fanout_queue_url=_required(env, "HERALD_QUEUE_FANOUT"),
            alert_topic_arn=_required(env, "HERALD_ALERT_TOPIC"),
            # Lambda sets AWS_REGION; the CLI and tests set AWS_DEFAULT_REGION.
            region=env.get("AWS_REGION") or _required(env, "AWS_DEFAULT_REGION"),
            stage=_required(env, "HERALD_STAGE"),
            max_attempts=_int(env, "HERALD_MAX_ATTEMPTS"),
            retry_base_delay_seconds=_int(env, "HERALD_RETRY_BASE_DELAY_SECONDS"),
            provider_base_urls={
                region.base_url_parameter: _required(env, region.setting) for _, region in VENDOR_REGIONS
            },
            platform_sender=_required(env, "HERALD_PLATFORM_SENDER"),
            attachments_bucket=_required(env, "HERALD_ATTACHMENTS_BUCKET"),
            circuit_breakers=_switch(env, "HERALD_CIRCUIT_BREAKERS"),
            breaker_cooldown_seconds=_int(env, "HERALD_BREAKER_COOLDOWN_SECONDS"),
            endpoint_disable_after_seconds=_int(env, "HERALD_ENDPOINT_DISABLE_AFTER_SECONDS"),
            local_webhook_origin=env.get("HERALD_LOCAL_WEBHOOK_ORIGIN", "").strip() or None,
            aws_max_attempts=_int(env, "HERALD_AWS_MAX_ATTEMPTS", DEFAULT_AWS_MAX_ATTEMPTS),
            dynamodb_endpoint=env.get("AWS_ENDPOINT_URL_DYNAMODB") or env.get("AWS_ENDPOINT_URL") or None,
        )


def _present(env: Mapping[str, str], name: str) -> str:
    """A variable the template always sets, where empty is a meaningful value."""
    if name not in env:
        raise SettingsError(f"environment variable {name} is not set")
    return env[name].strip()


class WebhookSettings(msgspec.Struct, frozen=True):
    """What an email provider's webhook function adds to ``Settings``: which provider it serves."""

    provider: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WebhookSettings:
        return cls(_required(os.environ if env is None else env, "HERALD_WEBHOOK_PROVIDER"))


# What each processor calls the thing a tenant subscribes to (Polar: a product, Paystack: a plan), by
# its value: the functions that read no payment settings skip importing the processors.
_PLAN_KEY_NAMES = {"POLAR": "PRODUCT", "PAYSTACK": "PLAN"}


class PaymentSettings(msgspec.Struct, frozen=True):
    """What a payment webhook function adds to ``Settings``: where the platform's webhook secret is
    kept, and the processor's plan catalog."""

    secret_parameter: str
    catalog: PlanCatalog

    @classmethod
    def from_env(cls, processor: Processor, env: Mapping[str, str] | None = None) -> PaymentSettings:
        env = os.environ if env is None else env
        return cls(_required(env, f"HERALD_{processor.value}_SECRET_PARAMETER"), plan_catalog(processor, env))


def plan_catalog(processor: Processor, env: Mapping[str, str]) -> PlanCatalog:
    """Which of the processor's plan keys are Herald's plans (empty: not sold there), and what each
    plan costs there (empty: no price, so no payment grants it)."""
    from herald.domain.billing import PlanCatalog
    from herald.domain.plans import Plan

    prefix = f"HERALD_{processor.value}"
    key_name = f"{prefix}_{_PLAN_KEY_NAMES[processor.value]}"
    paid = (Plan.INDIE, Plan.STARTUP)
    indie, startup = (_present(env, f"{key_name}_{plan.name}") for plan in paid)
    prices = {plan: price for plan in paid if (price := _money(env, f"{prefix}_PRICE_{plan.name}"))}
    return PlanCatalog.of(indie, startup, prices)


def _money(env: Mapping[str, str], name: str) -> Money | None:
    """A price as the template states it, "<minor units> <ISO 4217 code>"; None when empty."""
    from herald.domain.money import Money

    written = _present(env, name)
    try:
        return Money.parse(written) if written else None
    except ValueError as exc:
        raise SettingsError(f"environment variable {name} must be like 500000 NGN") from exc


class CheckoutSettings(msgspec.Struct, frozen=True):
    """What ApiFunction needs to start checkouts and show the plans: each processor's API, the SSM
    SecureString of its platform credential (Polar's access token, Paystack's secret key) and its
    plan catalog (the plan keys it sells, empty: not sold there, and their prices)."""

    polar_api_base_url: str
    polar_token_parameter: str
    polar_catalog: PlanCatalog
    paystack_api_base_url: str
    paystack_secret_parameter: str
    paystack_catalog: PlanCatalog

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> CheckoutSettings:
        from herald.domain.inbound import Processor

        env = os.environ if env is None else env
        return cls(
            polar_api_base_url=_required(env, "HERALD_POLAR_API_BASE_URL"),
            polar_token_parameter=_required(env, "HERALD_POLAR_TOKEN_PARAMETER"),
            polar_catalog=plan_catalog(Processor.POLAR, env),
            paystack_api_base_url=_required(env, "HERALD_PAYSTACK_API_BASE_URL"),
            paystack_secret_parameter=_required(env, "HERALD_PAYSTACK_SECRET_PARAMETER"),
            paystack_catalog=plan_catalog(Processor.PAYSTACK, env),
        )


class SignInSettings(msgspec.Struct, frozen=True):
    """What only the ConsoleFunction is given: the template's sign-in limits."""

    limits: SignInLimits

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SignInSettings:
        env = os.environ if env is None else env
        return cls(
            SignInLimits(
                codes_per_client=_int(env, "HERALD_SIGNIN_CODES_PER_CLIENT"),
                verifications_per_client=_int(env, "HERALD_SIGNIN_VERIFICATIONS_PER_CLIENT"),
                first_code_delay=_int(env, "HERALD_SIGNIN_FIRST_CODE_DELAY"),
                max_code_delay=_int(env, "HERALD_SIGNIN_MAX_CODE_DELAY"),
            )
        )


class OriginSettings(msgspec.Struct, frozen=True):
    """What the functions that write a URL for a person are given (ApiFunction, ConsoleFunction): the
    template's PublicOrigin, None when it is empty (then the API's domain as API Gateway reports it)."""

    public_origin: str | None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OriginSettings:
        return cls(_present(os.environ if env is None else env, "HERALD_PUBLIC_ORIGIN") or None)


class UnsubscribeSettings(msgspec.Struct, frozen=True):
    """What ConsoleFunction, which verifies unsubscribe links, is given: the SSM parameter of the
    platform's signing key."""

    key_parameter: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> UnsubscribeSettings:
        return cls(_required(os.environ if env is None else env, "HERALD_UNSUBSCRIBE_KEY_PARAMETER"))


class UnsubscribeLinkSettings(msgspec.Struct, frozen=True):
    """What EmailWorkerFunction, which writes unsubscribe links, is given: the key's parameter and
    the origin the links point at."""

    key_parameter: str
    origin: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> UnsubscribeLinkSettings:
        env = os.environ if env is None else env
        return cls(
            _required(env, "HERALD_UNSUBSCRIBE_KEY_PARAMETER"), _required(env, "HERALD_UNSUBSCRIBE_ORIGIN")
        )


class AlertSettings(msgspec.Struct, frozen=True):
    """What only the AlertFunction is given."""

    slack_webhook_parameter: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AlertSettings:
        return cls(_required(os.environ if env is None else env, "HERALD_SLACK_WEBHOOK_PARAMETER"))


class SweepSettings(msgspec.Struct, frozen=True):
    """What only the SweeperFunction is given."""

    stuck_job_seconds: int
    window_hours: int

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SweepSettings:
        env = os.environ if env is None else env
        return cls(_int(env, "HERALD_STUCK_JOB_SECONDS"), _int(env, "HERALD_SWEEP_WINDOW_HOURS"))
