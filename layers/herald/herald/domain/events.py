"""Events and subscriptions: a tenant declares event types, its customers' endpoints subscribe to
them, and one event the tenant sends becomes one delivery job per subscribed endpoint.

A delivery is an ordinary webhook job (retried, broken, dead-lettered and recovered like any other)
whose id derives from the pair (event, subscription): the fan-out writes each job with a condition
that it does not exist yet, so a fan-out that crashes and runs again can neither lose a delivery nor
make a second one (``delivery_job_id``). Each subscription signs with its own secret, keeps its own
breaker (``herald.domain.breakers``, kind ``subscription``) and its own rate (``rate_slots``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from herald.domain.notifications import SealedHeaders
from herald.domain.secrets import SealedSecret

# Names like ``order.paid`` or ``invoice.payment_failed``: lower-case words joined by dots.
EVENT_TYPE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9][a-z0-9_-]*){0,7}")
MAX_EVENT_TYPE_NAME = 100
# A channel narrows who receives an event (a customer, a project): Svix's channel rules.
CHANNEL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
MAX_CHANNELS = 10
MAX_EVENT_TYPES = 500
# An event's deliveries are written one job each, so the cap bounds one fan-out's work (and the
# subscription partition a fan-out page reads).
MAX_SUBSCRIPTIONS = 5000
MAX_EVENT_TYPES_PER_SUBSCRIPTION = 100
# What one event's payload may weigh: it is copied into each delivery job, whose write units grow
# with it (1 KB per unit), and it travels in the queue message.
MAX_EVENT_PAYLOAD_BYTES = 64 * 1024
MIN_RATE_PER_SECOND = 1
MAX_RATE_PER_SECOND = 1000
# Subscriptions per fan-out message: each page is one message of the fan-out queue, written and
# queued by one worker invocation (its conditional puts run side by side).
FANOUT_PAGE_SIZE = 100

# Delivery job ids derive from (tenant, event, subscription) in this namespace: the same pair always
# names the same job, which the fan-out's conditional put refuses to write twice.
DELIVERY_NAMESPACE = uuid.UUID("5f1d1b64-8a0c-4c36-9a55-2f6e8d1c7b90")
# Event ids of requests with an idempotency key derive from tenant and key.
EVENT_NAMESPACE = uuid.UUID("0c8b4f7e-3a21-4d6b-8f0e-6b2d9a4c1e57")


class EventType(msgspec.Struct, frozen=True):
    """A kind of event the tenant sends, with the JSON Schema (2020-12) its payloads must meet."""

    name: str
    created_at: str
    updated_at: str
    description: str | None = None
    # The current schema (None: any JSON object is accepted); ``version`` counts its changes.
    schema: Mapping[str, Any] | None = None
    version: int = 1
    deprecated: bool = False
    # Archived: no new event of this type is accepted; subscriptions naming it keep their list.
    archived: bool = False


class SubscriptionSecrets(msgspec.Struct, frozen=True):
    """A subscription's signing secret, and during a rotation the previous one until it expires."""

    current: SealedSecret
    previous: SealedSecret | None = None
    previous_valid_until: str | None = None


class Subscription(msgspec.Struct, frozen=True):
    """An endpoint registered to receive some event types (optionally only some channels)."""

    subscription_id: str
    url: str
    event_types: tuple[str, ...]
    secrets: SubscriptionSecrets
    created_at: str
    updated_at: str
    description: str | None = None
    # Empty: every event of its types; else only events sent to one of these channels.
    channels: tuple[str, ...] = ()
    rate_limit_per_second: int | None = None
    # Custom headers sent with each delivery, sealed like a webhook job's.
    headers: SealedHeaders | None = None
    # The tenant's own id for the customer who owns the endpoint (portal links are scoped to it).
    subscriber_id: str | None = None
    # Bumped by every change: a change conditioned on it fails if another came first.
    version: int = 1

    def receives(self, event_type: str, channels: Sequence[str]) -> bool:
        """Whether an event of ``event_type`` sent to ``channels`` is for this subscription: its
        type is subscribed, and either the subscription names no channel or they share one."""
        if event_type not in self.event_types:
            return False
        return not self.channels or not channels or bool(set(self.channels) & set(channels))

    def audience_of(self, event: Event) -> bool:
        """Whether ``event`` is for this subscription: a subscription created after the event was
        accepted is not (so a fan-out run again later reaches the same subscriptions)."""
        return self.created_at <= event.created_at and self.receives(event.type, event.channels)


class EventRequest(msgspec.Struct, frozen=True):
    """An event as a client sends it."""

    type: str
    payload: Mapping[str, Any]
    channels: tuple[str, ...] = ()
    idempotency_key: str | None = None


class Event(msgspec.Struct, frozen=True):
    """One event the tenant sent: stored once, delivered to each subscription that receives it."""

    event_id: str
    tenant_id: str
    type: str
    payload: Mapping[str, Any]
    created_at: str
    channels: tuple[str, ...] = ()
    # The subscriptions it was fanned out to, counted at acceptance.
    subscriptions: int = 0
    # The pages of the fan-out: each one's last subscription id (``FanoutPage``).
    page_ends: tuple[str, ...] = ()
    # Retention end (epoch seconds), as the tenant's jobs.
    expires_at: int | None = None


class FanoutPage(msgspec.Struct, frozen=True):
    """One message of the fan-out queue: the subscriptions with ids in (after, last] receive the
    event. A page run twice writes nothing twice (``delivery_job_id``)."""

    tenant_id: str
    event_id: str
    last: str
    plan: str
    after: str | None = None
    correlation_id: str | None = None


def delivery_job_id(tenant_id: str, event_id: str, subscription_id: str) -> str:
    return str(uuid.uuid5(DELIVERY_NAMESPACE, f"{tenant_id}\n{event_id}\n{subscription_id}"))


def event_id_for(tenant_id: str, idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return f"evt_{uuid.uuid4().hex}"
    name = f"{tenant_id}\n{idempotency_key}"
    return f"evt_{uuid.uuid5(EVENT_NAMESPACE, name).hex}"


def delivery_body(event: Event) -> dict[str, Any]:
    """What each subscription receives: the Standard Webhooks payload shape (type, timestamp, data),
    with the event's id, so a receiver can tell one event's deliveries from another's."""
    return {
        "id": event.event_id,
        "type": event.type,
        "timestamp": event.created_at,
        "data": dict(event.payload),
    }


def fanout_pages(subscription_ids: Sequence[str], size: int = FANOUT_PAGE_SIZE) -> tuple[str, ...]:
    """The last id of each page of ``size`` subscriptions (ids sorted as the table sorts them)."""
    ordered = sorted(subscription_ids)
    return tuple(ordered[min(start + size, len(ordered)) - 1] for start in range(0, len(ordered), size))


def pages_of(event: Event, plan: str, correlation_id: str | None) -> list[FanoutPage]:
    """The fan-out messages of ``event``: page k covers the ids after page k-1's last one."""
    befores: list[str | None] = [None, *event.page_ends[:-1]]
    return [
        FanoutPage(event.tenant_id, event.event_id, last, plan, after, correlation_id)
        for after, last in zip(befores, event.page_ends, strict=True)
    ]
