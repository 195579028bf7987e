"""The answers of the access routes: named keys, members and the audit log (imported with those
routes only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from msgspec import Meta

from herald.domain.access import Scope
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain.access import ApiKey
    from herald.services.keys import IssuedNamedKey

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
