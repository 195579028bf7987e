"""What every composition root starts from: the settings, the table binding and the AWS clients."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from herald.adapters.alert_topic import SnsAlertPublisher
from herald.adapters.aws_clients import AwsClients
from herald.adapters.providers.registry import ProviderEndpoints, ProviderRegistry
from herald.adapters.store.alert_counter import DynamoAlertCounter
from herald.adapters.store.table import bind
from herald.services.alerting import RateLimitedAlerts
from herald.settings import Settings, get_settings


@dataclass(frozen=True)
class Foundation:
    settings: Settings
    clients: AwsClients


@lru_cache(maxsize=1)
def foundation() -> Foundation:
    """Read the settings and bind the table once per process (at cold start)."""
    settings = get_settings()
    bind(
        settings.table_name,
        region=settings.region,
        endpoint=settings.dynamodb_endpoint,
        max_attempts=settings.aws_max_attempts,
    )
    return Foundation(settings, AwsClients(settings.region, settings.aws_max_attempts))


@lru_cache(maxsize=1)
def provider_registry() -> ProviderRegistry:
    """The process's email provider adapters (each module is imported on first use)."""
    settings = foundation().settings
    return ProviderRegistry(
        ProviderEndpoints(settings.sendgrid_base_url, settings.resend_base_url, settings.postmark_base_url),
        settings.platform_sender,
        foundation().clients.sesv2,
    )


@lru_cache(maxsize=1)
def job_alerts() -> RateLimitedAlerts:
    """The process's job alerts (its pause of a window over the limit lives as long as the container)."""
    base = foundation()
    return RateLimitedAlerts(
        DynamoAlertCounter(), SnsAlertPublisher(base.settings.alert_topic_arn, base.clients.sns)
    )


def reset() -> None:
    """Forget the process's settings and binding (tests that point it at another stack)."""
    get_settings.cache_clear()
    foundation.cache_clear()
    provider_registry.cache_clear()
    job_alerts.cache_clear()
