"""Portal links and sessions: the token is stored only as its hash, a link opens once and only
before its expiry, a session is scoped to the link's tenant and subscriber, and every refusal reads
the same sentence whatever the reason."""

from __future__ import annotations

import hashlib
import re

import pytest
from msgspec.structs import replace

from herald.domain.access import ActorKind
from herald.domain.account import DISABLED
from herald.domain.audit import AuditAction
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.portal import MAX_LINK_TTL_SECONDS, PORTAL_SESSION_SECONDS
from herald.services.auth import tenant_context
from herald.services.portal import PortalService
from tests.fakes.common import ManualClock, full_grant
from tests.fakes.portal import FakePortal
from tests.fakes.tenants import FakeTenantTable

ORIGIN = "https://herald.example"
SPENT = "This portal link has expired or was already used; ask for a new one."
ENDED = "The portal session has ended; open a new portal link."


class Rig:
    def __init__(self) -> None:
        self.clock = ManualClock(1_800_000_000.0)
        self.tenants, self.store = FakeTenantTable(), FakePortal()
        self.tenants.add_tenant("t1")
        self.tenants.add_tenant("t2")
        self.service = PortalService(self.store, self.tenants, clock=self.clock)

    def link(self, subscriber_id: str | None = "cust_1", ttl: int = 3600, tenant_id: str = "t1") -> str:
        """A new link's token (what follows the # of its URL)."""
        tenant = tenant_context(self.tenants.load(tenant_id), full_grant())
        created = self.service.create_link(tenant, subscriber_id, ttl, ORIGIN)
        return created.url.split("#", 1)[1]


def refusal(call: object, *args: object) -> HeraldError:
    with pytest.raises(HeraldError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def test_a_link_is_on_the_configured_origin_with_a_long_random_token_stored_only_as_its_hash() -> None:
    rig = Rig()
    tenant = tenant_context(rig.tenants.load("t1"), full_grant())
    created = rig.service.create_link(tenant, "cust_1", 600, ORIGIN)
    url, token = created.url.split("#", 1)
    assert url == f"{ORIGIN}/portal"
    # 32 random bytes, URL-safe: 43 characters, at least 128 bits.
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert created.expires_at == "2027-01-15T08:10:00.000Z"
    (stored,) = rig.store.links.values()
    assert stored.token_digest == hashlib.sha256(token.encode()).hexdigest()
    assert token not in repr(stored)
    assert (stored.tenant_id, stored.subscriber_id, stored.expires_at) == ("t1", "cust_1", 1_800_000_600)


def test_every_link_is_audited_with_its_subscriber_or_all_and_never_its_token() -> None:
    rig = Rig()
    token = rig.link("cust_1")
    rig.link(None)
    first, second = rig.store.audit
    assert (first.action, first.target, first.actor.kind) == (
        AuditAction.PORTAL_LINK_CREATED,
        "cust_1",
        ActorKind.KEY,
    )
    assert second.target == "all"
    assert first.details == {"expiresAt": "2027-01-15T09:00:00.000Z"}
    assert token not in repr(rig.store.audit)


def test_opening_a_link_starts_a_session_scoped_to_its_tenant_and_subscriber() -> None:
    rig = Rig()
    opened = rig.service.open(rig.link("cust_1"))
    assert opened.session.expires_at == int(rig.clock.now) + PORTAL_SESSION_SECONDS
    caller = rig.service.authenticate(opened.token, "203.0.113.7")
    assert (caller.tenant.tenant_id, caller.subscriber_id) == ("t1", "cust_1")
    actor = caller.tenant.actor
    assert (actor.kind, actor.id, actor.name, actor.ip) == (
        ActorKind.PORTAL,
        "cust_1",
        "cust_1",
        "203.0.113.7",
    )
    # Only the session token's hash is stored.
    assert opened.token not in repr(rig.store.sessions)


def test_a_link_without_a_subscriber_is_the_portal_of_every_subscription() -> None:
    rig = Rig()
    caller = rig.service.authenticate(rig.service.open(rig.link(None)).token)
    assert caller.subscriber_id is None
    assert caller.tenant.actor.id == "all"


def test_a_link_opens_once() -> None:
    rig = Rig()
    token = rig.link()
    rig.service.open(token)
    error = refusal(rig.service.open, token)
    assert (error.code, error.message) == (ErrorCode.PORTAL_LINK_INVALID, SPENT)
    assert len(rig.store.sessions) == 1


def test_two_requests_racing_with_one_link_start_one_session() -> None:
    rig = Rig()
    token = rig.link()
    # The racing request uses the link up between this one's read and its write.
    rig.store.before_open = rig.store.links.clear
    error = refusal(rig.service.open, token)
    assert error.message == SPENT
    assert rig.store.sessions == {}


def test_an_expired_link_unknown_link_and_used_link_read_the_same() -> None:
    rig = Rig()
    expired = rig.link(ttl=60)
    rig.clock.advance(60)
    assert refusal(rig.service.open, expired).message == SPENT
    assert refusal(rig.service.open, "A" * 43).message == SPENT
    # A link's hash is not a link: a stored digest does not open.
    known = rig.link()
    digest = hashlib.sha256(known.encode()).hexdigest()
    assert refusal(rig.service.open, digest).message == SPENT


def test_a_session_ends_at_its_expiry_and_when_signed_out() -> None:
    rig = Rig()
    opened = rig.service.open(rig.link(ttl=MAX_LINK_TTL_SECONDS))
    rig.clock.advance(PORTAL_SESSION_SECONDS - 1)
    rig.service.authenticate(opened.token)
    rig.clock.advance(1)
    error = refusal(rig.service.authenticate, opened.token)
    assert (error.code, error.message) == (ErrorCode.INVALID_SESSION, ENDED)
    again = rig.service.open(rig.link())
    rig.service.end(again.token)
    assert refusal(rig.service.authenticate, again.token).message == ENDED


def test_a_session_token_is_not_a_link_and_a_link_token_is_not_a_session() -> None:
    rig = Rig()
    token = rig.link()
    assert refusal(rig.service.authenticate, token).message == ENDED
    opened = rig.service.open(token)
    assert refusal(rig.service.open, opened.token).message == SPENT


def test_a_disabled_tenant_and_an_account_that_ended_its_sessions_refuse_the_portal() -> None:
    rig = Rig()
    opened = rig.service.open(rig.link())
    rig.tenants.profiles["t1"] = replace(rig.tenants.profiles["t1"], status=DISABLED)
    error = refusal(rig.service.authenticate, opened.token)
    assert (error.code, error.message) == (ErrorCode.TENANT_DISABLED, "This tenant is disabled.")
    rig.tenants.profiles["t1"] = replace(
        rig.tenants.profiles["t1"], status="active", sessions_valid_from="2027-01-15T08:00:01.000Z"
    )
    assert refusal(rig.service.authenticate, opened.token).message == ENDED
