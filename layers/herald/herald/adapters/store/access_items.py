"""Named API keys and members in their stored forms and back (items of the tenant's partition)."""

from __future__ import annotations

from herald.adapters.store.models import (
    KEY_SK,
    ApiKeyItem,
    MemberItem,
    MembershipItem,
    NamedKeyItem,
    api_key_pk,
    member_sk,
    named_key_sk,
    person_pk,
    tenant_pk,
)
from herald.adapters.store.table import Table
from herald.domain.access import ApiKey, Member, MemberStatus, Role, Scope
from herald.domain.clock import epoch_seconds
from herald.domain.members import Membership, invitation_until
from herald.domain.signin import address_key


def key_from(item: NamedKeyItem) -> ApiKey:
    previous = item.previous.attribute_values if item.previous else {}
    return ApiKey(
        key_id=item.key_id,
        name=item.name,
        scopes=tuple(Scope(scope) for scope in item.scopes),
        key_hash=item.key_hash,
        last_four=item.last_four,
        created_at=item.created_at,
        created_by=item.created_by,
        domains=tuple(item.domains or ()),
        expires_at=item.valid_until,
        last_used_at=item.last_used_at,
        previous={str(key): str(until) for key, until in previous.items()},
    )


def key_item(table: Table, tenant_id: str, key: ApiKey) -> NamedKeyItem:
    return table[NamedKeyItem](
        tenant_pk(tenant_id),
        named_key_sk(key.key_id),
        key_id=key.key_id,
        name=key.name,
        scopes=[scope.value for scope in key.scopes],
        domains=list(key.domains) or None,
        key_hash=key.key_hash,
        last_four=key.last_four,
        created_at=key.created_at,
        created_by=key.created_by,
        valid_until=key.expires_at,
        last_used_at=key.last_used_at,
        previous=dict(key.previous) or None,
    )


def key_lookup_item(table: Table, tenant_id: str, key_id: str, key_hash: str, created_at: str) -> ApiKeyItem:
    return table[ApiKeyItem](
        api_key_pk(key_hash), KEY_SK, tenant_id=tenant_id, key_id=key_id, created_at=created_at
    )


def member_from(item: MemberItem) -> Member:
    return Member(
        member_id=item.member_id,
        email=item.email,
        role=Role(item.role),
        status=MemberStatus(item.status),
        created_at=item.created_at,
        invited_by=item.invited_by,
        joined_at=item.joined_at,
        sessions_valid_from=item.sessions_valid_from,
    )


def member_item(table: Table, tenant_id: str, member: Member) -> MemberItem:
    return table[MemberItem](
        tenant_pk(tenant_id),
        member_sk(member.member_id),
        member_id=member.member_id,
        email=member.email,
        role=member.role.value,
        status=member.status.value,
        created_at=member.created_at,
        invited_by=member.invited_by,
        joined_at=member.joined_at,
        sessions_valid_from=member.sessions_valid_from,
        expires_at=invitation_expiry(member),
    )


def invitation_expiry(member: Member) -> int | None:
    """An invitation's items go (DynamoDB TTL, lazily: readers check the time too) once it lapses."""
    if member.status is not MemberStatus.INVITED:
        return None
    return epoch_seconds(invitation_until(member.created_at))


def membership_item(table: Table, tenant_id: str, tenant_name: str, member: Member) -> MembershipItem:
    return table[MembershipItem](
        person_pk(address_key(member.email)),
        tenant_pk(tenant_id),
        tenant_id=tenant_id,
        member_id=member.member_id,
        tenant_name=tenant_name,
        role=member.role.value,
        status=member.status.value,
        created_at=member.created_at,
        joined_at=member.joined_at,
        expires_at=invitation_expiry(member),
    )


def membership_from(item: MembershipItem) -> Membership:
    """A membership written before roles were copied onto it reads as an active member's."""
    return Membership(
        tenant_id=item.tenant_id,
        member_id=item.member_id,
        tenant_name=item.tenant_name,
        role=Role(item.role or Role.VIEWER.value),
        status=MemberStatus(item.status or MemberStatus.ACTIVE.value),
        created_at=item.created_at or "",
        joined_at=item.joined_at,
    )
