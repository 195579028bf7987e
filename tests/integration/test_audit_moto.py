"""The audit log against moto resources built from template.yaml, through the real ApiFunction (provider
calls answered by a provider sandbox): a change and its entry are one transaction, the log reads
newest first by page with its filters, and the attacks on it fail — forging or deleting entries
through any route, a spoofed client address, reading another tenant's log, a secret in an entry."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.store.account_store import DynamoAccountStore
from herald.adapters.store.audit_items import audit_item
from herald.adapters.store.audit_store import DynamoAuditLog
from herald.adapters.store.breaker_store import DynamoBreakers
from herald.adapters.store.suppression_store import DynamoSuppressions
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import vault
from herald.domain.access import Actor, ActorKind
from herald.domain.addresses import Suppression
from herald.domain.audit import AuditAction, AuditEntry
from herald.domain.breakers import ENDPOINT_POLICY, Breaker, BreakerKey, BreakerKind, disabled, failed
from herald.domain.clock import now_iso
from herald.domain.errors import DependencyError
from herald.domain.providers import StoredProvider
from herald.domain.secrets import Purpose
from herald.services.tenants import IssuedKey
from herald_harness.in_moto import HeraldInMoto, client, harness_entry, herald_in_moto
from herald_harness.vendors.resend import RESEND_SECRET
from herald_local.sandbox import SandboxServer

AUDIT = "/api/v1/account/audit"
# The client address the harness's gateway gives every request (API Gateway's sourceIp).
SOURCE_IP = "203.0.113.9"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="module")
def herald(sandbox: SandboxServer) -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


@pytest.fixture(autouse=True)
def _api_talks_to_the_sandbox(herald: HeraldInMoto, sandbox: SandboxServer) -> None:
    herald.use_function_environment(
        "ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1", **sandbox.provider_settings()}
    )


def new_tenant(herald: HeraldInMoto) -> IssuedKey:
    """A paid tenant with no provider yet (these tests store them through the API)."""
    return herald.new_tenant("startup", providers=())


def put_provider(herald: HeraldInMoto, key: str, provider: str, **fields: str) -> str:
    secret = f"sandbox-{provider.lower()}-{uuid.uuid4().hex}"
    answer = herald.api("PUT", f"/api/v1/account/providers/{provider}", {"apiKey": secret, **fields}, key=key)
    assert answer.status in (200, 201), answer.body
    return secret


def audit(herald: HeraldInMoto, key: str, query: str = "") -> dict[str, Any]:
    answer = herald.api("GET", f"{AUDIT}{query}", key=key)
    assert answer.status == 200, answer.body
    page: dict[str, Any] = answer.data
    return page


def actions(page: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["action"], item["target"]) for item in page["entries"]]


def stored_entries(herald: HeraldInMoto, tenant_id: str | None = None) -> list[dict[str, Any]]:
    """Every audit item in the table (of one tenant, or of all), as DynamoDB holds them."""
    prefix = f"AUDIT#{tenant_id}" if tenant_id else "AUDIT#"
    pages = (
        client("dynamodb")
        .get_paginator("scan")
        .paginate(
            TableName=herald.topology.outputs["TableName"],
            FilterExpression="begins_with(pk, :prefix)",
            ExpressionAttributeValues={":prefix": {"S": prefix}},
        )
    )
    return [item for page in pages for item in page["Items"]]


def sealed(herald: HeraldInMoto, tenant_id: str, provider: str) -> StoredProvider:
    return StoredProvider(
        provider=provider,
        priority=1,
        api_key=vault().seal(tenant_id, Purpose.PROVIDER_KEY, "sandbox-never-stored-0001"),
        last_four="0001",
        added_at=now_iso(),
    )


# ---------------------------------------------------------------- one transaction


def test_a_provider_change_whose_entry_cannot_be_written_is_not_stored_either(herald: HeraldInMoto) -> None:
    """Given an entry id already in the log, When a provider is saved with an entry of that id, Then
    the transaction fails as a whole: neither the provider nor a second entry is written."""
    issued = new_tenant(herald)
    tenant_id = issued.tenant_id
    operator = Actor(ActorKind.OPERATOR, "alice", "alice")
    taken = AuditEntry(
        "0123456789abcdef", tenant_id, now_iso(), operator, AuditAction.PROVIDER_ADDED, "RESEND"
    )
    audit_item(herald.table, taken).save()
    before = stored_entries(herald, tenant_id)

    with pytest.raises(DependencyError) as failed:
        DynamoAccountStore(herald.table).save_provider(
            tenant_id, sealed(herald, tenant_id, "SENDGRID"), taken
        )

    assert "provider write failed" in str(failed.value)
    assert DynamoTenantStore(herald.table).load(tenant_id).providers == ()
    assert stored_entries(herald, tenant_id) == before


def test_a_suppression_that_is_not_there_is_not_removed_and_leaves_no_entry(herald: HeraldInMoto) -> None:
    issued = new_tenant(herald)
    store = DynamoSuppressions(herald.table)
    store.suppress(issued.tenant_id, Suppression("gone@example.com", "hard_bounce", now_iso(), "SENDGRID"))
    before = len(stored_entries(herald, issued.tenant_id))

    lifted = herald.api("DELETE", "/api/v1/account/suppressions/gone@example.com", key=issued.api_key)
    again = herald.api("DELETE", "/api/v1/account/suppressions/gone@example.com", key=issued.api_key)

    assert (lifted.status, again.status, again.body["code"]) == (200, 404, "suppression_not_found")
    assert actions(audit(herald, issued.api_key, "?action=suppression.removed")) == [
        ("suppression.removed", "gone@example.com")
    ]
    assert len(stored_entries(herald, issued.tenant_id)) == before + 1


# ---------------------------------------------------------------- reading


def test_the_log_reads_newest_first_by_page_with_action_and_actor_filters(herald: HeraldInMoto) -> None:
    issued = new_tenant(herald)
    key = issued.api_key
    put_provider(herald, key, "SENDGRID")
    put_provider(herald, key, "RESEND")
    herald.api("PATCH", "/api/v1/account/providers/RESEND", {"priority": 1}, key=key)
    assert herald.api("POST", "/api/v1/account/webhook-secret", key=key).status == 201

    first = audit(herald, key, "?limit=2")
    second = audit(herald, key, f"?limit=2&cursor={first['nextCursor']}")
    rest = audit(herald, key, f"?limit=100&cursor={second['nextCursor']}")

    assert actions(first) == [("signing_secret.created", "signing_secret"), ("provider.reordered", "RESEND")]
    assert actions(second) == [("provider.added", "RESEND"), ("provider.added", "SENDGRID")]
    assert [action for action, _ in actions(rest)] == ["tenant.created"]
    assert rest["nextCursor"] is None
    newest = first["entries"][0]
    assert newest["actor"] == {"type": "key", "id": newest["actor"]["id"], "name": "Default key"}
    assert newest["actor"]["id"].startswith("key_")
    assert newest["ip"] == SOURCE_IP
    times = [item["at"] for item in first["entries"] + second["entries"]]
    assert times == sorted(times, reverse=True)

    assert actions(audit(herald, key, "?action=provider.added")) == [
        ("provider.added", "RESEND"),
        ("provider.added", "SENDGRID"),
    ]
    by_key = audit(herald, key, "?actor=Default%20key")
    assert {item["actor"]["name"] for item in by_key["entries"]} == {"Default key"}
    assert len(by_key["entries"]) == 4
    by_id = audit(herald, key, f"?actor={newest['actor']['id']}&action=signing_secret.created")
    assert actions(by_id) == [("signing_secret.created", "signing_secret")]
    assert actions(audit(herald, key, "?actor=test-harness")) == [("tenant.created", issued.tenant_id)]


def test_a_bad_cursor_or_an_unknown_action_is_refused_with_what_is_wrong(herald: HeraldInMoto) -> None:
    key = new_tenant(herald).api_key

    bad_cursor = herald.api("GET", f"{AUDIT}?cursor=bm90LWEtY3Vyc29y", key=key)
    unknown = herald.api("GET", f"{AUDIT}?action=provider.deleted", key=key)

    assert (bad_cursor.status, bad_cursor.body["code"]) == (400, "invalid_cursor")
    assert (unknown.status, unknown.body["code"]) == (400, "validation_error")
    assert "provider.deleted is not an audit action" in unknown.body["error"]
    assert "provider.removed" in unknown.body["error"]


def test_a_page_is_one_bounded_query(herald: HeraldInMoto) -> None:
    """The store's page asks DynamoDB for at most ``limit`` items: a filter that keeps none still
    reads only that many, and the cursor goes on."""
    issued = new_tenant(herald)
    for _ in range(3):
        put_provider(herald, issued.api_key, "SENDGRID")

    page = DynamoAuditLog(herald.table).page(
        issued.tenant_id, action=AuditAction.DOMAIN_ADDED, actor=None, limit=2, cursor=None
    )

    assert page.entries == ()
    assert page.next_cursor is not None


# ---------------------------------------------------------------- attacks


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", [AUDIT, f"{AUDIT}/0123456789abcdef", f"{AUDIT}/anything/at/all"])
def test_no_route_writes_changes_or_deletes_an_entry(herald: HeraldInMoto, method: str, path: str) -> None:
    issued = new_tenant(herald)
    put_provider(herald, issued.api_key, "SENDGRID")
    [entry_id] = [item["id"] for item in audit(herald, issued.api_key, "?action=provider.added")["entries"]]
    before = stored_entries(herald, issued.tenant_id)
    forged = {
        "id": entry_id,
        "action": "provider.removed",
        "target": "SENDGRID",
        "actor": {"type": "operator", "id": "root", "name": "root"},
    }

    answer = herald.api(method, path.replace("0123456789abcdef", entry_id), forged, key=issued.api_key)

    assert answer.status in (404, 405), answer.body
    assert answer.body["code"] in ("not_found", "method_not_allowed")
    assert stored_entries(herald, issued.tenant_id) == before


def test_a_spoofed_forwarded_for_header_does_not_change_the_recorded_address(herald: HeraldInMoto) -> None:
    issued = new_tenant(herald)
    spoofed = {
        "x-forwarded-for": "198.51.100.66",
        "x-real-ip": "198.51.100.67",
        "forwarded": "for=198.51.100.68",
    }

    answer = herald.api("POST", "/api/v1/account/webhook-secret", key=issued.api_key, headers=spoofed)

    assert answer.status == 201
    [created] = audit(herald, issued.api_key, "?action=signing_secret.created")["entries"]
    assert created["ip"] == SOURCE_IP


def test_a_tenant_reads_only_its_own_log_whatever_cursor_it_sends(herald: HeraldInMoto) -> None:
    mine, theirs = new_tenant(herald), new_tenant(herald)
    put_provider(herald, theirs.api_key, "SENDGRID")
    herald.api("POST", "/api/v1/account/webhook-secret", key=theirs.api_key)
    their_cursor = audit(herald, theirs.api_key, "?limit=1")["nextCursor"]

    own = audit(herald, mine.api_key)
    with_their_cursor = audit(herald, mine.api_key, f"?cursor={their_cursor}")
    by_their_key = audit(herald, mine.api_key, f"?actor={theirs.key_id}")

    assert actions(own) == [("tenant.created", mine.tenant_id)]
    assert all(theirs.tenant_id not in str(item) for item in own["entries"] + with_their_cursor["entries"])
    assert by_their_key["entries"] == []


def test_no_secret_value_is_in_any_audit_item(herald: HeraldInMoto) -> None:
    """After a provider key with its webhook secret, a signing secret created and rotated, and a
    key's own rotation, no audit item in the whole table holds any of those values."""
    issued = new_tenant(herald)
    key = issued.api_key
    provider_key = put_provider(herald, key, "RESEND", webhookSecret=RESEND_SECRET)
    created = herald.api("POST", "/api/v1/account/webhook-secret", key=key).data["secret"]
    rotated = herald.api("POST", "/api/v1/account/webhook-secret/rotate", key=key).data["secret"]

    items = stored_entries(herald)
    text = repr(items)

    assert {item["action"]["S"] for item in stored_entries(herald, issued.tenant_id)} >= {
        "provider.added",
        "signing_secret.created",
        "signing_secret.rotated",
    }
    for secret in (provider_key, RESEND_SECRET, created, rotated, key, key[3:]):
        assert secret not in text
    assert provider_key[-4:] in text  # the last four are what an entry may show


# ---------------------------------------------------------------- endpoints


def open_endpoint(herald: HeraldInMoto, tenant_id: str) -> Breaker:
    """An endpoint breaker opened by five failures, each stored as a worker stores it."""
    breakers = DynamoBreakers(herald.table)
    breaker = Breaker(BreakerKey(BreakerKind.ENDPOINT, tenant_id, "https://hooks.example"))
    for _ in range(5):
        changed = failed(breaker, 1_700_000_000, "HTTP 503", ENDPOINT_POLICY)
        assert changed is not None
        assert breakers.save(changed)
        breaker = changed
    return breaker


def test_disabling_and_enabling_an_endpoint_are_recorded_and_a_lost_race_records_nothing(
    herald: HeraldInMoto,
) -> None:
    issued = new_tenant(herald)
    opened = open_endpoint(herald, issued.tenant_id)

    off = herald.api("POST", "/api/v1/account/endpoints/hooks.example/disable", key=issued.api_key)
    on = herald.api("POST", "/api/v1/account/endpoints/hooks.example/enable", key=issued.api_key)
    entry = harness_entry(issued.tenant_id, AuditAction.ENDPOINT_DISABLED, "https://hooks.example")
    # A write computed from the version read before those two changes loses, with its entry.
    stale = DynamoBreakers(herald.table).turn(disabled(opened, 1_700_000_100), entry)

    assert (off.status, on.status, stale) == (200, 200, False)
    page = audit(herald, issued.api_key, "?limit=2")
    assert [(item["action"], item["target"], item["details"]) for item in page["entries"]] == [
        ("endpoint.enabled", "https://hooks.example", {"previous": "disabled"}),
        ("endpoint.disabled", "https://hooks.example", {"previous": "open"}),
    ]
    assert all(item["id"] != entry.entry_id for item in audit(herald, issued.api_key)["entries"])
