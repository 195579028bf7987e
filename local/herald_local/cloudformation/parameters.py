"""Parameter values of the local stack: the template's defaults, except where local must differ."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from herald.domain.vendors import VENDOR_REGIONS
from herald_local.config import ConfigError, LocalConfig

LOCAL_STAGE = "local"
# Template parameter -> sandbox service whose base URL replaces the real API: every region of each
# vendor of the provider table (one imitation serves them all), and the payment processors' APIs
# (the sandbox's imitated checkouts).
PROVIDER_URL_PARAMETERS = {
    **{region.base_url_parameter: name.slug for name, region in VENDOR_REGIONS},
    "PolarApiBaseUrl": "polar",
    "PaystackApiBaseUrl": "paystack",
}
RETRY_DELAY_PARAMETER = "RetryBaseDelaySeconds"
# Template parameter naming an SSM SecureString -> the variable of LocalConfig.payments it holds.
SECRET_PARAMETERS = {
    "PaystackSecretKeyParameter": "HERALD_PAYSTACK_SECRET_KEY",
    "PolarWebhookSecretParameter": "HERALD_POLAR_WEBHOOK_SECRET",
    "PolarAccessTokenParameter": "HERALD_POLAR_ACCESS_TOKEN",
}
# Template parameter naming an SSM SecureString of the platform's own -> its local, test-only value
# (docs/local-stack.md): no deployed stack ever signs with it.
PLATFORM_SECRETS = {"UnsubscribeKeyParameter": "herald-local-only-unsubscribe-signing-key"}
# Template parameter of a plan key or price -> the variable of LocalConfig.payments that sets it.
PLAN_PARAMETERS = {
    "PolarProductIndie": "HERALD_POLAR_PRODUCT_INDIE",
    "PolarProductStartup": "HERALD_POLAR_PRODUCT_STARTUP",
    "PaystackPlanIndie": "HERALD_PAYSTACK_PLAN_INDIE",
    "PaystackPlanStartup": "HERALD_PAYSTACK_PLAN_STARTUP",
    "PolarPriceIndie": "HERALD_POLAR_PRICE_INDIE",
    "PolarPriceStartup": "HERALD_POLAR_PRICE_STARTUP",
    "PaystackPriceIndie": "HERALD_PAYSTACK_PRICE_INDIE",
    "PaystackPriceStartup": "HERALD_PAYSTACK_PRICE_STARTUP",
}
STUCK_JOB_PARAMETER = "StuckJobSeconds"
BREAKER_COOLDOWN_PARAMETER = "BreakerCooldownSeconds"
ENDPOINT_DISABLE_PARAMETER = "EndpointDisableAfterSeconds"
BREAKERS_PARAMETER = "CircuitBreakers"
SIGNIN_CODES_PARAMETER = "SignInCodesPerClientPerHour"
# The stack's public origin is its gateway's (http://127.0.0.1:<port>): the links Herald writes and
# the one Origin the console's state changes may carry, as the browser at the console sends it.
PUBLIC_ORIGIN_PARAMETER = "PublicOrigin"
# The SSM SecureString AlertFunction reads the Slack webhook URL from; the stack puts the sandbox's there.
SLACK_PARAMETER = "SlackWebhookParameterName"
LOCAL_SLACK_PARAMETER = "/herald/local/slack-webhook-url"


def local_parameters(
    template: dict[str, Any], config: LocalConfig, provider_url: Callable[[str], str]
) -> dict[str, str]:
    """Fails loudly when the template no longer declares a parameter the local stack overrides."""
    overrides = {
        "Stage": LOCAL_STAGE,
        SLACK_PARAMETER: LOCAL_SLACK_PARAMETER,
        PUBLIC_ORIGIN_PARAMETER: config.gateway_url,
    }
    overrides |= {parameter: provider_url(name) for parameter, name in PROVIDER_URL_PARAMETERS.items()}
    if config.retry_base_delay is not None:
        overrides[RETRY_DELAY_PARAMETER] = config.retry_base_delay
    if config.stuck_job_seconds is not None:
        overrides[STUCK_JOB_PARAMETER] = config.stuck_job_seconds
    if config.breaker_cooldown_seconds is not None:
        overrides[BREAKER_COOLDOWN_PARAMETER] = config.breaker_cooldown_seconds
    if config.endpoint_disable_after_seconds is not None:
        overrides[ENDPOINT_DISABLE_PARAMETER] = config.endpoint_disable_after_seconds
    if not config.circuit_breakers:
        overrides[BREAKERS_PARAMETER] = "Disabled"
    if config.signin_codes_per_client is not None:
        overrides[SIGNIN_CODES_PARAMETER] = str(config.signin_codes_per_client)
    overrides |= {parameter: config.payments[variable] for parameter, variable in PLAN_PARAMETERS.items()}
    _declared(template, overrides)
    return overrides


def local_secrets(
    template: dict[str, Any], parameters: Mapping[str, str], config: LocalConfig
) -> dict[str, str]:
    """The SSM SecureStrings the local stack puts in place: the name each template parameter gives
    (its override or default), with the value of ``config.payments``."""
    declared = _declared(template, {**SECRET_PARAMETERS, **PLATFORM_SECRETS})
    values = {parameter: config.payments[variable] for parameter, variable in SECRET_PARAMETERS.items()}
    return {
        parameters.get(parameter) or str(declared[parameter].get("Default", "")): value
        for parameter, value in {**values, **PLATFORM_SECRETS}.items()
    }


def _declared(template: dict[str, Any], wanted: Mapping[str, str]) -> dict[str, Any]:
    """The template's parameters, failing loudly when one the local stack sets is no longer there."""
    declared: dict[str, Any] = template.get("Parameters") or {}
    unknown = sorted(set(wanted) - set(declared))
    if unknown:
        raise ConfigError(
            f"template.yaml has no parameter(s) {', '.join(unknown)} for the local stack to set"
        )
    return declared
