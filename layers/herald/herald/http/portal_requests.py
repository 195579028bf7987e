"""The request bodies of the portal routes (imported with those routes only)."""

from __future__ import annotations

from pydantic import Field

from herald.domain.portal import MAX_LINK_TTL_SECONDS, MIN_LINK_TTL_SECONDS
from herald.domain.subscriptions import SUBSCRIBER_ID
from herald.http.requests import StrictBody


class PortalLinkRequest(StrictBody):
    subscriberId: str | None = Field(  # noqa: N815 (the wire name)
        default=None,
        pattern=f"^{SUBSCRIBER_ID.pattern}$",
        description="The customer the link is for: it sees and manages only subscriptions with this "
        "subscriberId, and the ones it adds carry it. Absent: every subscription of the account",
    )
    ttlSeconds: int = Field(  # noqa: N815 (the wire name)
        ge=MIN_LINK_TTL_SECONDS,
        le=MAX_LINK_TTL_SECONDS,
        description="How long the link may stay unopened (60 s to 7 days); it opens once",
    )


class PortalSessionRequest(StrictBody):
    token: str = Field(
        min_length=20, max_length=100, description="The token of the portal link (after its #)"
    )
