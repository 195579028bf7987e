"""API keys: format, hashing, header precedence, the lookup read fresh per request, grace periods,
revocation, expiry, the last use written at most once per interval."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from herald.domain.access import Actor, ActorKind, Scope
from herald.domain.account import generate_api_key, hash_api_key
from herald.domain.clock import iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.http.credentials import extract_api_key
from herald.http.error_table import status_of
from herald.services.auth import Authenticator
from herald.services.keys import IssuedNamedKey, KeyService
from herald.services.tenants import TenantAdmin
from tests.fakes.common import full_grant
from tests.fakes.tenants import FakeTenantTable


class Rig:
    def __init__(self) -> None:
        self.table = FakeTenantTable()
        self.now = utc_now()
        self.auth = Authenticator(self.table, self.table, clock=lambda: self.now)
        self.keys = KeyService(self.table, self.table, clock=lambda: self.now)

    def add(self, tenant_id: str, *, status: str = "active") -> str:
        key = generate_api_key()
        self.table.add_tenant(tenant_id, api_key=key, status=status)
        return key

    def rotate(self, tenant_id: str, grace_seconds: int) -> IssuedNamedKey:
        return self.keys.rotate(tenant_id, full_grant(), f"key_{tenant_id}", grace_seconds)

    def at(self, moment: datetime) -> None:
        self.now = moment

    def refused(self, key: str) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.auth.authenticate(key)
        return caught.value


def test_generated_keys_have_the_documented_format_and_are_unique() -> None:
    keys = {generate_api_key() for _ in range(200)}
    assert len(keys) == 200
    assert all(key.startswith("hk_") and len(key) == 67 for key in keys)
    assert hash_api_key("hk_" + "0" * 64) != "hk_" + "0" * 64


def test_x_api_key_wins_over_bearer_and_bearer_is_accepted_alone() -> None:
    a, b = generate_api_key(), generate_api_key()
    assert extract_api_key({"X-API-Key": a, "Authorization": f"Bearer {b}"}) == a
    assert extract_api_key({"authorization": f"Bearer {b}"}) == b


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({}, ErrorCode.MISSING_API_KEY),
        ({"Authorization": "Basic abc"}, ErrorCode.MISSING_API_KEY),
        ({"X-API-Key": "hk_123"}, ErrorCode.MALFORMED_API_KEY),
        ({"X-API-Key": "hk_" + "G" * 64}, ErrorCode.MALFORMED_API_KEY),
        ({"Authorization": "Bearer sk_live_" + "a" * 64}, ErrorCode.MALFORMED_API_KEY),
    ],
)
def test_missing_and_malformed_keys_are_401_with_their_codes(
    headers: dict[str, str], code: ErrorCode
) -> None:
    with pytest.raises(HeraldError) as caught:
        extract_api_key(headers)
    assert (status_of(caught.value.code), caught.value.code) == (401, code)


def test_an_unknown_key_is_invalid_and_a_disabled_tenant_is_forbidden() -> None:
    rig = Rig()
    good, disabled = rig.add("t-1"), rig.add("t-2", status="disabled")
    assert rig.auth.authenticate(good).tenant_id == "t-1"
    unknown = rig.refused(generate_api_key())
    assert (status_of(unknown.code), unknown.code, unknown.message) == (
        401,
        ErrorCode.INVALID_API_KEY,
        "The API key is not valid.",
    )
    forbidden = rig.refused(disabled)
    assert (status_of(forbidden.code), forbidden.code) == (403, ErrorCode.TENANT_DISABLED)


def test_a_warm_container_reads_the_tenant_on_every_request_and_a_keys_owner_once() -> None:
    rig = Rig()
    key = rig.add("t-1")
    for _ in range(10):
        rig.auth.authenticate(key)
    assert (rig.table.key_reads, rig.table.loads, rig.table.touches) == (1, 10, 1)


def test_a_keys_last_use_is_written_once_per_five_minutes() -> None:
    rig = Rig()
    key, start = rig.add("t-1"), rig.now
    rig.auth.authenticate(key)
    rig.at(start + timedelta(seconds=299))
    rig.auth.authenticate(key)
    assert rig.table.named["t-1"]["key_t-1"].last_used_at == iso(start)
    rig.at(start + timedelta(seconds=300))
    rig.auth.authenticate(key)
    assert (rig.table.touches, rig.table.named["t-1"]["key_t-1"].last_used_at) == (2, iso(rig.now))


def test_an_unwritable_last_use_does_not_fail_the_request() -> None:
    rig = Rig()
    key = rig.add("t-1")
    rig.table.unwritable_touch = True
    assert rig.auth.authenticate(key).tenant_id == "t-1"
    assert rig.table.named["t-1"]["key_t-1"].last_used_at is None


def test_a_key_in_its_grace_period_stops_at_the_second_it_was_given() -> None:
    rig = Rig()
    old = rig.add("t-1")
    rig.rotate("t-1", grace_seconds=60)
    rotated_at = rig.now

    rig.at(rotated_at + timedelta(seconds=59))
    assert rig.auth.authenticate(old).tenant_id == "t-1"
    rig.at(rotated_at + timedelta(seconds=60))
    assert rig.refused(old).code is ErrorCode.INVALID_API_KEY


def test_a_change_made_anywhere_applies_to_the_next_request() -> None:
    """No container keeps a tenant between requests: a change through another container (here the
    store itself, as the CLI or another API container writes it) holds at once."""
    rig = Rig()
    key = rig.add("t-1")
    rig.auth.authenticate(key)
    operator = Actor(ActorKind.OPERATOR, "ops", "ops")
    TenantAdmin(rig.table).set_status("t-1", active=False, actor=operator)
    assert rig.refused(key).code is ErrorCode.TENANT_DISABLED
    TenantAdmin(rig.table).set_status("t-1", active=True, actor=operator)
    TenantAdmin(rig.table).set_plan("t-1", "indie", operator)
    assert rig.auth.authenticate(key).plan == "indie"


def test_rotation_without_grace_ends_every_other_secret_of_the_key() -> None:
    """A leaked key must die with the rotation, also a secret kept alive by an earlier grace period."""
    rig = Rig()
    first = rig.add("t-1")
    second = rig.rotate("t-1", grace_seconds=3600)
    assert second.previous_valid_until is not None
    assert rig.auth.authenticate(first).tenant_id == "t-1"  # in its grace period
    third = rig.rotate("t-1", grace_seconds=0)
    assert third.previous_valid_until is None
    assert rig.refused(first).code is ErrorCode.INVALID_API_KEY
    assert rig.refused(second.secret).code is ErrorCode.INVALID_API_KEY
    assert rig.auth.authenticate(third.secret).tenant_id == "t-1"


def test_a_graceful_rotation_keeps_the_old_secret_until_the_time_it_names() -> None:
    rig = Rig()
    first = rig.add("t-1")
    second = rig.rotate("t-1", grace_seconds=60)
    assert rig.auth.authenticate(first).tenant_id == rig.auth.authenticate(second.secret).tenant_id == "t-1"
    assert rig.table.named["t-1"]["key_t-1"].previous == {hash_api_key(first): second.previous_valid_until}


@pytest.mark.parametrize("grace", [-1, 604_801])
def test_a_grace_period_outside_a_week_is_refused(grace: int) -> None:
    rig = Rig()
    rig.add("t-1")
    with pytest.raises(HeraldError) as caught:
        rig.rotate("t-1", grace_seconds=grace)
    assert caught.value.message == "graceSeconds must be between 0 and 604800."


def test_a_key_past_its_expiry_is_invalid_from_that_second() -> None:
    rig = Rig()
    rig.add("t-1")
    issued = rig.keys.create("t-1", full_grant(), "CI", [Scope.SEND], expires_at=rig.now + timedelta(hours=1))
    rig.at(rig.now + timedelta(minutes=59, seconds=59))
    assert rig.auth.authenticate(issued.secret).grant.actor.name == "CI"
    rig.at(rig.now + timedelta(seconds=1))
    assert rig.refused(issued.secret).code is ErrorCode.INVALID_API_KEY


def test_a_revoked_key_is_refused_on_the_next_request_also_by_a_container_that_knew_it() -> None:
    rig = Rig()
    rig.add("t-1")
    other = Authenticator(rig.table, rig.table, clock=lambda: rig.now)
    issued = rig.keys.create("t-1", full_grant(), "billing", [Scope.READ])
    assert other.authenticate(issued.secret).grant.actor.id == issued.key.key_id
    rig.keys.revoke("t-1", full_grant(), issued.key.key_id)
    with pytest.raises(HeraldError) as caught:
        other.authenticate(issued.secret)
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.INVALID_API_KEY,
        "The API key is not valid.",
    )


def test_a_secret_in_its_grace_period_works_but_cannot_rotate_its_key() -> None:
    rig = Rig()
    old = rig.add("t-1")
    rig.rotate("t-1", grace_seconds=600)
    stale = rig.auth.authenticate(old).grant
    with pytest.raises(HeraldError) as caught:
        rig.keys.rotate("t-1", stale, "key_t-1", 0)
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.KEY_ROTATED,
        "This key was rotated already; use its newest secret.",
    )
