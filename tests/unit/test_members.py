"""Members with roles: invitations, role changes, removal and leaving, the last owner, sign-in of an
invited person, and switching between a person's accounts (with the in-memory table, which keeps
the conditions of the table's transactions)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest

from herald.domain.access import (
    INVITATION_TTL_SECONDS,
    MAX_MEMBERS,
    Ability,
    Actor,
    ActorKind,
    Grant,
    Member,
    MemberStatus,
    Role,
    Scope,
    scopes_abilities,
)
from herald.domain.account import TenantContext
from herald.domain.audit import AuditAction
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.signin import CodePurpose, SignInLimits
from herald.services.auth import require
from herald.services.members import MemberService, PersonAccounts
from herald.services.sessions import SessionAuthenticator
from herald.services.signin import SignedIn, SignInService
from tests.fakes.common import CREATED_AT, ManualClock
from tests.fakes.console import FakeMail, FakeSessions, FakeSignIn
from tests.fakes.tenants import FakeTenantTable

CONSOLE = "https://herald.example/console"
CODE = re.compile(r"Your Herald code: (\d{6})")
OWNER = "ops@acme.example"
# No wait between an address's codes: these tests ask for many.
LIMITS = SignInLimits(
    codes_per_client=1000, verifications_per_client=1000, first_code_delay=0, max_code_delay=0
)
IP = "198.51.100.7"


class RunningClock(ManualClock):
    """The real time, moved on by what a test advances: sessions note their start by the real
    clock, and a role change's end of sessions must fall after the sessions it ends."""

    def __call__(self) -> float:
        return time.time() + self.now


class Rig:
    def __init__(self) -> None:
        self.clock = RunningClock(0.0)
        self.table, self.mail, self.codes = FakeTenantTable(), FakeMail(), FakeSignIn()
        self.sessions = SessionAuthenticator(FakeSessions(), self.table, clock=self.clock)
        self.members = MemberService(self.table, self.table, self.mail, clock=self.now)
        self.signin = SignInService(
            store=self.codes,
            tenants=self.table,
            members=self.table,
            sessions=self.sessions,
            mail=self.mail,
            limits=LIMITS,
            clock=self.clock,
        )
        self.accounts = PersonAccounts(self.table, self.table, self.sessions)
        self.table.add_tenant("acme")

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def caller(self, token: str) -> TenantContext:
        return self.sessions.authenticate(token)

    def owner(self) -> Grant:
        """The account's owner, signed in now."""
        return self.caller(self.sessions.start("acme", "mem_acme").token).grant

    def invite(self, email: str, role: Role, grant: Grant | None = None, tenant: str = "acme") -> Member:
        return self.members.invite(tenant, grant or self.owner(), email, role, CONSOLE).member

    def sign_in(self, email: str, purpose: CodePurpose = CodePurpose.SIGN_IN) -> SignedIn:
        return self.signin.verify(email, self.code_for(email, purpose), IP)

    def code_for(self, email: str, purpose: CodePurpose = CodePurpose.SIGN_IN) -> str:
        self.signin.request_code(purpose, email, IP, CONSOLE)
        to, subject, _ = self.mail.sent[-1]
        found = CODE.search(subject)
        assert to == email
        assert found is not None, f"no code mailed: {subject}"
        return found.group(1)

    def joined(self, email: str, role: Role) -> tuple[Member, str]:
        """A member who accepted an invitation, and their session's token."""
        member = self.invite(email, role)
        return member, self.sign_in(email).session.token

    def stored(self, member_id: str, tenant: str = "acme") -> Member | None:
        return self.table.members[tenant].get(member_id)


def refused(step: object) -> HeraldError:
    assert callable(step)
    with pytest.raises(HeraldError) as error:
        step()
    return error.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def key_grant(*scopes: Scope) -> Grant:
    return Grant(Actor(ActorKind.KEY, "key_ci", "CI"), scopes_abilities(scopes))


# ---------------------------------------------------------------- invitations


def test_an_owner_invites_a_person_who_gets_a_mail_saying_who_invited_them_where(rig: Rig) -> None:
    member = rig.invite("Dev@Example.com", Role.DEVELOPER)
    assert (member.email, member.role, member.status, member.invited_by) == (
        "dev@example.com",
        Role.DEVELOPER,
        MemberStatus.INVITED,
        OWNER,
    )
    to, subject, text = rig.mail.sent[-1]
    assert (to, subject) == ("dev@example.com", 'You are invited to "acme" on Herald')
    assert text.startswith(f'{OWNER} invited you to the Herald account "acme" as a developer.')
    assert f"sign in at {CONSOLE} with this email address" in text
    assert "The invitation works for 7 days." in text
    audit = rig.table.audit[-1]
    assert (audit.action, audit.target, audit.actor.id, dict(audit.details)) == (
        AuditAction.MEMBER_INVITED,
        member.member_id,
        "mem_acme",
        {"email": "dev@example.com", "role": "developer"},
    )
    assert [item.email for item in rig.members.list("acme")] == [OWNER, "dev@example.com"]


def test_inviting_an_address_twice_is_refused_and_so_is_a_member_beyond_the_cap(rig: Rig) -> None:
    rig.invite("dev@example.com", Role.DEVELOPER)
    again = refused(lambda: rig.invite("DEV@example.com", Role.VIEWER))
    assert (again.code, again.message) == (
        ErrorCode.MEMBER_EXISTS,
        "dev@example.com is already a member of this account or invited to it.",
    )
    owner = refused(lambda: rig.invite(OWNER, Role.VIEWER))
    assert owner.code is ErrorCode.MEMBER_EXISTS
    for n in range(MAX_MEMBERS - 2):
        rig.invite(f"p{n}@example.com", Role.VIEWER)
    full = refused(lambda: rig.invite("one-more@example.com", Role.VIEWER))
    assert (full.code, full.message) == (
        ErrorCode.MEMBER_LIMIT_REACHED,
        f"This account has {MAX_MEMBERS} members and invitations, the most it may have; remove one first.",
    )


def test_an_invitation_raced_by_another_for_the_same_address_is_refused(rig: Rig) -> None:
    """Both read the account without the address; the table's condition lets one through."""
    racer = Member("mem_other", "dev@example.com", Role.VIEWER, MemberStatus.INVITED, CREATED_AT, "x")

    def concurrent_invitation(_: str) -> None:
        rig.table.members["acme"].setdefault(racer.member_id, racer)

    rig.table.before_member_write = concurrent_invitation
    assert refused(lambda: rig.invite("dev@example.com", Role.DEVELOPER)).code is ErrorCode.MEMBER_EXISTS


def test_nobody_gives_a_role_with_abilities_they_lack(rig: Rig) -> None:
    _, admin = rig.joined("admin@example.com", Role.ADMIN)
    error = refused(lambda: rig.invite("boss@example.com", Role.OWNER, rig.caller(admin).grant))
    assert (error.code, error.message) == (
        ErrorCode.INSUFFICIENT_SCOPE,
        "You cannot invite someone as an owner: the owner role allows billing, ownership, which you "
        "lack. Only an owner may make, change or remove an owner.",
    )
    # An admin invites an admin; a full key (no ownership) never an owner.
    assert rig.invite("admin2@example.com", Role.ADMIN, rig.caller(admin).grant).role is Role.ADMIN
    error = refused(lambda: rig.invite("boss@example.com", Role.OWNER, key_grant(Scope.FULL)))
    assert error.code is ErrorCode.INSUFFICIENT_SCOPE
    assert "boss@example.com" not in [member.email for member in rig.members.list("acme")]


def test_a_developer_or_viewer_session_cannot_manage_members(rig: Rig) -> None:
    _, viewer = rig.joined("viewer@example.com", Role.VIEWER)
    error = refused(lambda: require(rig.caller(viewer), Ability.MEMBERS))
    assert (error.code, error.message) == (
        ErrorCode.INSUFFICIENT_SCOPE,
        "This request needs the admin role or higher (the manage scope); your role is viewer.",
    )


# ---------------------------------------------------------------- roles


def test_lowering_a_role_ends_the_members_sessions_and_raising_one_keeps_them(rig: Rig) -> None:
    member, token = rig.joined("dev@example.com", Role.DEVELOPER)
    raised = rig.members.change_role("acme", rig.owner(), member.member_id, Role.ADMIN)
    assert raised.sessions_valid_from is None
    assert rig.caller(token).grant.role is Role.ADMIN
    time.sleep(0.002)  # sessions end from the change's millisecond on
    rig.members.change_role("acme", rig.owner(), member.member_id, Role.VIEWER)
    time.sleep(0.002)
    ended = refused(lambda: rig.caller(token))
    assert (ended.code, ended.message) == (
        ErrorCode.INVALID_SESSION,
        "The console session has ended; sign in again.",
    )
    assert rig.caller(rig.sign_in("dev@example.com").session.token).grant.role is Role.VIEWER
    audit = rig.table.audit[-1]  # signing in again accepted no invitation: nothing recorded
    assert (audit.action, dict(audit.details)) == (
        AuditAction.MEMBER_ROLE_CHANGED,
        {"email": "dev@example.com", "previousRole": "admin", "role": "viewer"},
    )


def test_only_an_owner_hands_on_ownership_and_the_last_owner_keeps_it(rig: Rig) -> None:
    admin, admin_token = rig.joined("admin@example.com", Role.ADMIN)
    error = refused(lambda: rig.members.change_role("acme", rig.owner(), "mem_acme", Role.ADMIN))
    assert (error.code, error.message) == (
        ErrorCode.LAST_OWNER,
        f"{OWNER} is the account's last owner; make another member owner first.",
    )
    by_admin = refused(
        lambda: rig.members.change_role("acme", rig.caller(admin_token).grant, "mem_acme", Role.VIEWER)
    )
    assert (by_admin.code, by_admin.message) == (
        ErrorCode.INSUFFICIENT_SCOPE,
        f"You cannot change the role of {OWNER}: the owner role allows billing, ownership, which you "
        "lack. Only an owner may make, change or remove an owner.",
    )
    self_promotion = refused(
        lambda: rig.members.change_role("acme", rig.caller(admin_token).grant, admin.member_id, Role.OWNER)
    )
    assert self_promotion.code is ErrorCode.INSUFFICIENT_SCOPE
    rig.members.change_role("acme", rig.owner(), admin.member_id, Role.OWNER)
    transfer = rig.table.audit[-1]
    assert (transfer.action, transfer.target, transfer.actor.id) == (
        AuditAction.OWNERSHIP_TRANSFERRED,
        admin.member_id,
        "mem_acme",
    )
    # Now the first owner may step down.
    assert rig.members.change_role("acme", rig.owner(), "mem_acme", Role.ADMIN).role is Role.ADMIN


def test_two_owners_demoting_each_other_at_once_leave_one_owner(rig: Rig) -> None:
    second, _ = rig.joined("second@example.com", Role.DEVELOPER)
    rig.members.change_role("acme", rig.owner(), second.member_id, Role.OWNER)
    owner = rig.owner()
    # While the first owner's change is being written, the second demotes the first.
    rig.table.before_member_write = lambda _: _demote_first(rig)
    error = refused(lambda: rig.members.change_role("acme", owner, second.member_id, Role.VIEWER))
    assert error.code is ErrorCode.LAST_OWNER
    roles = {member.email: member.role for member in rig.table.members["acme"].values()}
    assert roles == {OWNER: Role.VIEWER, "second@example.com": Role.OWNER}


def _demote_first(rig: Rig) -> None:
    rig.table.before_member_write = lambda _: None
    first = rig.table.members["acme"]["mem_acme"]
    rig.table.members["acme"]["mem_acme"] = Member(
        first.member_id, first.email, Role.VIEWER, first.status, first.created_at, first.invited_by
    )


# ---------------------------------------------------------------- removing and leaving


def test_a_removed_members_session_is_refused_on_its_next_request(rig: Rig) -> None:
    member, token = rig.joined("dev@example.com", Role.DEVELOPER)
    assert rig.caller(token).grant.role is Role.DEVELOPER
    removed = rig.members.remove("acme", rig.owner(), member.member_id)
    assert removed.email == "dev@example.com"
    assert rig.stored(member.member_id) is None
    ended = refused(lambda: rig.caller(token))
    assert (ended.code, ended.message) == (
        ErrorCode.INVALID_SESSION,
        "The console session has ended; sign in again.",
    )
    audit = rig.table.audit[-1]
    assert (audit.action, audit.target, dict(audit.details)) == (
        AuditAction.MEMBER_REMOVED,
        member.member_id,
        {"email": "dev@example.com", "role": "developer"},
    )
    gone = refused(lambda: rig.members.remove("acme", rig.owner(), member.member_id))
    assert (gone.code, gone.message) == (
        ErrorCode.MEMBER_NOT_FOUND,
        f"This account has no member {member.member_id}.",
    )


def test_a_viewer_may_leave_and_the_last_owner_may_not(rig: Rig) -> None:
    viewer, token = rig.joined("viewer@example.com", Role.VIEWER)
    left = rig.members.remove("acme", rig.caller(token).grant, viewer.member_id)
    assert left.member_id == viewer.member_id
    error = refused(lambda: rig.members.remove("acme", rig.owner(), "mem_acme"))
    assert (error.code, error.message) == (
        ErrorCode.LAST_OWNER,
        f"{OWNER} is the account's last owner; make another member owner first.",
    )
    _, admin = rig.joined("admin@example.com", Role.ADMIN)
    by_admin = refused(lambda: rig.members.remove("acme", rig.caller(admin).grant, "mem_acme"))
    assert by_admin.message.startswith(f"You cannot remove {OWNER}: the owner role allows billing, ownership")


# ---------------------------------------------------------------- signing in as an invited person


def test_an_invited_person_signs_in_with_a_code_and_joins_the_account(rig: Rig) -> None:
    member = rig.invite("dev@example.com", Role.DEVELOPER)
    signed_in = rig.sign_in("dev@example.com")
    assert (signed_in.tenant_id, signed_in.api_key) == ("acme", None)
    stored = rig.stored(member.member_id)
    assert stored is not None
    assert (stored.status, stored.joined_at is not None) == (MemberStatus.ACTIVE, True)
    caller = rig.caller(signed_in.session.token)
    assert (caller.tenant_id, caller.grant.role, caller.grant.actor.id) == (
        "acme",
        Role.DEVELOPER,
        member.member_id,
    )
    joined = rig.table.audit[-1]
    assert (joined.action, joined.target, joined.actor.kind, joined.actor.id, joined.actor.ip) == (
        AuditAction.MEMBER_JOINED,
        member.member_id,
        ActorKind.MEMBER,
        member.member_id,
        IP,
    )
    # No account of its own was made for the person.
    assert set(rig.table.profiles) == {"acme"}


def test_an_invitation_code_works_once_and_only_for_its_address(rig: Rig) -> None:
    rig.invite("dev@example.com", Role.DEVELOPER)
    rig.invite("other@example.com", Role.VIEWER)
    code = rig.code_for("dev@example.com")
    stolen = refused(lambda: rig.signin.verify("other@example.com", code, IP))
    assert (stolen.code, stolen.message) == (
        ErrorCode.INVALID_CODE,
        "The code is not valid; ask for a new one if it expired.",
    )
    rig.signin.verify("dev@example.com", code, IP)
    reused = refused(lambda: rig.signin.verify("dev@example.com", code, IP))
    assert (reused.code, reused.message) == (
        ErrorCode.INVALID_CODE,
        "The code is not valid; ask for a new one if it expired.",
    )
    assert (
        next(m for m in rig.members.list("acme") if m.email == "other@example.com").status
        is MemberStatus.INVITED
    )


def test_a_lapsed_invitation_neither_mails_a_code_nor_joins(rig: Rig) -> None:
    member = rig.invite("late@example.com", Role.DEVELOPER)
    rig.clock.advance(INVITATION_TTL_SECONDS)
    rig.signin.request_code(CodePurpose.SIGN_IN, "late@example.com", IP, CONSOLE)
    to, subject, text = rig.mail.sent[-1]
    assert (to, subject) == ("late@example.com", "Sign in to Herald")
    assert "it has no account" in text
    assert [m.email for m in rig.members.list("acme")] == [OWNER]
    # The owner may invite the address again; the lapsed invitation makes way.
    again = rig.invite("late@example.com", Role.VIEWER)
    assert again.member_id != member.member_id
    assert rig.stored(member.member_id) is None


def test_a_code_requested_before_the_invitation_lapsed_does_not_join_after(rig: Rig) -> None:
    rig.invite("late@example.com", Role.DEVELOPER)
    rig.clock.advance(INVITATION_TTL_SECONDS - 60)
    code = rig.code_for("late@example.com")
    rig.clock.advance(120)
    error = refused(lambda: rig.signin.verify("late@example.com", code, IP))
    assert error.code is ErrorCode.INVALID_CODE
    assert rig.table.members["acme"][next(iter(rig.table.members["acme"].keys() - {"mem_acme"}))].status is (
        MemberStatus.INVITED
    )


def test_sign_in_opens_the_persons_own_account_first_else_the_one_joined_last(rig: Rig) -> None:
    rig.table.add_tenant("beta")
    rig.table.add_tenant("gamma")
    # ops@beta.example created beta (its email claim) and is invited to acme.
    rig.table.email_claims[_key("ops@beta.example")] = "beta"
    rig.invite("ops@beta.example", Role.VIEWER)
    assert rig.sign_in("ops@beta.example").tenant_id == "beta"
    assert any(
        m.email == "ops@beta.example" and m.status is MemberStatus.ACTIVE
        for m in rig.table.members["acme"].values()
    )
    # A person with no account of their own: the one joined last.
    rig.invite("pat@example.com", Role.VIEWER)
    rig.sign_in("pat@example.com")
    gamma_owner = Grant(
        Actor(ActorKind.MEMBER, "mem_gamma", "ops@gamma.example"), frozenset(Ability), Role.OWNER
    )
    rig.clock.advance(1)
    rig.invite("pat@example.com", Role.ADMIN, gamma_owner, tenant="gamma")
    assert rig.sign_in("pat@example.com").tenant_id == "gamma"


# ---------------------------------------------------------------- switching accounts


def test_a_person_lists_their_accounts_and_switches_between_them(rig: Rig) -> None:
    rig.table.add_tenant("beta")
    beta_owner = Grant(
        Actor(ActorKind.MEMBER, "mem_beta", "ops@beta.example"), frozenset(Ability), Role.OWNER
    )
    rig.invite("pat@example.com", Role.DEVELOPER)
    rig.invite("pat@example.com", Role.VIEWER, beta_owner, tenant="beta")
    token = rig.sign_in("pat@example.com").session.token
    listed = [(a.tenant_id, a.name, a.role, a.current) for a in rig.accounts.accounts(token)]
    current = rig.caller(token).tenant_id
    assert sorted(listed) == [
        ("acme", "acme", Role.DEVELOPER, current == "acme"),
        ("beta", "beta", Role.VIEWER, current == "beta"),
    ]
    other = "beta" if current == "acme" else "acme"
    switched = rig.accounts.switch(token, other)
    assert rig.caller(switched.token).tenant_id == other
    assert refused(lambda: rig.caller(token)).code is ErrorCode.INVALID_SESSION


def test_a_member_of_one_account_can_neither_switch_into_nor_list_another(rig: Rig) -> None:
    rig.table.add_tenant("beta")
    _, token = rig.joined("pat@example.com", Role.ADMIN)
    for target in ("beta", "no-such-account"):
        error = refused(lambda target=target: rig.accounts.switch(token, target))
        assert (error.code, error.message) == (
            ErrorCode.TENANT_NOT_FOUND,
            f"You are not a member of an account {target}.",
        )
    assert [a.tenant_id for a in rig.accounts.accounts(token)] == ["acme"]
    # The session stays where it was; no session was started in beta.
    assert rig.caller(token).tenant_id == "acme"
    assert all(session.tenant_id != "beta" for session in rig.sessions._sessions.sessions.values())  # type: ignore[attr-defined]


def _key(address: str) -> str:
    from herald.domain.signin import address_key

    return address_key(address)
