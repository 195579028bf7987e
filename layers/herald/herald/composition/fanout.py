"""Composition root of the FanoutFunction: an event's pages into delivery jobs."""

from __future__ import annotations

from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.event_store import DynamoEvents
from herald.adapters.store.job_store import DynamoJobStore
from herald.composition.common import foundation, once
from herald.services.fanout import FanoutWorker


def _fanout_worker() -> FanoutWorker:
    base = foundation()
    settings = base.settings
    return FanoutWorker(
        events=DynamoEvents(base.table),
        jobs=DynamoJobStore(base.table, settings.max_attempts),
        queue=SqsJobQueue(settings.queue_urls, base.clients.sqs),
        max_attempts=settings.max_attempts,
    )


def fanout_worker() -> FanoutWorker:
    return once(_fanout_worker)
