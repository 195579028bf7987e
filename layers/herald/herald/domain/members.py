"""Members of an account: who may give which role, when an invitation lapses, and the accounts one
person belongs to.

A member's role is given by a caller that holds every ability of that role (and of the role it
replaces): an admin cannot make or unmake an owner; only an owner hands ownership on. An account
always keeps one active owner. An invitation is accepted by signing in to the console with the
invited address within ``INVITATION_TTL_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import msgspec

from herald.domain.access import (
    INVITATION_TTL_SECONDS,
    ROLE_ABILITIES,
    Grant,
    Member,
    MemberStatus,
    Role,
)
from herald.domain.clock import parse_iso
from herald.domain.errors import ErrorCode, HeraldError


class Membership(msgspec.Struct, frozen=True):
    """One account a person belongs to, as the person's own list holds it (the member item in the
    account's partition is the truth; this copy is for listing and choosing)."""

    tenant_id: str
    member_id: str
    tenant_name: str
    role: Role
    status: MemberStatus
    created_at: str
    joined_at: str | None = None


def invitation_until(created_at: str) -> datetime:
    return parse_iso(created_at) + timedelta(seconds=INVITATION_TTL_SECONDS)


def lapsed(member: Member | Membership, now: datetime) -> bool:
    """An invitation not accepted in time: it no longer counts, lists or opens the account."""
    return member.status is MemberStatus.INVITED and invitation_until(member.created_at) <= now


def current(members: Iterable[Member], now: datetime) -> list[Member]:
    """The account's members and invitations that still stand."""
    return [member for member in members if not lapsed(member, now)]


def lowers(old: Role, new: Role) -> bool:
    """Whether ``new`` takes away any ability of ``old`` (the member's sessions end then)."""
    return not ROLE_ABILITIES[old] <= ROLE_ABILITIES[new]


def require_within(grant: Grant, role: Role, doing: str) -> None:
    """403 unless the caller holds every ability of ``role``: nobody hands out (or takes away) more
    than they have. ``doing`` completes "You cannot …"."""
    beyond = ROLE_ABILITIES[role] - grant.abilities
    if beyond:
        only = " Only an owner may make, change or remove an owner." if role is Role.OWNER else ""
        raise HeraldError(
            f"You cannot {doing}: the {role} role allows {', '.join(sorted(beyond))}, which you lack.{only}",
            ErrorCode.INSUFFICIENT_SCOPE,
        )


def active_owners(members: Iterable[Member], but: str) -> list[Member]:
    """The active owners other than the member ``but``."""
    return [
        member
        for member in members
        if member.role is Role.OWNER and member.status is MemberStatus.ACTIVE and member.member_id != but
    ]


def last_owner(member: Member) -> HeraldError:
    return HeraldError(
        f"{member.email} is the account's last owner; make another member owner first.",
        ErrorCode.LAST_OWNER,
    )
