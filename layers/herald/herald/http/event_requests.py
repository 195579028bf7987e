"""The request body of an event (imported with the event routes only)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field

from herald.domain.events import (
    CHANNEL_NAME,
    EVENT_TYPE_NAME,
    MAX_CHANNELS,
    MAX_EVENT_PAYLOAD_BYTES,
    MAX_EVENT_TYPE_NAME,
    EventRequest,
)
from herald.http.requests import IdempotencyKey, StrictBody, json_object_within

EventTypeName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_EVENT_TYPE_NAME,
        pattern=f"^{EVENT_TYPE_NAME.pattern}$",
        description="An event type of the account's catalog, like order.paid",
    ),
]
ChannelName = Annotated[str, Field(pattern=f"^{CHANNEL_NAME.pattern}$")]


def _distinct(channels: list[str]) -> list[str]:
    return list(dict.fromkeys(channels))


class EventBody(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"type": "order.paid", "payload": {"orderId": "o_42", "amount": 2900}}]
        }
    )

    type: EventTypeName
    payload: Annotated[dict[str, Any], json_object_within(MAX_EVENT_PAYLOAD_BYTES)] = Field(
        description="JSON object checked against the type's schema; at most 65 536 bytes as compact JSON"
    )
    channels: Annotated[list[ChannelName], AfterValidator(_distinct)] | None = Field(
        default=None,
        max_length=MAX_CHANNELS,
        description="Only subscriptions with one of these channels (or with none) receive the event",
    )
    idempotencyKey: IdempotencyKey | None = None  # noqa: N815

    def to_request(self) -> EventRequest:
        return EventRequest(self.type, self.payload, tuple(self.channels or ()), self.idempotencyKey)
