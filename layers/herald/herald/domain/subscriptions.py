"""What the subscription routes (and the portal) hand the subscription service and get back: a new
subscription's draft, a change of one, a subscription with its breaker, the clear secret shown once,
and the outcome of a test send. The subscription itself is ``herald.domain.events.Subscription``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum

import msgspec

from herald.domain.breakers import Breaker, BreakerState
from herald.domain.events import Subscription

MAX_DESCRIPTION = 200
# A subscriber id is the tenant's own name for one of its customers (portal links are scoped to it).
SUBSCRIBER_ID = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
# One test send per subscription in this many seconds: each test is a synchronous outbound request
# of up to 15 seconds made on the caller's behalf, so it is not a free way to hammer a receiver.
TEST_INTERVAL_SECONDS = 10
# A test event's id: a receiver can tell it from a real event's (``evt_…``) at a glance.
TEST_EVENT_PREFIX = "evt_test"


def delivery_term(subscription_id: str) -> str:
    """The job search term of a subscription's delivery jobs (their gsi4 entry): its history."""
    return f"subscription:{subscription_id}"


class SubscriptionState(StrEnum):
    """What the console and the API say of a subscription, from its breaker."""

    ENABLED = "enabled"
    OPEN = "open"
    DISABLED = "disabled"


_STATES = {
    BreakerState.CLOSED: SubscriptionState.ENABLED,
    BreakerState.OPEN: SubscriptionState.OPEN,
    BreakerState.DISABLED: SubscriptionState.DISABLED,
}


class SubscriptionDraft(msgspec.Struct, frozen=True):
    """A subscription to create; ``headers`` in clear (sealed before they are stored)."""

    url: str
    event_types: tuple[str, ...]
    description: str | None = None
    channels: tuple[str, ...] = ()
    rate_limit_per_second: int | None = None
    headers: Mapping[str, str] | None = None
    subscriber_id: str | None = None


class SubscriptionChange(msgspec.Struct, frozen=True):
    """A PATCH: ``UNSET`` leaves a field as it is; None clears a field that may be empty."""

    url: str | msgspec.UnsetType = msgspec.UNSET
    event_types: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET
    channels: tuple[str, ...] | msgspec.UnsetType = msgspec.UNSET
    description: str | None | msgspec.UnsetType = msgspec.UNSET
    rate_limit_per_second: int | None | msgspec.UnsetType = msgspec.UNSET
    headers: Mapping[str, str] | None | msgspec.UnsetType = msgspec.UNSET


class SubscriptionView(msgspec.Struct, frozen=True):
    """A subscription with its breaker (a fresh closed one where none is stored yet)."""

    subscription: Subscription
    breaker: Breaker

    @property
    def state(self) -> SubscriptionState:
        return _STATES[self.breaker.state]


class CreatedSubscription(msgspec.Struct, frozen=True):
    """A subscription with its signing secret in clear: the one answer that shows it."""

    view: SubscriptionView
    secret: str
    # During a rotation: until when the previous secret keeps signing (ISO-8601 UTC).
    previous_valid_until: str | None = None

    def __repr__(self) -> str:
        # The clear secret stays out of logs and tracebacks.
        return f"CreatedSubscription({self.view.subscription.subscription_id})"


class TestDelivery(msgspec.Struct, frozen=True):
    """How one test send went: what the receiver answered, or why nothing was answered."""

    __test__ = False  # not a pytest class, whatever the name says

    event_id: str
    event_type: str
    ok: bool
    status_code: int | None
    latency_ms: int | None
    response_excerpt: str
    error: str | None
