"""Data access for events: the event written once, the subscriptions a fan-out reads, and the
delivery states an event's page shows.

DynamoDB calls per operation (measured by the benchmark):
- insert: 1 conditional PutItem of the event (its id derives from the idempotency key, so the put is
  the idempotency guard); a duplicate adds 1 consistent GetItem (the same request, or another?);
- audience (at accept) and page (per fan-out message): 1 Query of the tenant's subscription
  partition (subscriptions and their breakers; a page reads only its range of ids), paged by
  DynamoDB at 1 MB;
- get: 1 GetItem; listing: 1 Query of gsi1;
- deliveries: 1 BatchGetItem per 50 deliveries (request and status item of each).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.job_items import state_of
from herald.adapters.store.models import (
    EVENT_SK,
    JOB_SK,
    STATUS_SK,
    SUBSCRIPTION_BREAKER_SUFFIX,
    EventItem,
    HeraldItem,
    JobItem,
    JobStatusItem,
    event_pk,
    events_gsi_pk,
    job_ids,
    job_pk,
    job_sort_key,
    subscriptions_pk,
)
from herald.adapters.store.subscription_items import with_breakers
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.breakers import Breaker
from herald.domain.errors import DependencyError
from herald.domain.events import Event, Subscription
from herald.domain.job_records import JobState
from herald.services.outcomes import DuplicateRequest

_EVENT_SORT_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#evt_[0-9a-f]{32}$")
# Job keys per BatchGetItem: two items (request and status) per delivery, 100 keys per call.
_DELIVERIES_PER_BATCH = 50


class DynamoEvents:
    def __init__(self, table: Table) -> None:
        self._table = table

    def insert(self, event: Event, digest: bytes | None) -> None:
        item = self._table[EventItem](
            event_pk(event.tenant_id, event.event_id),
            EVENT_SK,
            type=event.type,
            payload=dict(event.payload),
            channels=list(event.channels) or None,
            subscriptions=event.subscriptions,
            page_ends=list(event.page_ends) or None,
            body_digest=digest,
            expires_at=event.expires_at,
            gsi1pk=events_gsi_pk(event.tenant_id),
            gsi1sk=job_sort_key(event.created_at, event.event_id),
        )
        try:
            with conditional("event write"):
                item.save(condition=EventItem.pk.does_not_exist())
        except ConditionFailed as exc:
            raise self._duplicate(event, digest) from exc

    def _duplicate(self, event: Event, digest: bytes | None) -> Exception:
        if digest is None:
            return DependencyError("event write failed: event id collision")
        with translated("event read"):
            try:
                stored: EventItem = self._table[EventItem].get(
                    event_pk(event.tenant_id, event.event_id), EVENT_SK, consistent_read=True
                )
            except DoesNotExist:
                return DependencyError("event write failed: concurrent expiry")
        return DuplicateRequest(event.event_id, stored.body_digest == digest)

    def get(self, tenant_id: str, event_id: str) -> Event | None:
        with translated("event read"):
            try:
                item: EventItem = self._table[EventItem].get(
                    event_pk(tenant_id, event_id), EVENT_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return _event_from(tenant_id, item)

    def listing(self, tenant_id: str, cursor: str | None, limit: int) -> tuple[list[Event], str | None]:
        """Newest first; ``cursor``: the sort key of the last event of the previous page."""
        if cursor is not None and not _EVENT_SORT_KEY.match(cursor):
            raise ValueError("not a cursor")
        condition = HeraldItem.gsi1sk < cursor if cursor else None
        with translated("event read"):
            query = self._table.item.by_tenant.query(
                events_gsi_pk(tenant_id), condition, scan_index_forward=False, limit=limit
            )
            items = [item for item in query if isinstance(item, EventItem)]
            # The index projects a few attributes (template.yaml), not an event's count or
            # channels: the page's events are read whole, by key (1 BatchGetItem).
            whole = {
                item.pk: item
                for item in self._table[EventItem].batch_get([(item.pk, item.sk) for item in items])
            }
        events = [_event_from(tenant_id, whole[item.pk]) for item in items if item.pk in whole]
        more = len(items) == limit and query.last_evaluated_key is not None
        return events, (str(items[-1].gsi1sk) if more else None)

    def subscriptions(self, tenant_id: str) -> list[tuple[Subscription, Breaker]]:
        """Every subscription of the tenant with its breaker (1 Query, paged at 1 MB)."""
        with translated("subscription read"):
            return with_breakers(
                tenant_id, self._table.item.query(subscriptions_pk(tenant_id), consistent_read=True)
            )

    def page(self, tenant_id: str, after: str | None, last: str) -> list[tuple[Subscription, Breaker]]:
        """The subscriptions with ids in (after, last], with their breakers (1 Query of the range)."""
        upper = f"{last}{SUBSCRIPTION_BREAKER_SUFFIX}"
        # "<id>$" sorts after "<id>#BREAKER": the page starts past the previous page's last pair.
        key_condition = HeraldItem.sk.between(f"{after}$", upper) if after else HeraldItem.sk <= upper
        with translated("subscription read"):
            items = self._table.item.query(subscriptions_pk(tenant_id), key_condition, consistent_read=True)
            return [
                pair
                for pair in with_breakers(tenant_id, items)
                if after is None or pair[0].subscription_id > after
            ]

    def delivery_states(self, tenant_id: str, job_ids_wanted: Sequence[str]) -> dict[str, JobState]:
        """The state of each delivery job that exists, by job id."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(job_ids_wanted), _DELIVERIES_PER_BATCH):
            chunk = job_ids_wanted[start : start + _DELIVERIES_PER_BATCH]
            keys = [(job_pk(tenant_id, job_id), sk) for job_id in chunk for sk in (JOB_SK, STATUS_SK)]
            with translated("job table read"):
                for item in self._table.item.batch_get(keys, consistent_read=True):
                    found.setdefault(job_ids(item.pk)[1], {})[item.sk] = item
        states: dict[str, JobState] = {}
        for job_id, items in found.items():
            job, status = items.get(JOB_SK), items.get(STATUS_SK)
            state = state_of(
                job if isinstance(job, JobItem) else None,
                status if isinstance(status, JobStatusItem) else None,
            )
            if state is not None:
                states[job_id] = state
        return states


def _event_from(tenant_id: str, item: EventItem) -> Event:
    return Event(
        event_id=job_ids(item.pk)[1],
        tenant_id=tenant_id,
        type=item.type,
        payload=item.payload,
        created_at=item.created_at,
        channels=tuple(item.channels or ()),
        subscriptions=int(item.subscriptions),
        page_ends=tuple(item.page_ends or ()),
        expires_at=int(item.expires_at) if item.expires_at is not None else None,
    )
