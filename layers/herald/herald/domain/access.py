"""Who may do what in an account: named API keys with scopes, members with roles, and the abilities
both come down to.

Every route needs one ability. A key holds the abilities of its scopes, a member those of its role;
a refusal names the scope (for a key) or the role (for a member) that would have allowed it. A key
may be limited to sending domains. A caller never hands out more than it holds: a key or a role it
creates or grants has only abilities the caller has itself.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from enum import StrEnum

import msgspec

# A tenant's named keys and members (each is a small item in the tenant's partition, which every
# request reads: the caps keep that read at a few units).
MAX_KEYS = 50
MAX_MEMBERS = 100
MAX_KEY_DOMAINS = 20
# A key's last use is written at most once this often (a small conditional update).
LAST_USED_INTERVAL_SECONDS = 300
# The name of the key every account starts with.
FIRST_KEY_NAME = "Default key"
# How long an invitation can be accepted.
INVITATION_TTL_SECONDS = 7 * 24 * 3600


class Ability(StrEnum):
    SEND = "send"
    READ = "read"
    PROVIDERS = "providers"
    DOMAINS = "domains"
    KEYS = "keys"
    # Signing secret, suppressions, endpoints: the account's delivery settings.
    SETTINGS = "settings"
    # Email templates: create, edit, publish, delete (reading and previewing them is READ).
    TEMPLATES = "templates"
    # Event types, subscriptions and portal links: the account's webhook platform (sending an
    # event is SEND, reading them READ).
    WEBHOOKS = "webhooks"
    MEMBERS = "members"
    BILLING = "billing"
    OWNERSHIP = "ownership"


class Scope(StrEnum):
    SEND = "send"
    READ = "read"
    MANAGE = "manage"
    FULL = "full"


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    DEVELOPER = "developer"
    VIEWER = "viewer"


_MANAGING = frozenset(
    {
        Ability.PROVIDERS,
        Ability.DOMAINS,
        Ability.KEYS,
        Ability.SETTINGS,
        Ability.MEMBERS,
        Ability.BILLING,
        Ability.TEMPLATES,
        Ability.WEBHOOKS,
    }
)
# Ownership is a person's: no key can transfer an account.
SCOPE_ABILITIES: Mapping[Scope, frozenset[Ability]] = {
    Scope.SEND: frozenset({Ability.SEND}),
    Scope.READ: frozenset({Ability.READ}),
    Scope.MANAGE: _MANAGING,
    Scope.FULL: _MANAGING | {Ability.SEND, Ability.READ},
}
ROLE_ABILITIES: Mapping[Role, frozenset[Ability]] = {
    Role.OWNER: frozenset(Ability),
    Role.ADMIN: frozenset(Ability) - {Ability.BILLING, Ability.OWNERSHIP},
    Role.DEVELOPER: frozenset(
        {
            Ability.SEND,
            Ability.READ,
            Ability.PROVIDERS,
            Ability.DOMAINS,
            Ability.KEYS,
            Ability.TEMPLATES,
            Ability.WEBHOOKS,
        }
    ),
    Role.VIEWER: frozenset({Ability.READ}),
}
# Roles from the most to the least able: the first that holds an ability is the one a refusal names.
ROLES_BY_REACH = (Role.VIEWER, Role.DEVELOPER, Role.ADMIN, Role.OWNER)


def scopes_abilities(scopes: Iterable[Scope]) -> frozenset[Ability]:
    return frozenset().union(*(SCOPE_ABILITIES[scope] for scope in scopes))


def scope_for(ability: Ability) -> Scope | None:
    """The narrowest scope that allows ``ability`` (the one a refusal names); None: no key may."""
    narrowest = (Scope.SEND, Scope.READ, Scope.MANAGE)
    return next((scope for scope in narrowest if ability in SCOPE_ABILITIES[scope]), None)


def least_role_for(ability: Ability) -> Role:
    return next(role for role in ROLES_BY_REACH if ability in ROLE_ABILITIES[role])


class ActorKind(StrEnum):
    KEY = "key"
    MEMBER = "member"
    OPERATOR = "operator"
    PROCESSOR = "processor"
    SYSTEM = "system"
    # A tenant's customer through a portal link (its subscriber id; only its own subscriptions).
    PORTAL = "portal"


class Actor(msgspec.Struct, frozen=True):
    """Who made a change, as the audit log names them: a key (its id and name), a member (id and
    email), the operator (the CLI user), a payment processor, or Herald itself (a schedule)."""

    kind: ActorKind
    id: str
    name: str
    # The client's address as API Gateway saw it (never a header the client writes).
    ip: str | None = None


def generate_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


class ApiKey(msgspec.Struct, frozen=True):
    """A named key of a tenant. Only its hash is stored; ``prefix`` and ``last_four`` are the parts
    shown afterwards (``hk_1a2b…9f3e``)."""

    key_id: str
    name: str
    scopes: tuple[Scope, ...]
    key_hash: str
    last_four: str
    created_at: str
    created_by: str
    # Sending domains the key may send from; empty: any of the tenant's.
    domains: tuple[str, ...] = ()
    expires_at: str | None = None
    last_used_at: str | None = None
    # Hashes of the key's earlier secrets still in a rotation's grace period -> valid until.
    previous: Mapping[str, str] = msgspec.field(default_factory=dict)

    @property
    def abilities(self) -> frozenset[Ability]:
        return scopes_abilities(self.scopes)


class MemberStatus(StrEnum):
    INVITED = "invited"
    ACTIVE = "active"


class Member(msgspec.Struct, frozen=True):
    member_id: str
    email: str
    role: Role
    status: MemberStatus
    created_at: str
    invited_by: str
    joined_at: str | None = None
    # Sessions of this member started before this time have ended (a lower role, a new invitation).
    sessions_valid_from: str | None = None

    @property
    def abilities(self) -> frozenset[Ability]:
        return ROLE_ABILITIES[self.role] if self.status is MemberStatus.ACTIVE else frozenset()


class Grant(msgspec.Struct, frozen=True):
    """What the caller of one request may do: its abilities, and the sending domains its key is
    limited to (None: any verified domain of the tenant)."""

    actor: Actor
    abilities: frozenset[Ability]
    # Set for a member's session: the refusal names the role, not a scope.
    role: Role | None = None
    key_domains: frozenset[str] | None = None
    # The key's earlier secret, still in a rotation's grace period: it works, but cannot rotate.
    rotated_out: bool = False

    def allows(self, ability: Ability) -> bool:
        return ability in self.abilities
