"""What every composition root starts from: the settings, the AWS clients and the table, and the
pieces several functions share (provider adapters, job alerts, the vault).

What a warm Lambda container keeps between invocations is one of each thing a composition root
builds, made on first use (``once``). Everything lives in one registry, so ``reset`` makes the next
use a cold start in a single call (the tests and the operator CLI, which point one process at one
stack after another)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from herald.adapters.aws_clients import AwsClients
from herald.adapters.store.table import Table, TableAddress
from herald.settings import OriginSettings, Settings

if TYPE_CHECKING:
    from herald.adapters.providers.registry import ProviderRegistry
    from herald.adapters.vault import Vault
    from herald.domain.secrets import Purpose, SealedSecret
    from herald.services.alerting import RateLimitedAlerts


T = TypeVar("T")

_built: dict[tuple[Callable[..., Any], tuple[Hashable, ...]], Any] = {}
# Reentrant: building one thing builds what it stands on (the API's services, the foundation).
_lock = threading.RLock()


def once(build: Callable[..., T], *args: Hashable) -> T:
    """``build(*args)``, made the first time it is asked for in this process and reused after."""
    key = (build, args)
    with _lock:
        if key not in _built:
            _built[key] = build(*args)
        built: T = _built[key]
        return built


def reset() -> None:
    """Forget everything built: the next use builds anew from the environment."""
    with _lock:
        _built.clear()


class Foundation(msgspec.Struct, frozen=True):
    settings: Settings
    clients: AwsClients
    table: Table

    @classmethod
    def from_environment(cls) -> Foundation:
        """The settings the template gives this function, validated at cold start."""
        settings = Settings.from_env()
        address = TableAddress(
            settings.table_name,
            region=settings.region,
            endpoint=settings.dynamodb_endpoint,
            max_attempts=settings.aws_max_attempts,
        )
        return cls(settings, AwsClients(settings.region, settings.aws_max_attempts), Table(address))


def foundation() -> Foundation:
    return once(Foundation.from_environment)


def public_origin() -> str | None:
    """The template's PublicOrigin, for the functions given it (ApiFunction, ConsoleFunction)."""
    return once(OriginSettings.from_env).public_origin


# What only some functions need is imported on first use, so the others' cold start skips it.


def _provider_registry() -> ProviderRegistry:
    from herald.adapters.providers.registry import ProviderRegistry

    base = foundation()
    settings = base.settings
    return ProviderRegistry(settings.provider_base_urls, settings.platform_sender, base.clients.sesv2)


def provider_registry() -> ProviderRegistry:
    """The process's email provider adapters (each module is imported on first use)."""
    return once(_provider_registry)


def _job_alerts() -> RateLimitedAlerts:
    from herald.adapters.alert_topic import SnsAlertPublisher
    from herald.adapters.store.alert_counter import DynamoAlertCounter
    from herald.services.alerting import RateLimitedAlerts

    base = foundation()
    return RateLimitedAlerts(
        DynamoAlertCounter(base.table), SnsAlertPublisher(base.settings.alert_topic_arn, base.clients.sns)
    )


def job_alerts() -> RateLimitedAlerts:
    """The process's job alerts (its pause of a window over the limit lives as long as the container)."""
    return once(_job_alerts)


def _vault() -> Vault:
    from herald.adapters.data_key_cache import DataKeyCache
    from herald.adapters.vault import KmsKeyManager, Vault

    base = foundation()
    return Vault(KmsKeyManager(base.settings.kms_key_id, base.clients.kms()), DataKeyCache())


def vault() -> Vault:
    """The process's vault: a warm container reuses its data key cache across invocations."""
    return once(_vault)


class VaultOnFirstUse:
    """The process's vault where only some requests need one (the API seals a webhook's headers and
    opens them for its job document): built, with its imports, by the first of those."""

    def seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedSecret:
        return vault().seal(tenant_id, purpose, plaintext)

    def open(self, tenant_id: str, purpose: Purpose, sealed: SealedSecret) -> str:
        return vault().open(tenant_id, purpose, sealed)
