"""The portal's links and sessions: a tenant makes a one-time link for one of its customers; opening
it starts a session scoped to that tenant and subscriber id (``herald.domain.portal``).

Every portal request reads its session (one GetItem) and its tenant afresh, as console sessions do:
a disabled tenant, or an account that ended every session (a key rotation without grace), refuses
the very next portal request. A link or session that is unknown, used or expired gets one answer,
whichever it was, so a guess learns nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import msgspec

from herald.domain.access import Ability, Actor, ActorKind, Grant
from herald.domain.account import ACTIVE, TenantContext
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso, parse_iso
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.portal import (
    EVERY_SUBSCRIBER,
    PORTAL_SESSION_SECONDS,
    PortalLink,
    PortalSession,
    link_url,
    new_portal_token,
)
from herald.domain.signin import token_digest
from herald.observability import logger
from herald.services.auth import tenant_context
from herald.services.outcomes import TenantNotFound

if TYPE_CHECKING:
    from herald.services.ports.portal import PortalStore
    from herald.services.ports.tenants import TenantStore

# What a portal session may do: read and manage subscriptions (its routes reach nothing else).
PORTAL_ABILITIES = frozenset({Ability.READ, Ability.WEBHOOKS})


def link_spent() -> HeraldError:
    return HeraldError(
        "This portal link has expired or was already used; ask for a new one.", ErrorCode.PORTAL_LINK_INVALID
    )


def portal_ended() -> HeraldError:
    return HeraldError("The portal session has ended; open a new portal link.", ErrorCode.INVALID_SESSION)


class CreatedLink(msgspec.Struct, frozen=True):
    """The link to hand the customer: shown once, only its token's hash is stored."""

    url: str
    expires_at: str


class OpenedPortal(msgspec.Struct, frozen=True):
    """The session's token (it goes into the cookie, never stored or shown again) and the session."""

    token: str
    session: PortalSession


class PortalCaller(msgspec.Struct, frozen=True):
    """A portal request's caller: its tenant (with the portal actor) and its session, scoped to the
    session's subscriber (None: every subscription of the tenant)."""

    tenant: TenantContext
    session: PortalSession

    @property
    def subscriber_id(self) -> str | None:
        return self.session.subscriber_id


class PortalService:
    def __init__(
        self, store: PortalStore, tenants: TenantStore, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self._tenants = tenants
        self._clock = clock

    def create_link(
        self, tenant: TenantContext, subscriber_id: str | None, ttl_seconds: int, origin: str
    ) -> CreatedLink:
        token, now = new_portal_token(), self._clock()
        created_at, expires_at = _iso(now), int(now) + ttl_seconds
        link = PortalLink(token_digest(token), tenant.tenant_id, created_at, expires_at, subscriber_id)
        audit = entry(
            tenant.tenant_id,
            created_at,
            tenant.actor,
            AuditAction.PORTAL_LINK_CREATED,
            subscriber_id or EVERY_SUBSCRIBER,
            expiresAt=_iso(expires_at),
        )
        self._store.create_link(link, audit)
        return CreatedLink(link_url(origin, token), _iso(expires_at))

    def open(self, token: str) -> OpenedPortal:
        """Use the link up (once) and start its session."""
        now = self._clock()
        link = self._store.link(token_digest(token))
        if link is None or not link.live(now):
            raise link_spent()
        session_token = new_portal_token()
        session = PortalSession(
            token_digest(session_token),
            link.tenant_id,
            _iso(now),
            int(now) + PORTAL_SESSION_SECONDS,
            link.subscriber_id,
        )
        if not self._store.open(link, session, int(now)):
            raise link_spent()
        return OpenedPortal(session_token, session)

    def authenticate(self, token: str, ip: str | None = None) -> PortalCaller:
        session = self._store.session(token_digest(token))
        if session is None or not session.live(self._clock()):
            raise portal_ended()
        try:
            records = self._tenants.load(session.tenant_id)
        except TenantNotFound as exc:
            raise portal_ended() from exc
        valid_from = records.profile.sessions_valid_from
        if valid_from is not None and parse_iso(session.created_at) < parse_iso(valid_from):
            raise portal_ended()
        if records.profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        who = session.subscriber_id or EVERY_SUBSCRIBER
        logger.append_keys(tenant_id=session.tenant_id, subscriber_id=who)
        grant = Grant(actor=Actor(ActorKind.PORTAL, who, who, ip), abilities=PORTAL_ABILITIES)
        return PortalCaller(tenant_context(records, grant), session)

    def end(self, token: str) -> None:
        self._store.end(token_digest(token))


def _iso(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))
