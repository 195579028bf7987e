"""Console sessions: a random token in an HttpOnly cookie, stored as its SHA-256 with an expiry,
signed in as one member of one tenant.

Every request reads its session (one GetItem) and its tenant afresh, members included, so a session
that was signed out, expired, ended by the account key's rotation without grace, whose member was
removed, or whose role was lowered is refused on the very next request, in every container; the
member's current role is what the request may do. Nothing about a session or its tenant is cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from herald.domain.access import Actor, ActorKind, Grant, Member, MemberStatus
from herald.domain.account import ACTIVE, TenantContext, TenantRecords
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

    def start(self, tenant_id: str, member_id: str) -> StartedSession:
        token, now = new_session_token(), self._clock()
        session = Session(
            token_digest(token), tenant_id, iso(utc_now()), int(now) + SESSION_TTL_SECONDS, member_id
        )
        self._sessions.create(session)
        return StartedSession(token, session)

    def authenticate(self, token: str, ip: str | None = None) -> TenantContext:
        session = self._sessions.get(token_digest(token))
        if session is None or not session.live(self._clock()) or session.member_id is None:
            raise session_ended()
        try:
            records = self._tenants.load(session.tenant_id)
        except TenantNotFound as exc:
            raise session_ended() from exc
        member = _live_member(records, session)
        logger.append_keys(tenant_id=records.profile.tenant_id, member_id=member.member_id)
        if records.profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        grant = Grant(
            actor=Actor(ActorKind.MEMBER, member.member_id, member.email, ip),
            abilities=member.abilities,
            role=member.role,
        )
        return tenant_context(records, grant)

    def end(self, token: str) -> None:
        self._sessions.end(token_digest(token))


def _live_member(records: TenantRecords, session: Session) -> Member:
    """The session's member, if the session still stands: the member is still there and active,
    and neither the account nor the member ended sessions started before it."""
    member = records.member(session.member_id or "")
    if member is None or member.status is not MemberStatus.ACTIVE:
        raise session_ended()
    started = parse_iso(session.created_at)
    for valid_from in (records.profile.sessions_valid_from, member.sessions_valid_from):
        if valid_from is not None and started < parse_iso(valid_from):
            raise session_ended()
    return member
