"""The answers of the event type routes (imported with those routes only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from msgspec import Meta

from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.events import EventType as EventTypeRecord


class EventType(Answer):
    name: str
    description: str | None
    schema: Annotated[
        dict[str, Any] | None, Meta(description="JSON Schema 2020-12 of the payload; null: any object")
    ]
    version: Annotated[int, Meta(description="The schema's version: each new schema adds one")]
    deprecated: bool
    archived: Annotated[bool, Meta(description="Takes no new events; subscriptions keep naming it")]
    created_at: Timestamp
    updated_at: Timestamp

    @classmethod
    def of(cls, event_type: EventTypeRecord) -> EventType:
        return cls(
            name=event_type.name,
            description=event_type.description,
            schema=dict(event_type.schema) if event_type.schema is not None else None,
            version=event_type.version,
            deprecated=event_type.deprecated,
            archived=event_type.archived,
            created_at=event_type.created_at,
            updated_at=event_type.updated_at,
        )
