"""An in-memory portal store: links and sessions by their token's digest, audit entries in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from herald.domain.audit import AuditEntry
from herald.domain.portal import PortalLink, PortalSession


@dataclass
class FakePortal:
    links: dict[str, PortalLink] = field(default_factory=dict)
    sessions: dict[str, PortalSession] = field(default_factory=dict)
    audit: list[AuditEntry] = field(default_factory=list)
    # Called between reading a link and using it up: a test plays a racing request here.
    before_open: Callable[[], None] = lambda: None

    def create_link(self, link: PortalLink, audit: AuditEntry) -> None:
        self.links[link.token_digest] = link
        self.audit.append(audit)

    def link(self, token_digest: str) -> PortalLink | None:
        return self.links.get(token_digest)

    def open(self, link: PortalLink, session: PortalSession, now: int) -> bool:
        self.before_open()
        stored = self.links.get(link.token_digest)
        if stored is None or stored.expires_at <= now:
            return False
        del self.links[link.token_digest]
        self.sessions[session.token_digest] = session
        return True

    def session(self, token_digest: str) -> PortalSession | None:
        return self.sessions.get(token_digest)

    def end(self, token_digest: str) -> None:
        self.sessions.pop(token_digest, None)
