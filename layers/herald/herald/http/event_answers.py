"""The answers of the event routes (imported with those routes only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from msgspec import Meta

from herald.domain.jobs import JobStatus
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.events import Event
    from herald.services import events


class AcceptedEvent(Answer):
    event_id: str
    type: str
    subscriptions: Annotated[int, Meta(description="The subscriptions it is delivered to, one job each")]

    @classmethod
    def of(cls, accepted: events.AcceptedEvent) -> AcceptedEvent:
        return cls(event_id=accepted.event_id, type=accepted.type, subscriptions=accepted.subscriptions)


class EventSummary(Answer):
    id: str
    type: str
    channels: list[str]
    subscriptions: int
    created_at: Timestamp

    @classmethod
    def of(cls, event: Event) -> EventSummary:
        return cls(
            id=event.event_id,
            type=event.type,
            channels=list(event.channels),
            subscriptions=event.subscriptions,
            created_at=event.created_at,
        )


class EventPage(Answer):
    data: list[EventSummary]
    next_cursor: Annotated[str | None, Meta(description="Pass as cursor for older events; null: no more")]


class EventDelivery(Answer):
    subscription_id: str
    url: str
    job_id: Annotated[str, Meta(description="The delivery's webhook job (GET /notifications/jobs/{id})")]
    status: Annotated[
        JobStatus | None, Meta(description="null: the fan-out has not written this delivery yet")
    ]
    attempts: int
    last_error: str | None
    response_status: Annotated[int | None, Meta(description="The endpoint's answer to the last attempt")]
    completed_at: Timestamp | None

    @classmethod
    def of(cls, delivery: events.Delivery) -> EventDelivery:
        state = delivery.state
        last = state.delivery_logs[-1] if state is not None and state.delivery_logs else None
        return cls(
            subscription_id=delivery.subscription_id,
            url=delivery.url,
            job_id=delivery.job_id,
            status=state.status if state is not None else None,
            attempts=state.attempts if state is not None else 0,
            last_error=state.error_message if state is not None else None,
            response_status=last.response_status if last is not None else None,
            completed_at=state.completed_at if state is not None else None,
        )


class EventDocument(Answer):
    id: str
    type: str
    payload: dict[str, Any]
    channels: list[str]
    subscriptions: int
    created_at: Timestamp
    deliveries: Annotated[list[EventDelivery], Meta(description="One page, by subscription id")]
    next_cursor: Annotated[str | None, Meta(description="Pass as cursor for the next deliveries")]

    @classmethod
    def of(cls, detail: events.EventDetail) -> EventDocument:
        event = detail.event
        return cls(
            id=event.event_id,
            type=event.type,
            payload=dict(event.payload),
            channels=list(event.channels),
            subscriptions=event.subscriptions,
            created_at=event.created_at,
            deliveries=[EventDelivery.of(delivery) for delivery in detail.deliveries],
            next_cursor=detail.next_cursor,
        )
