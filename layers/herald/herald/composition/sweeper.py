"""Composition root of the SweeperFunction."""

from __future__ import annotations

from datetime import timedelta

from herald.adapters.dead_letters import SqsDeadLetters
from herald.adapters.queueing import SqsJobQueue, SqsQueueDepths
from herald.adapters.store.sweep_store import DynamoSweepStore
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, job_alerts, once
from herald.services.sweeper import Sweeper, SweepPolicy
from herald.settings import SweepSettings


def _sweeper() -> Sweeper:
    base = foundation()
    settings, sweep = base.settings, SweepSettings.from_env()
    policy = SweepPolicy(
        stuck_after=timedelta(seconds=sweep.stuck_job_seconds), window=timedelta(hours=sweep.window_hours)
    )
    return Sweeper(
        policy,
        store=DynamoSweepStore(base.table),
        tenants=DynamoTenantStore(base.table),
        queue=SqsJobQueue(settings.queue_urls, base.clients.sqs, settings.ordered_queue_urls),
        depths=SqsQueueDepths(base.clients.sqs),
        queue_urls=settings.queue_urls,
        ordered_queue_urls=settings.ordered_queue_urls,
        dead_letters=SqsDeadLetters(settings.dlq_url, base.clients.sqs),
        alerts=job_alerts(),
    )


def sweeper() -> Sweeper:
    return once(_sweeper)
