"""The answers of the access routes: named keys, members and the audit log (imported with those
routes only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import msgspec
from msgspec import Meta

from herald.domain.access import ActorKind, MemberStatus, Role, Scope
from herald.domain.audit import AuditAction
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.access import ApiKey
    from herald.domain.access import Member as MemberRecord
    from herald.domain.audit import AuditEntry, AuditPage
    from herald.services.keys import IssuedNamedKey
    from herald.services.members import AccountChoice, Invited

KEY_PREFIX = "hk_"


class Key(Answer):
    id: str
    name: str
    scopes: list[Scope]
    domains: Annotated[list[str], Meta(description="Sending domains the key may use; empty: any")]
    preview: Annotated[str, Meta(description="The key's prefix and last four characters")]
    created_at: Timestamp
    created_by: Annotated[
        str, Meta(description="Who created it: a member's address, a key's name, the operator")
    ]
    last_used_at: Annotated[Timestamp | None, Meta(description="Recorded at most every five minutes")]
    expires_at: Timestamp | None
    previous_valid_until: Annotated[
        Timestamp | None,
        Meta(description="Until when the key's previous secret still works (after a rotation)"),
    ]

    @classmethod
    def of(cls, key: ApiKey) -> Key:
        return cls(
            id=key.key_id,
            name=key.name,
            scopes=list(key.scopes),
            domains=list(key.domains),
            preview=f"{KEY_PREFIX}…{key.last_four}",
            created_at=key.created_at,
            created_by=key.created_by,
            last_used_at=key.last_used_at,
            expires_at=key.expires_at,
            previous_valid_until=max(key.previous.values(), default=None),
        )


class NewKey(Answer):
    id: str
    name: str
    scopes: list[Scope]
    domains: list[str]
    key: Annotated[str, Meta(description="The key, shown this once")]
    created_at: Timestamp
    expires_at: Timestamp | None
    previous_valid_until: Annotated[
        Timestamp | None,
        Meta(description="After a rotation: until when the previous secret works; null: it stopped at once"),
    ]

    @classmethod
    def of(cls, issued: IssuedNamedKey) -> NewKey:
        key = issued.key
        return cls(
            id=key.key_id,
            name=key.name,
            scopes=list(key.scopes),
            domains=list(key.domains),
            key=issued.secret,
            created_at=key.created_at,
            expires_at=key.expires_at,
            previous_valid_until=issued.previous_valid_until,
        )


class Member(Answer):
    id: str
    email: str
    role: Role
    status: Annotated[MemberStatus, Meta(description="invited until they first sign in, then active")]
    invited_by: Annotated[
        str, Meta(description="Who invited them: a member's address, a key's name, the operator")
    ]
    created_at: Timestamp
    joined_at: Annotated[Timestamp | None, Meta(description="When they accepted; null while invited")]

    @classmethod
    def of(cls, member: MemberRecord) -> Member:
        return cls(
            id=member.member_id,
            email=member.email,
            role=member.role,
            status=member.status,
            invited_by=member.invited_by,
            created_at=member.created_at,
            joined_at=member.joined_at,
        )


class NewMember(Member):
    invitation_sent: Annotated[
        bool, Meta(description="Whether the invitation mail went out (they can sign in to accept either way)")
    ]

    @classmethod
    def invited(cls, invited: Invited) -> NewMember:
        return cls(**msgspec.structs.asdict(Member.of(invited.member)), invitation_sent=invited.mailed)


class ConsoleAccount(Answer):
    tenant_id: str
    name: str
    role: Role
    current: Annotated[bool, Meta(description="The account this session is signed in to")]

    @classmethod
    def of(cls, choice: AccountChoice) -> ConsoleAccount:
        return cls(tenant_id=choice.tenant_id, name=choice.name, role=choice.role, current=choice.current)


class SwitchedAccount(Answer):
    tenant_id: str


class AuditActor(Answer):
    type: Annotated[
        ActorKind,
        Meta(
            description="key, member, operator, processor, system or portal (a customer through a portal link: its subscriber id, or all)"
        ),
    ]
    id: Annotated[str, Meta(description="The key's or member's id, the operator's user, the processor")]
    name: Annotated[str, Meta(description="The key's name, the member's address, …")]


class AuditLogEntry(Answer):
    id: str
    at: Timestamp
    action: AuditAction
    target: Annotated[str, Meta(description="What changed: a key id, a provider, a domain, an address")]
    actor: AuditActor
    ip: Annotated[str | None, Meta(description="The client's address as the API's edge saw it")]
    details: Annotated[dict[str, str], Meta(description="Plain facts of the change; never a secret")]

    @classmethod
    def of(cls, entry: AuditEntry) -> AuditLogEntry:
        actor = entry.actor
        return cls(
            id=entry.entry_id,
            at=entry.at,
            action=entry.action,
            target=entry.target,
            actor=AuditActor(type=actor.kind, id=actor.id, name=actor.name),
            ip=actor.ip,
            details=dict(entry.details),
        )


class AuditLogPage(Answer):
    entries: Annotated[list[AuditLogEntry], Meta(description="Newest first")]
    next_cursor: Annotated[
        str | None, Meta(description="Pass as cursor for the next page; null: the log ends here")
    ]

    @classmethod
    def of(cls, page: AuditPage) -> AuditLogPage:
        return cls(entries=[AuditLogEntry.of(entry) for entry in page.entries], next_cursor=page.next_cursor)
