"""The answers of the subscription routes (imported with those routes only). A subscription's
signing secret is in two answers only: its creation's and its rotation's."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from herald.domain.breakers import BreakerState
from herald.domain.clock import iso
from herald.domain.subscriptions import SubscriptionState
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.breakers import Breaker
    from herald.domain.subscriptions import CreatedSubscription, SubscriptionView
    from herald.domain.subscriptions import TestDelivery as TestOutcome

# What a custom header's value reads as in every answer: the values are sealed, the names are not.
HIDDEN_VALUE = "••••"


def _at(epoch: int | None) -> str | None:
    return None if epoch is None else iso(datetime.fromtimestamp(epoch, UTC))


class SubscriptionBreaker(Answer):
    state: Annotated[
        BreakerState,
        Meta(
            description="open: its deliveries wait for the cool-down; disabled: they fail with endpoint_disabled"
        ),
    ]
    consecutive_failures: int
    opened_at: Annotated[Timestamp | None, Meta(description="When the current open stretch began")]
    open_until: Annotated[Timestamp | None, Meta(description="When the cool-down ends (a probe goes out)")]
    last_error: str | None

    @classmethod
    def of(cls, breaker: Breaker) -> SubscriptionBreaker:
        return cls(
            state=breaker.state,
            consecutive_failures=breaker.consecutive,
            opened_at=_at(breaker.opened_at),
            open_until=_at(breaker.open_until),
            last_error=breaker.last_error,
        )


class Subscription(Answer):
    id: Annotated[str, Meta(description="sub_ and 16 hex digits")]
    url: str
    event_types: list[str]
    channels: list[str]
    description: str | None
    rate_limit_per_second: Annotated[int | None, Meta(description="null: no limit of its own")]
    headers: Annotated[
        dict[str, str], Meta(description="The custom headers' names; their values are never shown")
    ]
    subscriber_id: str | None
    state: Annotated[
        SubscriptionState,
        Meta(
            description="enabled: delivered to; open: failing, deliveries wait; disabled: by hand or after days of failures"
        ),
    ]
    breaker: SubscriptionBreaker
    created_at: Timestamp
    updated_at: Timestamp

    @classmethod
    def of(cls, view: SubscriptionView) -> Subscription:
        subscription = view.subscription
        headers = subscription.headers
        return cls(
            id=subscription.subscription_id,
            url=subscription.url,
            event_types=list(subscription.event_types),
            channels=list(subscription.channels),
            description=subscription.description,
            rate_limit_per_second=subscription.rate_limit_per_second,
            headers=dict.fromkeys(headers.names, HIDDEN_VALUE) if headers else {},
            subscriber_id=subscription.subscriber_id,
            state=view.state,
            breaker=SubscriptionBreaker.of(view.breaker),
            created_at=subscription.created_at,
            updated_at=subscription.updated_at,
        )


class NewSubscription(Subscription):
    secret: Annotated[str, Meta(description="Its signing secret (whsec_…): shown in this answer only")]
    previous_valid_until: Annotated[
        Timestamp | None, Meta(description="After a rotation: until when the previous secret keeps signing")
    ]

    @classmethod
    def created(cls, created: CreatedSubscription) -> NewSubscription:
        shown = msgspec.structs.asdict(Subscription.of(created.view))
        return cls(**shown, secret=created.secret, previous_valid_until=created.previous_valid_until)


class TestDelivery(Answer):
    __test__ = False  # not a pytest class, whatever the name says

    event_id: Annotated[str, Meta(description="The test event's id (evt_test_…), also its webhook-id")]
    event_type: str
    ok: Annotated[bool, Meta(description="Whether the endpoint answered 2xx")]
    status_code: Annotated[int | None, Meta(description="The endpoint's HTTP status; null: no answer")]
    latency_ms: int | None
    response_excerpt: Annotated[str, Meta(description="The start of the answer's body")]
    error: Annotated[str | None, Meta(description="Why it failed, in a sentence; null when it went through")]

    @classmethod
    def of(cls, outcome: TestOutcome) -> TestDelivery:
        return cls(
            event_id=outcome.event_id,
            event_type=outcome.event_type,
            ok=outcome.ok,
            status_code=outcome.status_code,
            latency_ms=outcome.latency_ms,
            response_excerpt=outcome.response_excerpt,
            error=outcome.error,
        )
