"""API keys: format, hashing, header precedence, the cached lookup, grace periods and isolation."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from herald.adapters.store.models import ApiKeyRecord, TenantProfile
from herald.adapters.store.tenant_store import TenantNotFound, TenantRecords
from herald.domain.clock import iso, utc_now
from herald.domain.errors import HeraldError
from herald.services.auth import (
    CACHE_TTL_SECONDS,
    Authenticator,
    extract_api_key,
    generate_api_key,
    hash_api_key,
)


@dataclass
class FakeTenantStore:
    keys: dict[str, ApiKeyRecord] = field(default_factory=dict)
    profiles: dict[str, TenantProfile] = field(default_factory=dict)
    key_reads: int = 0

    def add(
        self, tenant_id: str, key: str, *, status: str = "active", valid_until: str | None = None
    ) -> None:
        key_hash = hash_api_key(key)
        self.keys[key_hash] = ApiKeyRecord(
            tenant_id=tenant_id, created_at=iso(utc_now()), valid_until=valid_until
        )
        self.profiles[tenant_id] = TenantProfile(
            tenant_id=tenant_id,
            name="t",
            email="t@example.com",
            plan="startup",
            status=status,
            created_at=iso(utc_now()),
            api_key_hash=key_hash,
        )

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        self.key_reads += 1
        return self.keys.get(key_hash)

    def load(self, tenant_id: str) -> TenantRecords:
        if tenant_id not in self.profiles:
            raise TenantNotFound(tenant_id)
        return TenantRecords(self.profiles[tenant_id])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _auth(store: FakeTenantStore, clock: Clock | None = None) -> Authenticator:
    return Authenticator(store, clock or Clock())  # type: ignore[arg-type]


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
        ({}, "missing_api_key"),
        ({"Authorization": "Basic abc"}, "missing_api_key"),
        ({"X-API-Key": "hk_123"}, "malformed_api_key"),
        ({"X-API-Key": "hk_" + "G" * 64}, "malformed_api_key"),
        ({"Authorization": "Bearer sk_live_" + "a" * 64}, "malformed_api_key"),
    ],
)
def test_missing_and_malformed_keys_are_401_with_their_codes(headers: dict[str, str], code: str) -> None:
    with pytest.raises(HeraldError) as caught:
        extract_api_key(headers)
    assert (caught.value.status, caught.value.code) == (401, code)


def test_an_unknown_key_is_invalid_and_a_disabled_tenant_is_forbidden() -> None:
    store = FakeTenantStore()
    good, disabled = generate_api_key(), generate_api_key()
    store.add("t-1", good)
    store.add("t-2", disabled, status="disabled")
    auth = _auth(store)
    assert auth.authenticate({"x-api-key": good}).tenant_id == "t-1"
    with pytest.raises(HeraldError) as unknown:
        auth.authenticate({"x-api-key": generate_api_key()})
    assert (unknown.value.status, unknown.value.code) == (401, "invalid_api_key")
    with pytest.raises(HeraldError) as forbidden:
        auth.authenticate({"x-api-key": disabled})
    assert (forbidden.value.status, forbidden.value.code) == (403, "tenant_disabled")


def test_a_warm_lookup_is_cached_for_at_most_60_seconds() -> None:
    store, clock = FakeTenantStore(), Clock()
    key = generate_api_key()
    store.add("t-1", key)
    auth = _auth(store, clock)
    for _ in range(10):
        auth.authenticate({"x-api-key": key})
    assert store.key_reads == 1
    clock.now += CACHE_TTL_SECONDS + 0.001
    auth.authenticate({"x-api-key": key})
    assert store.key_reads == 2


def test_a_key_past_its_grace_period_is_refused_even_if_its_record_lingers() -> None:
    store = FakeTenantStore()
    old, fresh = generate_api_key(), generate_api_key()
    store.add("t-1", old, valid_until=iso(utc_now() - timedelta(seconds=1)))
    store.add("t-2", fresh, valid_until=iso(utc_now() + timedelta(hours=1)))
    auth = _auth(store)
    with pytest.raises(HeraldError) as caught:
        auth.authenticate({"x-api-key": old})
    assert caught.value.code == "invalid_api_key"
    assert auth.authenticate({"x-api-key": fresh}).tenant_id == "t-2"


def test_forget_drops_the_tenants_cached_context() -> None:
    store = FakeTenantStore()
    key = generate_api_key()
    store.add("t-1", key)
    auth = _auth(store)
    auth.authenticate({"x-api-key": key})
    auth.forget("t-1")
    auth.authenticate({"x-api-key": key})
    assert store.key_reads == 2
