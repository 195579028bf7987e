"""Console sessions: a random token in an HttpOnly cookie, stored as its SHA-256 with an expiry.

Every request reads its session (one GetItem) and its tenant afresh, so a session that was signed
out, expired, or ended by a key rotation without grace is refused on the very next request, in
every container. Nothing about a session or its tenant is cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from herald.domain.account import ACTIVE, TenantContext
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.signin import SESSION_TTL_SECONDS, Session, new_session_token, token_digest
from herald.observability import logger
from herald.services.auth import tenant_context
from herald.services.outcomes import TenantNotFound

if TYPE_CHECKING:
    from herald.services.ports.tenants import SessionStore, TenantStore


def session_ended() -> HeraldError:
    return HeraldError("The console session has ended; sign in again.", ErrorCode.INVALID_SESSION)


class StartedSession(msgspec.Struct, frozen=True):
    """A new session's token: it goes into the cookie and is never stored or shown again."""

    token: str
    session: Session


class SessionAuthenticator:
    def __init__(
        self, sessions: SessionStore, tenants: TenantStore, clock: Callable[[], float] = time.time
    ) -> None:
        self._sessions = sessions
        self._tenants = tenants
        self._clock = clock

    def start(self, tenant_id: str) -> StartedSession:
        token, now = new_session_token(), self._clock()
        session = Session(token_digest(token), tenant_id, iso(utc_now()), int(now) + SESSION_TTL_SECONDS)
        self._sessions.create(session)
        return StartedSession(token, session)

    def authenticate(self, token: str) -> TenantContext:
        session = self._sessions.get(token_digest(token))
        if session is None or not session.live(self._clock()):
            raise session_ended()
        try:
            records = self._tenants.load(session.tenant_id)
        except TenantNotFound as exc:
            raise session_ended() from exc
        profile = records.profile
        valid_from = profile.sessions_valid_from
        if valid_from is not None and parse_iso(session.created_at) < parse_iso(valid_from):
            raise session_ended()
        logger.append_keys(tenant_id=profile.tenant_id)
        if profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        return tenant_context(records, profile.api_key_hash)

    def end(self, token: str) -> None:
        self._sessions.end(token_digest(token))
