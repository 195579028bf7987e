"""Sign-up and sign-in to the console by a one-time code sent from the platform's address.

Nothing a client sees tells whether an address has an account: every code request stores a code
and sends one mail, and only the mail's text differs (a sign-up of an address that has an account
gets a sign-in code for it; a sign-in of an address without one gets a note saying so, while the
code stored for it is never mailed). So a wrong code counts its tries, and a second request waits
for the address's pace, alike for both. Verifying a code creates the free tenant on first use
(showing its first API key once) and starts a session. An address that was only invited to
accounts signs in like any other: verifying its code accepts its invitations that have not lapsed,
and the session opens the account the address created, else the one it joined last.

DynamoDB per code request: 1 GetItem (the address's last code, for its pace), 1 throttle update
(client IP), 1 GetItem (the address's tenant), 1 Query (the accounts it belongs to), 1 conditional
PutItem (the code), then 1 SES send; per verification: 1 throttle update (client IP), 1 GetItem, 1
conditional UpdateItem (a wrong code) or DeleteItem (the right one), then 1 GetItem and 1 Query (the
person's accounts), a tenant's creation on first use, per invitation accepted 1 Query and 1
transaction, 1 Query (the chosen account's partition), 1 PutItem (the session).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec

from herald.domain.access import Actor, ActorKind, Member, MemberStatus
from herald.domain.account import ACTIVE
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.members import Membership, lapsed
from herald.domain.plans import Plan
from herald.domain.signin import (
    CODE_TTL_SECONDS,
    MAX_CODE_TRIES,
    THROTTLE_WINDOW_SECONDS,
    CodePurpose,
    PendingCode,
    SignInLimits,
    address_key,
    code_digest,
    new_code,
    normalized_email,
)
from herald.observability import logger
from herald.services.outcomes import MemberChanged, TenantNotFound
from herald.services.ports.platform import PlatformMail, PlatformTenants
from herald.services.ports.tenants import MemberStore, SignInStore, TenantStore
from herald.services.sessions import SessionAuthenticator, StartedSession
from herald.services.tenants import TenantAdmin


class SignedIn(msgspec.Struct, frozen=True):
    session: StartedSession
    tenant_id: str
    # The first API key of a tenant this sign-in created, shown this once; None otherwise.
    api_key: str | None = None


def _invalid_code(detail: str = "; ask for a new one if it expired") -> HeraldError:
    return HeraldError(f"The code is not valid{detail}.", ErrorCode.INVALID_CODE)


def _wrong_code(tries_left: int) -> HeraldError:
    if tries_left <= 0:
        return _invalid_code(" and no longer works; ask for a new code")
    return _invalid_code(f" ({tries_left} {'try' if tries_left == 1 else 'tries'} left)")


def _too_soon(seconds: float) -> HeraldError:
    wait = max(math.ceil(seconds), 1)
    return HeraldError(
        "A code was sent to this address a moment ago; you can ask for a new one in "
        f"{wait} second{'' if wait == 1 else 's'}.",
        ErrorCode.RATE_LIMIT_EXCEEDED,
        extra={"retryAfter": wait},
    )


class SignInService:
    def __init__(
        self,
        *,
        store: SignInStore,
        tenants: TenantStore,
        members: MemberStore,
        sessions: SessionAuthenticator,
        mail: PlatformMail,
        limits: SignInLimits,
        clock: Callable[[], float] = time.time,
        ses_tenants: PlatformTenants | None = None,
    ) -> None:
        self._store = store
        self._limits = limits
        self._tenants = tenants
        self._members = members
        self._admin = TenantAdmin(tenants, ses_tenants=ses_tenants)
        self._sessions = sessions
        self._mail = mail
        self._clock = clock

    def request_code(
        self, purpose: CodePurpose, email: str, client_ip: str, console_url: str, name: str | None = None
    ) -> None:
        key = address_key(email)
        previous, now = self._store.code(key), self._clock()
        if previous is not None and now < previous.next_code_at(self._limits):
            raise _too_soon(previous.next_code_at(self._limits) - now)
        # Counted only for a request that would send mail: the limit is on the mail a client causes.
        self._limit(f"client:{client_ip}", self._limits.codes_per_client, "code requests")
        tenant_id = self._account_of(key, datetime.fromtimestamp(now, UTC))
        code, salt = new_code(), secrets.token_hex(8)
        pending = PendingCode(
            address_key=key,
            digest=code_digest(salt, code),
            salt=salt,
            issued_at=int(now),
            sends=(previous.streak(now) if previous else 0) + 1,
            name=name if tenant_id is None else None,
            tenant_id=tenant_id,
        )
        if not self._store.save_code(pending, replacing=previous):
            raise _too_soon(self._limits.first_code_delay)  # another request for the address won the race
        self._send(email, *_mail(purpose, code, tenant_id, console_url))

    def verify(self, email: str, code: str, client_ip: str) -> SignedIn:
        self._limit(f"verify:{client_ip}", self._limits.verifications_per_client, "code verifications")
        key = address_key(email)
        pending = self._store.code(key)
        if pending is None:
            raise _invalid_code()
        if not pending.usable(self._clock()):
            raise HeraldError("The code no longer works; ask for a new code.", ErrorCode.INVALID_CODE)
        if not pending.matches(code):
            self._store.wrong_try(pending)
            raise _wrong_code(MAX_CODE_TRIES - pending.tries - 1)
        if not self._store.use_code(pending):
            raise _invalid_code()
        return self._signed_in(pending, normalized_email(email), client_ip)

    def _account_of(self, key: str, now: datetime) -> str | None:
        """The account a code for the address opens: the one it created, else one it is a member
        of or invited to (always both reads, so the work is the same for every address)."""
        claimed = self._tenants.tenant_for_email(key)
        memberships = [item for item in self._members.memberships(key) if not lapsed(item, now)]
        return claimed or next((item.tenant_id for item in memberships), None)

    def _signed_in(self, pending: PendingCode, address: str, client_ip: str) -> SignedIn:
        """A session in an account of the person's: the invitations they had are accepted first. A
        code sent to an address without any account (``pending.tenant_id`` None) creates a free one;
        a code that was to open an account never does, even if that account is gone meanwhile."""
        key, now = pending.address_key, datetime.fromtimestamp(self._clock(), UTC)
        claimed = self._tenants.tenant_for_email(key)
        memberships = [item for item in self._members.memberships(key) if not lapsed(item, now)]
        api_key = None
        if pending.tenant_id is None and claimed is None and not memberships:
            person = Actor(ActorKind.MEMBER, "sign-up", address, client_ip)
            issued = self._admin.create(pending.name or address, address, Plan.FREE, person)
            claimed, api_key = issued.tenant_id, issued.api_key
            logger.info("tenant signed up", extra={"tenant_id": claimed})
        joined = self._join(memberships, address, client_ip, now)
        tenant_id, member = self._account(address, claimed, joined)
        return SignedIn(self._sessions.start(tenant_id, member.member_id), tenant_id, api_key)

    def _join(
        self, memberships: list[Membership], address: str, client_ip: str, now: datetime
    ) -> list[Membership]:
        """Accept each invitation of the address that has not lapsed (one transaction each, with its
        audit entry by the person themself); the person's memberships as they are afterwards."""
        return [
            msgspec.structs.replace(item, status=MemberStatus.ACTIVE, joined_at=iso(now))
            if item.status is MemberStatus.INVITED and self._accept(item, address, client_ip, now)
            else item
            for item in memberships
        ]

    def _accept(self, membership: Membership, address: str, client_ip: str, now: datetime) -> bool:
        try:
            member = self._tenants.load(membership.tenant_id).member(membership.member_id)
        except TenantNotFound:
            return False
        if member is None or member.email != address or lapsed(member, now):
            return False
        joined = msgspec.structs.replace(member, status=MemberStatus.ACTIVE, joined_at=iso(now))
        actor = Actor(ActorKind.MEMBER, member.member_id, address, client_ip)
        audit = entry(
            membership.tenant_id, iso(now), actor, AuditAction.MEMBER_JOINED, member.member_id,
            role=member.role.value,
        )  # fmt: skip
        try:
            self._members.join(membership.tenant_id, joined, audit)
        except MemberChanged:
            return False  # removed, or accepted by a concurrent sign-in
        logger.info("invitation accepted", extra={"tenant_id": membership.tenant_id})
        return True

    def _account(
        self, address: str, claimed: str | None, memberships: list[Membership]
    ) -> tuple[str, Member]:
        """The account the session opens: the one the address created, else the one it joined
        last; each checked in the account's own partition (the person's list is only a copy)."""
        active = [item for item in memberships if item.status is MemberStatus.ACTIVE]
        active.sort(key=lambda item: item.joined_at or item.created_at, reverse=True)
        candidates = dict.fromkeys([*([claimed] if claimed else []), *(item.tenant_id for item in active)])
        disabled = False
        for tenant_id in candidates:
            try:
                records = self._tenants.load(tenant_id)
            except TenantNotFound:
                continue
            member = next(
                (
                    item
                    for item in records.members
                    if item.email == address and item.status is MemberStatus.ACTIVE
                ),
                None,
            )
            if member is not None and records.profile.status == ACTIVE:
                return tenant_id, member
            disabled = disabled or member is not None
        if disabled:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        raise _invalid_code()

    def _limit(self, scope: str, limit: int, what: str) -> None:
        now = int(self._clock())
        window = now - now % THROTTLE_WINDOW_SECONDS
        if not self._store.count_request(scope, window, limit):
            retry_after = window + THROTTLE_WINDOW_SECONDS - now
            raise HeraldError(
                f"Too many {what} from this network; retry in {retry_after // 60 + 1} minutes.",
                ErrorCode.RATE_LIMIT_EXCEEDED,
                extra={"retryAfter": retry_after},
            )

    def _send(self, to: str, subject: str, text: str) -> None:
        try:
            self._mail.send(to, subject, text)
        except DependencyError as exc:
            logger.error("sign-in mail not sent", extra={"reason": str(exc)})
            raise HeraldError(
                "Herald could not send the email right now; retry shortly.", ErrorCode.DEPENDENCY_UNAVAILABLE
            ) from exc


def _mail(purpose: CodePurpose, code: str, tenant_id: str | None, console_url: str) -> tuple[str, str]:
    """The subject and text of a code request's mail: the one place the two kinds of address differ.
    A sign-in of an address without an account is told so; its stored code is never mailed, and
    guessing it is as hard as guessing a mailed one."""
    if tenant_id is None and purpose is CodePurpose.SIGN_IN:
        return "Sign in to Herald", _no_account(console_url)
    existing = tenant_id is not None and purpose is CodePurpose.SIGN_UP
    return f"Your Herald code: {code}", _code_text(code, existing)


def _code_text(code: str, existing: bool) -> str:
    opening = (
        "This address already has a Herald account; this code signs you in to it."
        if existing
        else "Enter this code in the Herald console to continue."
    )
    return (
        f"{opening}\n\n    {code}\n\nThe code works once, for {CODE_TTL_SECONDS // 60} minutes. "
        "If you did not ask for it, ignore this email."
    )


def _no_account(console_url: str) -> str:
    return (
        "Someone asked to sign in to Herald with this address, but it has no account.\n\n"
        f"To create one, sign up at {console_url}\n\nIf you did not ask, ignore this email."
    )
