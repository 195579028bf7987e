"""Named API keys: scopes and what each allows, sending domains, the cap, rotation and revocation of
one key without touching the others, and the attacks: a key or a member handing out more than it
holds, a key used outside its scope or its domains."""

from __future__ import annotations

from datetime import timedelta

import pytest

from herald.domain.access import (
    ROLE_ABILITIES,
    Ability,
    Actor,
    ActorKind,
    Grant,
    Role,
    Scope,
)
from herald.domain.account import generate_api_key
from herald.domain.audit import AuditAction
from herald.domain.clock import utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.http.error_table import status_of
from herald.services.auth import Authenticator, require
from herald.services.keys import KeyService
from tests.fakes.common import full_grant
from tests.fakes.tenants import FakeTenantTable


class Rig:
    def __init__(self) -> None:
        self.table = FakeTenantTable()
        self.now = utc_now()
        self.table.add_tenant(
            "t-1", api_key=generate_api_key(), verified_domains=["a.example.com", "b.example.com"]
        )
        self.keys = KeyService(self.table, self.table, clock=lambda: self.now)
        self.auth = Authenticator(self.table, self.table, clock=lambda: self.now)

    def key(self, *scopes: Scope, domains: tuple[str, ...] = ()) -> str:
        return self.keys.create(
            "t-1", full_grant(), f"{'+'.join(scopes)} key", scopes, domains=domains
        ).secret

    def refused(self, call: object, *args: object, **kwargs: object) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            call(*args, **kwargs)  # type: ignore[operator]
        return caught.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def member(role: Role) -> Grant:
    return Grant(
        Actor(ActorKind.MEMBER, f"mem_{role}", f"{role}@example.com"), ROLE_ABILITIES[role], role=role
    )


@pytest.mark.parametrize(
    ("scopes", "allowed"),
    [
        ((Scope.SEND,), {Ability.SEND}),
        ((Scope.READ,), {Ability.READ}),
        (
            (Scope.MANAGE,),
            {
                Ability.PROVIDERS,
                Ability.DOMAINS,
                Ability.KEYS,
                Ability.SETTINGS,
                Ability.MEMBERS,
                Ability.BILLING,
                Ability.TEMPLATES,
                Ability.WEBHOOKS,
            },
        ),
        ((Scope.SEND, Scope.READ), {Ability.SEND, Ability.READ}),
        ((Scope.FULL,), set(Ability) - {Ability.OWNERSHIP}),
    ],
)
def test_each_scope_allows_exactly_its_abilities(
    rig: Rig, scopes: tuple[Scope, ...], allowed: set[Ability]
) -> None:
    tenant = rig.auth.authenticate(rig.key(*scopes))
    for ability in Ability:
        if ability in allowed:
            require(tenant, ability)
        else:
            assert rig.refused(require, tenant, ability).code is ErrorCode.INSUFFICIENT_SCOPE


def test_a_send_key_reading_jobs_is_refused_naming_the_scope_it_lacks(rig: Rig) -> None:
    tenant = rig.auth.authenticate(rig.key(Scope.SEND))
    refused = rig.refused(require, tenant, Ability.READ)
    assert (status_of(refused.code), refused.code, refused.message, refused.extra) == (
        403,
        ErrorCode.INSUFFICIENT_SCOPE,
        'This request needs the read scope, which the API key "send key" lacks.',
        {"requiredScope": "read"},
    )


def test_a_viewer_is_told_which_role_would_allow_it(rig: Rig) -> None:
    tenant = rig.auth.authenticate(rig.key(Scope.FULL))
    as_viewer = type(tenant)(
        **{**{f: getattr(tenant, f) for f in tenant.__struct_fields__}, "grant": member(Role.VIEWER)}
    )
    refused = rig.refused(require, as_viewer, Ability.KEYS)
    assert (
        refused.message
        == "This request needs the developer role or higher (the manage scope); your role is viewer."
    )


def test_a_send_key_cannot_mint_a_full_key(rig: Rig) -> None:
    grant = rig.auth.authenticate(rig.key(Scope.SEND, Scope.MANAGE)).grant
    rig.keys.create("t-1", grant, "ci", [Scope.SEND])  # within what it holds
    refused = rig.refused(rig.keys.create, "t-1", grant, "escalated", [Scope.FULL])
    assert (refused.code, refused.message) == (
        ErrorCode.INSUFFICIENT_SCOPE,
        "You cannot hand out more than you may do yourself: this key's scopes (full) allow read, which you lack.",
    )


def test_a_developer_cannot_rotate_the_owners_full_key_to_learn_its_secret(rig: Rig) -> None:
    refused = rig.refused(rig.keys.rotate, "t-1", member(Role.DEVELOPER), "key_t-1", 0)
    assert refused.code is ErrorCode.INSUFFICIENT_SCOPE
    # Revoking takes power away: a developer may revoke it.
    assert rig.keys.revoke("t-1", member(Role.DEVELOPER), "key_t-1").name == "Default key"


def test_revoking_one_key_leaves_the_others_working(rig: Rig) -> None:
    ci, billing = rig.key(Scope.SEND), rig.key(Scope.READ)
    ci_id = rig.auth.authenticate(ci).grant.actor.id
    rig.keys.revoke("t-1", full_grant(), ci_id)
    assert rig.refused(rig.auth.authenticate, ci).code is ErrorCode.INVALID_API_KEY
    assert rig.auth.authenticate(billing).grant.actor.name == "read key"
    assert [entry.action for entry in rig.table.audit[-3:]] == [
        AuditAction.KEY_CREATED,
        AuditAction.KEY_CREATED,
        AuditAction.KEY_REVOKED,
    ]


def test_a_key_limited_to_a_domain_carries_it_and_an_unknown_domain_is_refused(rig: Rig) -> None:
    limited = rig.auth.authenticate(rig.key(Scope.SEND, domains=("A.example.com",)))
    assert limited.grant.key_domains == frozenset({"a.example.com"})
    refused = rig.refused(rig.keys.create, "t-1", full_grant(), "x", [Scope.SEND], domains=["c.example.com"])
    assert refused.message == "c.example.com is not a sending domain of this account; add it first."


def test_the_fiftieth_key_is_the_last(rig: Rig) -> None:
    for number in range(49):
        rig.keys.create("t-1", full_grant(), f"k{number}", [Scope.READ])
    refused = rig.refused(rig.keys.create, "t-1", full_grant(), "one too many", [Scope.READ])
    assert (status_of(refused.code), refused.message) == (
        409,
        "This account has 50 keys, the most it may have; revoke one first.",
    )


def test_an_expiry_in_the_past_and_an_empty_name_are_refused(rig: Rig) -> None:
    past = rig.refused(
        rig.keys.create, "t-1", full_grant(), "late", [Scope.READ], expires_at=rig.now - timedelta(seconds=1)
    )
    blank = rig.refused(rig.keys.create, "t-1", full_grant(), "  ", [Scope.READ])
    assert (past.message, blank.message) == (
        "expiresAt must be in the future.",
        "A key's name is 1-100 printable characters.",
    )


def test_no_secret_is_in_the_keys_audit_entries(rig: Rig) -> None:
    secret = rig.key(Scope.SEND)
    rotated = rig.keys.rotate("t-1", full_grant(), rig.auth.authenticate(secret).grant.actor.id, 60)
    text = repr(rig.table.audit)
    assert secret not in text
    assert rotated.secret not in text
    assert secret[-8:] not in text
