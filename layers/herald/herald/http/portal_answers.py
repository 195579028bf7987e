"""The answers of the portal routes (imported with those routes only)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from herald.domain.clock import iso
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.events import EventType
    from herald.domain.portal import PortalSession as PortalSessionRecord
    from herald.services.portal import CreatedLink


class PortalLink(Answer):
    url: Annotated[str, Meta(description="The one-time link to hand the customer (shown this once)")]
    expires_at: Annotated[Timestamp, Meta(description="Until when it can be opened")]

    @classmethod
    def of(cls, link: CreatedLink) -> PortalLink:
        return cls(url=link.url, expires_at=link.expires_at)


class PortalSession(Answer):
    subscriber_id: str | None
    expires_at: Timestamp

    @classmethod
    def of(cls, session: PortalSessionRecord) -> PortalSession:
        expires_at = iso(datetime.fromtimestamp(session.expires_at, UTC))
        return cls(subscriber_id=session.subscriber_id, expires_at=expires_at)


class PortalEventType(Answer):
    """An event type as the portal offers it to choose from: never its schema."""

    name: str
    description: str | None
    deprecated: bool

    @classmethod
    def of(cls, event_type: EventType) -> PortalEventType:
        return cls(name=event_type.name, description=event_type.description, deprecated=event_type.deprecated)
