"""Port of the portal's links and sessions (each stored by its token's SHA-256, never the token)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.portal import PortalLink, PortalSession


class PortalStore(Protocol):
    def create_link(self, link: PortalLink, audit: AuditEntry) -> None:
        """The link and its audit entry, together or not at all."""

    def link(self, token_digest: str) -> PortalLink | None: ...

    def open(self, link: PortalLink, session: PortalSession, now: int) -> bool:
        """Use the link up and start the session, together; False if the link is gone or expired by
        ``now`` (opened meanwhile by another request: a link opens once)."""

    def session(self, token_digest: str) -> PortalSession | None: ...

    def end(self, token_digest: str) -> None: ...
