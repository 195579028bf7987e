"""The breaker items in DynamoDB (moto): read with what a pass reads anyway, written on the version
they were read at, so two workers never both win a probe."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from msgspec.structs import replace

from herald.adapters.store.breaker_store import DynamoBreakers
from herald.adapters.store.job_store import DynamoJobStore
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
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, JobStatus
from herald.services.outcomes import TenantNotFound
from herald.services.tenants import TenantAdmin
from herald_harness.in_moto import HeraldInMoto, herald_in_moto
from tests.fakes.common import OPERATOR

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
    tenant = (
        TenantAdmin(DynamoTenantStore(herald.table))
        .create("Acme", "ops@acme.test", "startup", OPERATOR)
        .tenant_id
    )
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
    tenant = (
        TenantAdmin(DynamoTenantStore(herald.table))
        .create("Acme", "ops@acme.test", "indie", OPERATOR)
        .tenant_id
    )
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


# ---------------------------------------------------------------- the routes, through the API function


def failed_webhook(herald: HeraldInMoto, key: str, tenant_id: str, n: int) -> str:
    """A webhook accepted through the API, then failed as the store fails a job (gsi2 entry)."""
    accepted = herald.api(
        "POST",
        "/api/v1/notifications/webhook",
        {"url": "https://93.184.216.34/in", "payload": {"n": n}},
        key=key,
    )
    assert accepted.status == 202, accepted.text
    job_id, created_at = accepted.data["jobId"], accepted.data["createdAt"]
    message = JobMessage(job_id, tenant_id, Channel.WEBHOOK, "startup", 0, None, 5, created_at)
    DynamoJobStore(herald.table, 3).mark_enqueue_failed(message, "the endpoint answered HTTP 503", created_at)
    return str(job_id)


def test_recover_requeues_the_failed_jobs_of_the_window_through_the_index(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    job_ids = [failed_webhook(herald, key, tenant_id, n) for n in range(3)]
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()

    answer = herald.api(
        "POST", "/api/v1/notifications/jobs/recover", {"since": since, "type": "webhook"}, key=key
    )

    assert answer.status == 200, answer.text
    assert answer.data == {"requeued": 3, "nextCursor": None}
    assert {herald.job_state(tenant_id, job_id).status for job_id in job_ids} == {JobStatus.PENDING}  # type: ignore[union-attr]
    again = herald.api("POST", "/api/v1/notifications/jobs/recover", {"since": since}, key=key)
    assert again.data == {"requeued": 0, "nextCursor": None}
    foreign = herald.api(
        "POST", "/api/v1/notifications/jobs/recover", {"since": since, "cursor": "bm90LWEtY3Vyc29y"}, key=key
    )
    assert (foreign.status, foreign.body["code"]) == (400, "invalid_cursor")
    unknown_field = herald.api(
        "POST", "/api/v1/notifications/jobs/recover", {"since": since, "limit": 5}, key=key
    )
    assert unknown_field.status == 400
    unix_time = herald.api(
        "POST", "/api/v1/notifications/jobs/recover", {"since": since, "until": 1_700_000_000}, key=key
    )
    assert (unix_time.status, unix_time.body["message"]) == (
        400,
        ["until: must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:30:00Z"],
    )


def test_the_tenants_endpoints_are_listed_and_enabled_through_the_api(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    breakers = DynamoBreakers(herald.table)
    opened = open_breaker(breakers, BreakerKey(BreakerKind.ENDPOINT, tenant_id, "https://hooks.example"))

    listed = herald.api("GET", "/api/v1/account/endpoints", key=key)
    enabled = herald.api("POST", "/api/v1/account/endpoints/hooks.example/enable", key=key)
    unknown = herald.api("POST", "/api/v1/account/endpoints/other.example/enable", key=key)
    disabled = herald.api("POST", "/api/v1/account/endpoints/hooks.example/disable", key=key)
    unknown_disabled = herald.api("POST", "/api/v1/account/endpoints/other.example/disable", key=key)

    assert listed.status == 200
    [endpoint] = listed.data
    assert (endpoint["origin"], endpoint["state"], endpoint["lastError"]) == (
        "https://hooks.example",
        "open",
        "HTTP 503",
    )
    assert endpoint["since"] == "2023-11-14T22:13:20.000Z"
    assert (enabled.status, enabled.data["state"]) == (200, "closed")
    assert (unknown.status, unknown.body["code"]) == (404, "endpoint_not_found")
    # Disabled by hand: the state the automatic disabling leaves, which fails its jobs at once.
    assert (disabled.status, disabled.data["state"], disabled.data["lastError"]) == (
        200,
        "disabled",
        "HTTP 503",
    )
    [stored] = breakers.endpoints(tenant_id)
    assert (stored.state, stored.version) == (BreakerState.DISABLED, opened.version + 2)
    assert (unknown_disabled.status, unknown_disabled.body["code"]) == (404, "endpoint_not_found")
    # Another tenant sees none of them.
    assert herald.api("GET", "/api/v1/account/endpoints", key=herald.new_key()).data == []
