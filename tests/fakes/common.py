"""Settings and clocks for unit tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from herald.domain.access import SCOPE_ABILITIES, Actor, ActorKind, Grant, Scope
from herald.domain.jobs import Channel, QueuePriority
from herald.domain.vendors import VENDOR_REGIONS
from herald.settings import Settings

CREATED_AT = "2025-01-01T00:00:00.000Z"
NOW = datetime(2026, 11, 30, 12, 0, 30, tzinfo=UTC)


def settings_for_tests(**overrides: Any) -> Settings:
    """Settings as the template gives the functions, with fake queue URLs (nothing is dialled)."""
    values: dict[str, Any] = {
        "table_name": "herald-test",
        "kms_key_id": "alias/herald-test",
        "queue_urls": {
            (channel, priority): f"https://sqs.test/{channel.value}-{priority.value}"
            for channel in Channel
            for priority in QueuePriority
        },
        "ordered_queue_urls": {
            channel: f"https://sqs.test/{channel.value}-ordered.fifo" for channel in Channel
        },
        "dlq_url": "https://sqs.test/dlq",
        "fanout_queue_url": "https://sqs.test/fanout",
        "alert_topic_arn": "arn:aws:sns:us-east-1:123456789012:herald-test-alerts",
        "region": "us-east-1",
        "stage": "test",
        "max_attempts": 3,
        "retry_base_delay_seconds": 30,
        "provider_base_urls": {
            region.base_url_parameter: f"https://{name.slug}-{region.name}.test"
            for name, region in VENDOR_REGIONS
        },
        "platform_sender": "notifications@herald.test",
        "attachments_bucket": "herald-test-attachments",
        "circuit_breakers": True,
        "breaker_cooldown_seconds": 30,
        "endpoint_disable_after_seconds": 432000,
        **overrides,
    }
    return Settings(**values)


class ManualClock:
    """Epoch seconds that only move when a test says so."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def settings_environment(**overrides: str) -> dict[str, str]:
    """The environment variables that make ``settings_for_tests()`` (as the template sets them)."""
    settings = settings_for_tests()
    env = {
        "HERALD_TABLE": settings.table_name,
        "HERALD_KMS_KEY_ID": settings.kms_key_id,
        "HERALD_DLQ": settings.dlq_url,
        "HERALD_QUEUE_FANOUT": settings.fanout_queue_url,
        "HERALD_ALERT_TOPIC": settings.alert_topic_arn,
        "AWS_DEFAULT_REGION": settings.region,
        "HERALD_STAGE": settings.stage,
        "HERALD_MAX_ATTEMPTS": str(settings.max_attempts),
        "HERALD_RETRY_BASE_DELAY_SECONDS": str(settings.retry_base_delay_seconds),
        **{
            region.setting: settings.provider_base_urls[region.base_url_parameter]
            for _, region in VENDOR_REGIONS
        },
        "HERALD_PLATFORM_SENDER": settings.platform_sender,
        "HERALD_ATTACHMENTS_BUCKET": settings.attachments_bucket,
        "HERALD_CIRCUIT_BREAKERS": "Enabled" if settings.circuit_breakers else "Disabled",
        "HERALD_BREAKER_COOLDOWN_SECONDS": str(settings.breaker_cooldown_seconds),
        "HERALD_ENDPOINT_DISABLE_AFTER_SECONDS": str(settings.endpoint_disable_after_seconds),
        **{
            f"HERALD_QUEUE_{channel.value.upper()}_{priority.value.upper()}": url
            for (channel, priority), url in settings.queue_urls.items()
        },
        **{
            f"HERALD_QUEUE_{channel.value.upper()}_ORDERED": url
            for channel, url in settings.ordered_queue_urls.items()
        },
    }
    return {**env, **overrides}


def full_grant(name: str = "Default key") -> Grant:
    """What a tenant's full key may do (the caller most tests act as)."""
    return Grant(Actor(ActorKind.KEY, "key_test", name, "203.0.113.9"), SCOPE_ABILITIES[Scope.FULL])


# The operator as the CLI names them in the audit log.
OPERATOR = Actor(ActorKind.OPERATOR, "ops", "operator ops")
