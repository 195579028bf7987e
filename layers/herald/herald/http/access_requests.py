"""The request bodies of the access routes: named keys (and, with them, members)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from herald.domain.access import MAX_KEY_DOMAINS, Role, Scope
from herald.http.requests import DOMAIN_NAME, EmailAddress, StrictBody, WindowEdge

KeyDomain = Annotated[
    str, Field(min_length=4, max_length=253, pattern=DOMAIN_NAME), AfterValidator(str.lower)
]


class CreateKeyRequest(StrictBody):
    name: str = Field(
        min_length=1, max_length=100, description="What the key is for (CI, billing service, …)"
    )
    scopes: list[Scope] = Field(
        min_length=1, max_length=4, description="send, read, manage, or full (all three)"
    )
    domains: list[KeyDomain] = Field(
        default_factory=list,
        max_length=MAX_KEY_DOMAINS,
        description="Sending domains of the account this key may send from; empty or absent: any",
    )
    expiresAt: WindowEdge | None = Field(  # noqa: N815 (the API's field names)
        default=None, description="ISO-8601 time with offset after which the key stops working"
    )


class InviteMemberRequest(StrictBody):
    email: EmailAddress = Field(description="The person's address: they sign in with it to accept")
    role: Role = Field(description="owner, admin, developer or viewer")


class MemberRoleRequest(StrictBody):
    role: Role = Field(description="owner, admin, developer or viewer")


class SwitchAccountRequest(StrictBody):
    tenantId: str = Field(  # noqa: N815 (the API's field names)
        min_length=1, max_length=64, pattern=r"^[A-Za-z0-9-]+$", description="An account of yours"
    )
