"""The breaker items in DynamoDB (moto): read with what a pass reads anyway, written on the version
they were read at, so two workers never both win a probe."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from herald.adapters.store.breaker_store import DynamoBreakers
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.breakers import (
    ENDPOINT_POLICY,
    PROVIDER_POLICY,
    Breaker,
    BreakerKey,
    BreakerKind,
    BreakerState,
    claim_probe,
    failed,
)
from herald.services.ports import TenantNotFound
from herald.services.tenants import TenantAdmin
from herald_harness.in_moto import HeraldInMoto, herald_in_moto

T0 = 1_700_000_000


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def open_breaker(breakers: DynamoBreakers, key: BreakerKey) -> Breaker:
    """Five failures, each stored as a worker stores it."""
    breaker = Breaker(key)
    policy = ENDPOINT_POLICY if key.kind is BreakerKind.ENDPOINT else PROVIDER_POLICY
    for _ in range(5):
        changed = failed(breaker, T0, "HTTP 503", policy)
        assert changed is not None
        assert breakers.save(changed)
        breaker = changed
    assert breaker.state is BreakerState.OPEN
    return breaker


def test_a_tenants_provider_breaker_is_read_with_its_partition_and_the_platforms_by_key(
    herald: HeraldInMoto,
) -> None:
    tenant = TenantAdmin(DynamoTenantStore(herald.table)).create("Acme", "ops@acme.test", "startup").tenant_id
    breakers = DynamoBreakers(herald.table)
    mine = open_breaker(breakers, BreakerKey(BreakerKind.PROVIDER, tenant, "SENDGRID"))
    platform = open_breaker(breakers, BreakerKey(BreakerKind.PROVIDER, None, "SES"))

    assert DynamoTenantStore(herald.table).load(tenant).breakers == (mine,)
    assert breakers.read([platform.key, BreakerKey(BreakerKind.PROVIDER, None, "RESEND")]) == {
        platform.key: platform
    }


def test_an_endpoint_breaker_is_read_with_the_profile_in_one_call_and_listed_by_origin(
    herald: HeraldInMoto,
) -> None:
    tenant = TenantAdmin(DynamoTenantStore(herald.table)).create("Acme", "ops@acme.test", "indie").tenant_id
    breakers = DynamoBreakers(herald.table)
    key = BreakerKey(BreakerKind.ENDPOINT, tenant, "https://hooks.example")
    assert breakers.with_profile(tenant, key)[1] is None
    stored = open_breaker(breakers, key)

    profile, breaker = breakers.with_profile(tenant, key)

    assert (profile.tenant_id, breaker) == (tenant, stored)
    assert breakers.endpoints(tenant) == [stored]
    # The tenant's own partition (read by every request's authentication) does not grow with origins.
    assert DynamoTenantStore(herald.table).load(tenant).breakers == ()
    with pytest.raises(TenantNotFound):
        breakers.with_profile("no-such-tenant", key)


def test_two_workers_claiming_the_same_probe_one_wins(herald: HeraldInMoto) -> None:
    breakers = DynamoBreakers(herald.table)
    opened = open_breaker(breakers, BreakerKey(BreakerKind.PROVIDER, None, "SES"))

    first = breakers.save(claim_probe(opened, T0 + 30, PROVIDER_POLICY))
    second = breakers.save(claim_probe(opened, T0 + 31, PROVIDER_POLICY))

    assert (first, second) == (True, False)
    [stored] = breakers.read([opened.key]).values()
    assert (stored.state, stored.probe_until) == (
        BreakerState.OPEN,
        T0 + 30 + PROVIDER_POLICY.probe_lease_seconds,
    )
    # A fresh breaker is created once: a second creator finds it there.
    assert not breakers.save(replace(opened, version=1))
