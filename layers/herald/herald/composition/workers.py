"""Composition root of the worker functions: one delivery engine per channel, built once per container."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

from msgspec.structs import replace

from herald import USER_AGENT
from herald.adapters.dead_letters import SqsDeadLetters
from herald.adapters.queueing import SqsJobQueue, SqsMessageReturns, decode_message
from herald.adapters.store.breaker_store import DynamoBreakers
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.batch.sqs import Worker
from herald.composition.common import foundation, job_alerts, once, provider_registry, vault
from herald.domain.breakers import ENDPOINT_POLICY, PROVIDER_POLICY, BreakerPolicy
from herald.services.delivery import ChannelAttempt, DeliveryEngine, DeliveryPolicy
from herald.services.health import BreakerBoard, EndpointHealth, ProviderHealth
from herald.services.tenant_directory import TenantDirectory

if TYPE_CHECKING:
    from herald.services.pacing import Pacer
    from herald.services.unsubscribes import UnsubscribeGate

# How much time a record needs left to start: a full pass over every vendor timing out (the email
# worker), or one webhook exchange (15 s), each with room for the job's own writes. The template's
# worker timeouts leave more than this (tests/infrastructure).
WRITES_SECONDS = 5
WEBHOOK_RECORD_BUDGET_MILLIS = 45_000


def email_record_budget_millis() -> int:
    # Imported here: the webhook worker never loads the provider transport.
    from herald.adapters.providers.transport import FULL_PASS_SECONDS

    return math.ceil(FULL_PASS_SECONDS + WRITES_SECONDS) * 1000


def _worker(attempt: ChannelAttempt, record_budget_millis: int, pacer: Pacer | None = None) -> Worker:
    base = foundation()
    settings = base.settings
    dead_letters = SqsDeadLetters(settings.dlq_url, base.clients.sqs)
    engine = DeliveryEngine(
        DeliveryPolicy(settings.max_attempts, settings.retry_base_delay_seconds),
        store=DynamoDeliveryStore(base.table),
        queue=SqsJobQueue(settings.queue_urls, base.clients.sqs, settings.ordered_queue_urls),
        dead_letters=dead_letters,
        alerts=job_alerts(),
        attempt=attempt,
        pacer=pacer,
    )
    returns = SqsMessageReturns(
        [*settings.queue_urls.values(), *settings.ordered_queue_urls.values()], base.clients.sqs
    )
    return Worker(engine, dead_letters, returns, decode_message, record_budget_millis, vault().cache)


def _directory() -> TenantDirectory:
    return TenantDirectory(DynamoTenantStore(foundation().table), vault())


def _board(policy: BreakerPolicy) -> BreakerBoard:
    """The breakers with the template's cool-down (and, for endpoints, time to disable)."""
    base = foundation()
    settings = base.settings
    tuned = replace(policy, base_cooldown_seconds=settings.breaker_cooldown_seconds)
    if tuned.disable_after_seconds is not None:
        tuned = replace(tuned, disable_after_seconds=settings.endpoint_disable_after_seconds)
    return BreakerBoard(DynamoBreakers(base.table), tuned, enabled=settings.circuit_breakers)


def _email_worker() -> Worker:
    # Imported here so each worker's cold start loads only its own channel (providers vs. webhooks).
    from herald.adapters.attachment_store import S3AttachmentStore
    from herald.adapters.store.suppression_store import DynamoSuppressions
    from herald.services.email_attempt import EmailAttempt

    settings = foundation().settings
    return _worker(
        EmailAttempt(
            directory=_directory(),
            suppressions=DynamoSuppressions(foundation().table),
            unsubscribes=_unsubscribe_gate(),
            attachments=S3AttachmentStore(
                foundation().clients.s3, settings.attachments_bucket, settings.kms_key_id
            ),
            providers=provider_registry().email,
            platform_sender=foundation().settings.platform_sender,
            health=ProviderHealth(_board(PROVIDER_POLICY)),
        ),
        email_record_budget_millis(),
    )


def _unsubscribe_gate() -> UnsubscribeGate:
    from herald.adapters.platform_secrets import SsmSecret
    from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes
    from herald.services.unsubscribes import UnsubscribeGate, UnsubscribeLinks
    from herald.settings import UnsubscribeLinkSettings

    base, settings = foundation(), UnsubscribeLinkSettings.from_env()
    links = UnsubscribeLinks(SsmSecret(settings.key_parameter, base.clients.ssm), settings.origin)
    return UnsubscribeGate(DynamoUnsubscribes(base.table), links)


def email_worker() -> Worker:
    return once(_email_worker)


def _webhook_worker() -> Worker:
    from herald.adapters.platform_mail import SesPlatformMail
    from herald.adapters.store.event_store import DynamoEvents
    from herald.adapters.store.rate_store import DynamoRateSlots
    from herald.adapters.webhook_sender import send_webhook
    from herald.services.pacing import Pacer
    from herald.services.webhook_attempt import WebhookAttempt

    base = foundation()
    origin = base.settings.local_webhook_origin
    sender = partial(send_webhook, local_origin=origin, user_agent=USER_AGENT)
    mail = SesPlatformMail(base.clients.sesv2, base.settings.platform_sender)
    health = EndpointHealth(_board(ENDPOINT_POLICY), mail)
    return _worker(
        WebhookAttempt(directory=_directory(), sender=sender, health=health, events=DynamoEvents(base.table)),
        WEBHOOK_RECORD_BUDGET_MILLIS,
        Pacer(DynamoRateSlots(base.table)),
    )


def webhook_worker() -> Worker:
    return once(_webhook_worker)
