"""A tenant's members: list, invite by email with a role, change a role, remove (or leave). Shared
by the account routes (a member or a key calls) and the operator CLI.

Nobody gives or takes away more than they hold (``herald.domain.members.require_within``): an admin
invites developers and viewers and other admins, never an owner, and cannot demote or remove an
owner. The account keeps an active owner: the last one cannot be demoted, removed or leave, and the
store's transaction re-checks the owner that stays, so two concurrent changes cannot both take one
away. Lowering a member's role ends the member's sessions (they sign in again with the new role).

An invitation is the member item (status invited) and the person's membership, written with the
audit entry in one transaction; then a mail from the platform's address tells the person who
invited them to which account. They accept it by signing in to the console with that address
(``herald.services.signin``), within ``INVITATION_TTL_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import msgspec

from herald.domain.access import (
    INVITATION_TTL_SECONDS,
    MAX_MEMBERS,
    Actor,
    ActorKind,
    Grant,
    Member,
    MemberStatus,
    Role,
    generate_id,
)
from herald.domain.account import ACTIVE, TenantRecords
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.members import (
    active_owners,
    current,
    lapsed,
    last_owner,
    lowers,
    require_within,
)
from herald.domain.signin import address_key, normalized_email
from herald.observability import logger
from herald.services.outcomes import MemberChanged, TenantNotFound
from herald.services.ports.platform import PlatformMail
from herald.services.ports.tenants import MemberStore, TenantStore
from herald.services.sessions import SessionAuthenticator, StartedSession


class Invited(msgspec.Struct, frozen=True):
    member: Member
    # False when no mail was sent (it failed, or the operator CLI, which sends none, invited): the
    # person can still sign in to accept.
    mailed: bool


class MemberService:
    def __init__(
        self,
        tenants: TenantStore,
        members: MemberStore,
        mail: PlatformMail | None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._tenants = tenants
        self._members = members
        self._mail = mail
        self._clock = clock

    def list(self, tenant_id: str) -> list[Member]:
        """Members and the invitations that have not lapsed, oldest first."""
        return current(self._records(tenant_id).members, self._clock())

    def invite(self, tenant_id: str, grant: Grant, email: str, role: Role, console_url: str) -> Invited:
        records, now = self._records(tenant_id), self._clock()
        require_within(grant, role, f"invite someone as {_an(role)}")
        address = normalized_email(email)
        existing = next((member for member in records.members if member.email == address), None)
        if existing is not None and not lapsed(existing, now):
            raise _exists(address)
        if len(current(records.members, now)) >= MAX_MEMBERS:
            raise HeraldError(
                f"This account has {MAX_MEMBERS} members and invitations, the most it may have; "
                "remove one first.",
                ErrorCode.MEMBER_LIMIT_REACHED,
            )
        member = Member(
            member_id=generate_id("mem"),
            email=address,
            role=role,
            status=MemberStatus.INVITED,
            created_at=iso(now),
            invited_by=grant.actor.name,
        )
        audit = entry(
            tenant_id, member.created_at, grant.actor, AuditAction.MEMBER_INVITED, member.member_id,
            email=address, role=role.value,
        )  # fmt: skip
        try:
            self._members.invite(tenant_id, records.profile.name, member, audit, existing)
        except MemberChanged as exc:
            raise _exists(address) from exc
        mailed = self._mail_invitation(member, records.profile.name, grant.actor, console_url)
        return Invited(member, mailed)

    def change_role(self, tenant_id: str, grant: Grant, member_id: str, role: Role) -> Member:
        return _once_more(lambda: self._change_role(tenant_id, grant, member_id, role))

    def _change_role(self, tenant_id: str, grant: Grant, member_id: str, role: Role) -> Member:
        records, now = self._records(tenant_id), self._clock()
        member = _member(records, member_id, now)
        require_within(grant, member.role, f"change the role of {member.email}")
        require_within(grant, role, f"make {member.email} {_an(role)}")
        if role is member.role:
            return member
        keeper = _keeper(records, member, grant) if member.role is Role.OWNER else None
        ended = iso(now) if lowers(member.role, role) else member.sessions_valid_from
        changed = msgspec.structs.replace(member, role=role, sessions_valid_from=ended)
        action = AuditAction.OWNERSHIP_TRANSFERRED if role is Role.OWNER else AuditAction.MEMBER_ROLE_CHANGED
        audit = entry(
            tenant_id, iso(now), grant.actor, action, member.member_id,
            email=member.email, previousRole=member.role.value, role=role.value,
        )  # fmt: skip
        self._members.change_role(tenant_id, member, changed, audit, keeper)
        return changed

    def remove(self, tenant_id: str, grant: Grant, member_id: str) -> Member:
        """Remove a member, or (``member_id`` the caller's own) leave the account. Leaving needs no
        ``members`` ability; removing someone else does (the route checks it)."""
        return _once_more(lambda: self._remove(tenant_id, grant, member_id))

    def _remove(self, tenant_id: str, grant: Grant, member_id: str) -> Member:
        records, now = self._records(tenant_id), self._clock()
        member = _member(records, member_id, now)
        if not _is_self(grant, member):
            require_within(grant, member.role, f"remove {member.email}")
        keeper = _keeper(records, member, grant) if member.role is Role.OWNER else None
        audit = entry(
            tenant_id, iso(now), grant.actor, AuditAction.MEMBER_REMOVED, member.member_id,
            email=member.email, role=member.role.value,
        )  # fmt: skip
        self._members.remove(tenant_id, member, audit, keeper)
        return member

    def _mail_invitation(self, member: Member, account: str, inviter: Actor, console_url: str) -> bool:
        """The invitation stands whether or not its mail goes: the person can sign in with the
        address at the console all the same, so a mail failure is logged, not answered as one."""
        if self._mail is None:
            return False
        try:
            self._mail.send(member.email, *invitation_mail(account, inviter, member.role, console_url))
        except DependencyError as exc:
            logger.error(
                "invitation mail not sent", extra={"reason": str(exc), "member_id": member.member_id}
            )
            return False
        return True

    def _records(self, tenant_id: str) -> TenantRecords:
        try:
            return self._tenants.load(tenant_id)
        except TenantNotFound as exc:
            raise HeraldError(f"No tenant {tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc


def invitation_mail(account: str, inviter: Actor, role: Role, console_url: str) -> tuple[str, str]:
    """The subject and text of an invitation: who invited the person, to which account, and how to
    accept (there is no link to click but the console's own: the sign-in code is the proof)."""
    days = INVITATION_TTL_SECONDS // 86400
    who = "The operator of this Herald service" if inviter.kind is ActorKind.OPERATOR else inviter.name
    text = (
        f'{who} invited you to the Herald account "{account}" as {_an(role)}.\n\n'
        f"To accept, sign in at {console_url} with this email address: Herald emails you a one-time "
        f"code, there is no password.\n\nThe invitation works for {days} days. If you did not "
        "expect it, ignore this email."
    )
    return f'You are invited to "{account}" on Herald', text


def _an(role: Role) -> str:
    return f"an {role}" if role.value[0] in "aeiou" else f"a {role}"


def _member(records: TenantRecords, member_id: str, now: datetime) -> Member:
    member = records.member(member_id)
    if member is None or lapsed(member, now):
        raise HeraldError(f"This account has no member {member_id}.", ErrorCode.MEMBER_NOT_FOUND)
    return member


def _is_self(grant: Grant, member: Member) -> bool:
    return grant.actor.kind is ActorKind.MEMBER and grant.actor.id == member.member_id


def _keeper(records: TenantRecords, member: Member, grant: Grant) -> Member | None:
    """The active owner that stays when ``member`` stops being an owner (the caller, if it is one):
    the store's transaction checks it still is one. An invited owner needs none."""
    if member.status is not MemberStatus.ACTIVE:
        return None
    others = active_owners(records.members, but=member.member_id)
    if not others:
        raise last_owner(member)
    return next((owner for owner in others if _is_self(grant, owner)), others[0])


def _exists(address: str) -> HeraldError:
    return HeraldError(
        f"{address} is already a member of this account or invited to it.", ErrorCode.MEMBER_EXISTS
    )


def _once_more(change: Callable[[], Member]) -> Member:
    """A change whose transaction found the member or the staying owner changed meanwhile is
    decided again from a fresh read, once: that read answers what happened (the member is gone,
    the owner it counted on is not one any more: ``last_owner``)."""
    try:
        return change()
    except MemberChanged:
        pass
    try:
        return change()
    except MemberChanged as exc:
        raise HeraldError(
            "The account's members changed at the same time; list them again and retry.",
            ErrorCode.MEMBER_EXISTS,
        ) from exc


class AccountChoice(msgspec.Struct, frozen=True):
    tenant_id: str
    name: str
    role: Role
    current: bool


class PersonAccounts:
    """The console's account switcher: the accounts the signed-in person belongs to, and a new
    session in another of them. The person is the session's member's address; another account is
    opened only for an active member with that address in the account's own partition (the
    person's list is a copy, never proof)."""

    def __init__(self, tenants: TenantStore, members: MemberStore, sessions: SessionAuthenticator) -> None:
        self._tenants = tenants
        self._members = members
        self._sessions = sessions

    def accounts(self, token: str) -> list[AccountChoice]:
        signed_in = self._sessions.authenticate(token)
        memberships = self._members.memberships(address_key(signed_in.grant.actor.name))
        return [
            AccountChoice(item.tenant_id, item.tenant_name, item.role, item.tenant_id == signed_in.tenant_id)
            for item in sorted(memberships, key=lambda item: item.tenant_name.lower())
            if item.status is MemberStatus.ACTIVE
        ]

    def switch(self, token: str, tenant_id: str) -> StartedSession:
        """A session in ``tenant_id`` in place of this one (which ends)."""
        address = self._sessions.authenticate(token).grant.actor.name
        records, member = self._member_in(tenant_id, address)
        if records.profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        started = self._sessions.start(tenant_id, member.member_id)
        self._sessions.end(token)
        return started

    def _member_in(self, tenant_id: str, address: str) -> tuple[TenantRecords, Member]:
        """The address's active member in the account; the same refusal whether the account does
        not exist or the person is not in it, so an id tells nothing about other accounts."""
        refusal = HeraldError(f"You are not a member of an account {tenant_id}.", ErrorCode.TENANT_NOT_FOUND)
        try:
            records = self._tenants.load(tenant_id)
        except TenantNotFound as exc:
            raise refusal from exc
        member = next(
            (
                item
                for item in records.members
                if item.email == address and item.status is MemberStatus.ACTIVE
            ),
            None,
        )
        if member is None:
            raise refusal
        return records, member
