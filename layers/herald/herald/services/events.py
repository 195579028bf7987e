"""Sending an event: checked against its type's schema, stored once, charged one job per subscription
that receives it, and handed to the fan-out queue in pages (``herald.services.fanout`` turns each
page into delivery jobs).

Per accepted event, 5 AWS calls after warm-up: 1 GetItem of the event type (its schema), 1 Query of
the tenant's subscriptions (who receives it: the answer's count and the fan-out's pages), 1
conditional UpdateItem of the usage counter (one request; one job per delivery), 1 conditional
PutItem of the event (the idempotency guard) and 1 SendMessageBatch per 10 pages of 100
subscriptions. If the fan-out queue refuses, the client gets 503 with the event id; the same request
again under its idempotency key queues the fan-out again, which writes only what is missing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from herald.domain.account import TenantContext
from herald.domain.breakers import BreakerState
from herald.domain.clock import epoch_seconds, iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.events import (
    Event,
    EventRequest,
    delivery_job_id,
    event_id_for,
    fanout_pages,
    pages_of,
)
from herald.domain.job_records import JobState
from herald.domain.jobs import Channel, compact_json
from herald.domain.plans import retention_end
from herald.observability import correlation_id, count, logger
from herald.services.accept import charge_or_refuse, idempotency_key_of, refund_quietly, storage_unavailable
from herald.services.outcomes import DuplicateRequest
from herald.services.ports.events import EventCatalog, EventStore, FanoutQueue
from herald.services.ports.tenants import Counters

if TYPE_CHECKING:
    from herald.services.auth import Credentials

# Deliveries an event's page shows at once (each costs a request and a status item read).
DELIVERIES_PER_PAGE = 50


class AcceptedEvent(msgspec.Struct, frozen=True):
    event_id: str
    type: str
    subscriptions: int


class Delivery(msgspec.Struct, frozen=True):
    """One subscription's delivery of an event: its job's state (None: not written yet)."""

    subscription_id: str
    url: str
    job_id: str
    state: JobState | None


class EventDetail(msgspec.Struct, frozen=True):
    event: Event
    deliveries: list[Delivery]
    # The subscription id the next page of deliveries starts after.
    next_cursor: str | None = None


class EventService:
    def __init__(
        self,
        *,
        authenticate: Callable[[Credentials], TenantContext],
        catalog: Callable[[], EventCatalog],
        events: EventStore,
        counters: Counters,
        fanout: FanoutQueue,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """``catalog``: built on the first event (its schema validator stays out of other paths)."""
        self._authenticate = authenticate
        self._catalog = catalog
        self._events = events
        self._counters = counters
        self._fanout = fanout
        self._clock = clock

    def send(
        self, caller: Credentials, request: EventRequest, header_key: str | None = None
    ) -> AcceptedEvent:
        tenant = self._authenticate(caller)
        key = idempotency_key_of(request.idempotency_key, header_key)
        self._catalog().checked(tenant.tenant_id, request.type, request.payload)
        now = self._clock()
        audience = self._audience(tenant.tenant_id, request)
        event = Event(
            event_id=event_id_for(tenant.tenant_id, key),
            tenant_id=tenant.tenant_id,
            type=request.type,
            payload=request.payload,
            created_at=iso(now),
            channels=request.channels,
            subscriptions=len(audience),
            page_ends=fanout_pages(audience),
            expires_at=epoch_seconds(retention_end(tenant.plan, now)),
        )
        charged = charge_or_refuse(self._counters, tenant, Channel.WEBHOOK, now, jobs=event.subscriptions)
        try:
            self._events.insert(event, _digest(request) if key else None)
        except DuplicateRequest as dup:
            refund_quietly(self._counters, tenant, Channel.WEBHOOK, charged, event.subscriptions)
            raise self._repeated(tenant, dup) from dup
        except DependencyError as exc:
            logger.error("event write failed", extra={"tenant_id": tenant.tenant_id, "reason": str(exc)})
            refund_quietly(self._counters, tenant, Channel.WEBHOOK, charged, event.subscriptions)
            raise storage_unavailable() from exc
        self._fan_out(tenant, event)
        logger.append_keys(event_id=event.event_id)
        count("EventAccepted", {})
        count("FanoutDeliveries", {}, value=event.subscriptions)
        return AcceptedEvent(event.event_id, event.type, event.subscriptions)

    def _audience(self, tenant_id: str, request: EventRequest) -> list[str]:
        try:
            pairs = self._events.subscriptions(tenant_id)
        except DependencyError as exc:
            logger.error("subscription read failed", extra={"tenant_id": tenant_id, "reason": str(exc)})
            raise storage_unavailable() from exc
        return [
            subscription.subscription_id
            for subscription, breaker in pairs
            if breaker.state is not BreakerState.DISABLED
            and subscription.receives(request.type, request.channels)
        ]

    def _fan_out(self, tenant: TenantContext, event: Event) -> None:
        if not event.page_ends:
            return
        try:
            self._fanout.enqueue_pages(pages_of(event, tenant.plan, correlation_id()))
        except DependencyError as exc:
            logger.error("fan-out enqueue failed", extra={"event_id": event.event_id, "reason": str(exc)})
            raise HeraldError(
                "The event was stored but its deliveries could not be queued; send the same request"
                " again with its idempotency key to queue them (nothing is delivered twice).",
                ErrorCode.QUEUE_UNAVAILABLE,
                extra={"eventId": event.event_id},
            ) from exc

    def _repeated(self, tenant: TenantContext, dup: DuplicateRequest) -> HeraldError:
        """A repeat of an accepted event: its fan-out is queued again (a crash may have stopped it
        before its pages were queued; a page run again writes only what is missing)."""
        if not dup.same_body:
            return HeraldError(
                "This idempotency key was already used with a different event.",
                ErrorCode.IDEMPOTENCY_KEY_REUSED,
            )
        stored = self._events.get(tenant.tenant_id, dup.job_id)
        if stored is not None:
            self._fan_out(tenant, stored)
        return HeraldError(
            "An event with this idempotency key was already accepted.",
            ErrorCode.DUPLICATE_REQUEST,
            extra={"eventId": dup.job_id},
        )

    def get(self, tenant_id: str, event_id: str, cursor: str | None = None) -> EventDetail:
        """The event and a page of its deliveries, by subscription id (those deleted since are not
        shown: their job ids come from the subscriptions that receive the event now)."""
        event = self._events.get(tenant_id, event_id)
        if event is None:
            raise HeraldError("No event with this id.", ErrorCode.EVENT_NOT_FOUND)
        candidates = sorted(
            (subscription for subscription, _ in self._events.subscriptions(tenant_id)),
            key=lambda subscription: subscription.subscription_id,
        )
        receiving = [
            subscription
            for subscription in candidates
            if subscription.audience_of(event) and (cursor is None or subscription.subscription_id > cursor)
        ]
        shown = receiving[:DELIVERIES_PER_PAGE]
        ids = {s.subscription_id: delivery_job_id(tenant_id, event_id, s.subscription_id) for s in shown}
        states = self._events.delivery_states(tenant_id, list(ids.values()))
        deliveries = [
            Delivery(s.subscription_id, s.url, ids[s.subscription_id], states.get(ids[s.subscription_id]))
            for s in shown
        ]
        more = len(receiving) > len(shown)
        return EventDetail(event, deliveries, shown[-1].subscription_id if more and shown else None)

    def listing(self, tenant_id: str, cursor: str | None, limit: int) -> tuple[list[Event], str | None]:
        try:
            return self._events.listing(tenant_id, cursor, limit)
        except ValueError as exc:
            raise HeraldError("This cursor is not one Herald handed out.", ErrorCode.INVALID_CURSOR) from exc


def _digest(request: EventRequest) -> bytes:
    """What tells a repeat of an idempotency key from a reuse: the event as sent, without its key."""
    document = {"type": request.type, "payload": dict(request.payload), "channels": list(request.channels)}
    return hashlib.sha256(compact_json(document)).digest()[:16]
