"""Composition root of the worker functions: one delivery engine per channel, built once per container."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.dead_letters import DeadLetters, SqsDeadLetters
from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.delivery_store import DeliveryStore
from herald.adapters.store.models import JobState
from herald.adapters.store.table import ensure_bound
from herald.adapters.store.tenant_store import TenantStore
from herald.adapters.vault import default_vault
from herald.domain.attempts import AttemptOutcome
from herald.domain.jobs import JobMessage
from herald.services.delivery import DeliveryEngine
from herald.services.tenant_directory import TenantDirectory
from herald.settings import Settings, get_settings


@dataclass(frozen=True)
class WorkerServices:
    engine: DeliveryEngine
    dead_letters: DeadLetters
    key_cache: DataKeyCache | None


def _parts() -> tuple[Settings, DeliveryStore, TenantDirectory, SqsJobQueue, SqsDeadLetters]:
    settings = get_settings()
    ensure_bound()
    directory = TenantDirectory(TenantStore(), default_vault())
    return settings, DeliveryStore(), directory, SqsJobQueue(settings), SqsDeadLetters(settings.dlq_url)


@lru_cache(maxsize=1)
def email_worker() -> WorkerServices:
    # Imported here so each worker's cold start loads only its own channel (providers vs. webhooks).
    from herald.services.email_attempt import EmailAttempt

    settings, store, directory, queue, dead_letters = _parts()
    emails = EmailAttempt(settings, directory, store)

    def attempt(message: JobMessage, payload: dict[str, Any], state: JobState) -> AttemptOutcome:
        return emails.run(
            message.job_id, message.tenant_id, message.plan, payload, state.skip_providers or []
        )

    return WorkerServices(
        DeliveryEngine(settings, store=store, queue=queue, dead_letters=dead_letters, attempt=attempt),
        dead_letters,
        default_vault().cache,
    )


@lru_cache(maxsize=1)
def webhook_worker() -> WorkerServices:
    from herald.services.webhook_attempt import WebhookAttempt

    settings, store, directory, queue, dead_letters = _parts()
    webhooks = WebhookAttempt(settings, directory)

    def attempt(message: JobMessage, payload: dict[str, Any], _state: JobState) -> AttemptOutcome:
        return webhooks.run(message.job_id, message.tenant_id, payload)

    return WorkerServices(
        DeliveryEngine(settings, store=store, queue=queue, dead_letters=dead_letters, attempt=attempt),
        dead_letters,
        default_vault().cache,
    )
