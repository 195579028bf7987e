"""Composition root of the DispatcherFunction."""

from __future__ import annotations

from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.schedule_store import DynamoSchedules
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, once
from herald.services.dispatcher import Dispatcher


def _dispatcher() -> Dispatcher:
    base = foundation()
    return Dispatcher(
        DynamoSchedules(base.table),
        SqsJobQueue(base.settings.queue_urls, base.clients.sqs, base.settings.ordered_queue_urls),
        DynamoTenantStore(base.table),
    )


def dispatcher() -> Dispatcher:
    return once(_dispatcher)
