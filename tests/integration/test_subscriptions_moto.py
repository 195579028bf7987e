"""Subscriptions against moto, through the real API handler and the real table: each change written
with its audit entry in the same transaction and no secret anywhere in the table in clear, the
breaker stored beside the subscription and turned by enable/disable, another tenant's id and an
unknown id answered alike, private addresses refused at registration and again at a test's dial,
and a subscription's history and recovery read through the job search by its term."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from herald.adapters.store.job_store import DynamoJobStore
from herald.adapters.store.subscription_store import DynamoSubscriptionStore
from herald.domain.audit import AuditAction, AuditEntry
from herald.domain.clock import iso
from herald.domain.events import Subscription, SubscriptionSecrets
from herald.domain.job_records import JobMessage, NewJob
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import DeliveryRef, NotificationRequest, WebhookNotification
from herald.domain.secrets import SealedSecret
from herald.services.outcomes import SubscriptionLimit
from herald_harness.in_moto import HeraldInMoto, client, harness_entry, herald_in_moto

PUBLIC_URL = "https://93.184.216.34/orders"  # a public address: the guard resolves no name
BODY = {
    "url": PUBLIC_URL,
    "eventTypes": ["order.paid"],
    "description": "Orders",
    "headers": {"X-Token": "t0k3n"},
}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def scan(herald: HeraldInMoto) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    return [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]


def audit(herald: HeraldInMoto, tenant_id: str) -> list[tuple[str, str, dict[str, str]]]:
    entries = sorted(
        (
            item
            for item in scan(herald)
            if item["pk"] == f"AUDIT#{tenant_id}"
            and str(item["action"]).startswith(("subscription.", "jobs."))
        ),
        key=lambda item: item["sk"],
    )
    return [(item["action"], item["target"], dict(item.get("details") or {})) for item in entries]


def tenant(herald: HeraldInMoto) -> tuple[str, str]:
    """A tenant with the event type ``order.paid`` (with an example) and ``order.gone``, archived."""
    key = herald.new_key()
    schema = {"type": "object", "examples": [{"orderId": "ord_1"}]}
    for name, body in (("order.paid", {"schema": schema}), ("order.gone", {})):
        answer = herald.api("POST", "/api/v1/event-types", {"name": name, **body}, key=key)
        assert answer.status == 201, answer.text
    assert herald.api("DELETE", "/api/v1/event-types/order.gone", key=key).status == 200
    return key, herald.tenant_of(key)


def created(herald: HeraldInMoto, key: str, **changes: Any) -> dict[str, Any]:
    answer = herald.api("POST", "/api/v1/subscriptions", {**BODY, **changes}, key=key)
    assert answer.status == 201, answer.text
    data: dict[str, Any] = answer.data
    return data


def delivery_job(herald: HeraldInMoto, tenant_id: str, subscription_id: str, *, failed: bool) -> str:
    """A delivery job as the fan-out writes it (found by the subscription's term, not in the jobs
    list), failed as the store fails a job when asked."""
    job_id = str(uuid.uuid4())
    created_at = iso(datetime.now(UTC))
    webhook = WebhookNotification(
        PUBLIC_URL,
        {"id": "evt_1", "type": "order.paid"},
        delivery=DeliveryRef("evt_1", subscription_id, "order.paid"),
    )
    store = DynamoJobStore(herald.table, 3)
    store.insert_deliveries(
        [NewJob(job_id, tenant_id, NotificationRequest(webhook), 5, 3, created_at, 2_000_000_000)]
    )
    if failed:
        message = JobMessage(job_id, tenant_id, Channel.WEBHOOK, "startup", 0, None, 5, created_at)
        store.mark_enqueue_failed(message, "the endpoint answered HTTP 503", created_at)
    return job_id


def test_crud_writes_each_change_with_its_audit_entry_and_no_secret_in_clear(herald: HeraldInMoto) -> None:
    key, tenant_id = tenant(herald)
    first = created(herald, key)
    sub_id = first["id"]
    assert first["secret"].startswith("whsec_")
    assert (first["state"], first["headers"], first["eventTypes"]) == (
        "enabled",
        {"X-Token": "••••"},
        ["order.paid"],
    )

    patched = herald.api(
        "PATCH", f"/api/v1/subscriptions/{sub_id}", {"rateLimitPerSecond": 5, "description": None}, key=key
    )
    rotated = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/secret/rotate", key=key)
    shown = herald.api("GET", f"/api/v1/subscriptions/{sub_id}", key=key)
    listed = herald.api("GET", "/api/v1/subscriptions", key=key)

    assert patched.status == 200, patched.text
    assert (patched.data["rateLimitPerSecond"], patched.data["description"]) == (5, None)
    assert rotated.status == 200, rotated.text
    assert rotated.data["secret"].startswith("whsec_")
    assert rotated.data["secret"] != first["secret"]
    assert rotated.data["previousValidUntil"] is not None
    assert "secret" not in shown.data
    assert [item["id"] for item in listed.data] == [sub_id]
    everything = json.dumps(scan(herald), default=str)
    for clear in (first["secret"], rotated.data["secret"], "t0k3n"):
        assert clear not in everything
        assert clear not in shown.text

    deleted = herald.api("DELETE", f"/api/v1/subscriptions/{sub_id}", key=key)
    assert (deleted.status, deleted.data) == (200, {"deleted": True})
    assert herald.api("GET", f"/api/v1/subscriptions/{sub_id}", key=key).status == 404
    assert [(action, target) for action, target, _ in audit(herald, tenant_id)] == [
        ("subscription.created", sub_id),
        ("subscription.updated", sub_id),
        ("subscription.secret_rotated", sub_id),
        ("subscription.deleted", sub_id),
    ]
    assert audit(herald, tenant_id)[0][2] == {"host": "93.184.216.34"}
    assert audit(herald, tenant_id)[1][2] == {"fields": "description,rateLimitPerSecond"}


def test_the_breaker_sits_beside_the_subscription_and_is_turned_with_its_audit_entry(
    herald: HeraldInMoto,
) -> None:
    key, tenant_id = tenant(herald)
    sub_id = created(herald, key)["id"]

    disabled = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/disable", key=key)
    listed = herald.api("GET", "/api/v1/subscriptions", key=key)

    assert disabled.status == 200, disabled.text
    assert (disabled.data["state"], disabled.data["breaker"]["state"]) == ("disabled", "disabled")
    assert listed.data[0]["state"] == "disabled"
    partition = sorted(item["sk"] for item in scan(herald) if item["pk"] == f"SUBSCRIPTIONS#{tenant_id}")
    assert partition == ["#COUNT", sub_id, f"{sub_id}#BREAKER"]
    enabled = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/enable", key=key)
    assert enabled.data["state"] == "enabled"
    assert [entry[:2] for entry in audit(herald, tenant_id)][1:] == [
        ("subscription.disabled", sub_id),
        ("subscription.enabled", sub_id),
    ]
    herald.api("DELETE", f"/api/v1/subscriptions/{sub_id}", key=key)
    left = [item for item in scan(herald) if item["pk"] == f"SUBSCRIPTIONS#{tenant_id}"]
    assert [(item["sk"], item["total"]) for item in left] == [("#COUNT", 0)]


def test_another_tenants_subscription_is_answered_as_an_unknown_one(herald: HeraldInMoto) -> None:
    owner_key, _ = tenant(herald)
    sub_id = created(herald, owner_key)["id"]
    other_key, _ = tenant(herald)

    for method, path, body in [
        ("GET", "", None),
        ("PATCH", "", {"description": "mine now"}),
        ("DELETE", "", None),
        ("POST", "/disable", None),
        ("POST", "/enable", None),
        ("POST", "/test", {}),
        ("POST", "/secret/rotate", None),
        ("GET", "/deliveries", None),
        ("POST", "/recover", {"since": "2026-12-01T00:00:00Z"}),
    ]:
        for target in (sub_id, "sub_0000000000000000"):
            answer = herald.api(method, f"/api/v1/subscriptions/{target}{path}", body, key=other_key)
            assert (answer.status, answer.body["code"], answer.body["error"]) == (
                404,
                "subscription_not_found",
                f"There is no subscription {target}.",
            ), (method, path)
    assert herald.api("GET", "/api/v1/subscriptions", key=other_key).data == []
    assert herald.api("GET", f"/api/v1/subscriptions/{sub_id}", key=owner_key).data["description"] == "Orders"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (
            "https://10.0.0.8/in",
            "the host resolves to a private, loopback, link-local or otherwise non-public address",
        ),
        (
            "https://169.254.169.254/latest/meta-data",
            "the host resolves to a private, loopback, link-local or otherwise non-public address",
        ),
        (
            "https://127.0.0.1:4566/",
            "the host resolves to a private, loopback, link-local or otherwise non-public address",
        ),
        ("http://93.184.216.34/in", "only https:// URLs are allowed"),
    ],
)
def test_a_private_or_plain_http_url_is_refused_at_registration(
    herald: HeraldInMoto, url: str, reason: str
) -> None:
    key, tenant_id = tenant(herald)
    answer = herald.api("POST", "/api/v1/subscriptions", {**BODY, "url": url}, key=key)
    assert (answer.status, answer.body["code"], answer.body["error"]) == (
        400,
        "url_not_allowed",
        f"The subscription's URL is not allowed: {reason}.",
    )
    assert [item for item in scan(herald) if item["pk"] == f"SUBSCRIPTIONS#{tenant_id}"] == []


def test_unknown_or_archived_event_types_are_named(herald: HeraldInMoto) -> None:
    key, _ = tenant(herald)
    answer = herald.api(
        "POST", "/api/v1/subscriptions", {**BODY, "eventTypes": ["order.paid", "order.gone", "nope"]}, key=key
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: eventTypes: there is no event type order.gone, nope (or it is archived); create it first.",
    )


def test_a_test_send_to_an_address_that_turned_private_is_refused_at_the_dial(herald: HeraldInMoto) -> None:
    key, tenant_id = tenant(herald)
    sub_id = created(herald, key)["id"]
    # The name resolved to a public address at registration and to loopback now (rebinding).
    client("dynamodb").update_item(
        TableName=herald.topology.outputs["TableName"],
        Key={"pk": {"S": f"SUBSCRIPTIONS#{tenant_id}"}, "sk": {"S": sub_id}},
        UpdateExpression="SET #url = :url",
        ExpressionAttributeNames={"#url": "url"},
        ExpressionAttributeValues={":url": {"S": "https://127.0.0.1:4566/"}},
    )

    tested = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/test", {}, key=key)
    again = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/test", {"eventType": "order.paid"}, key=key)

    assert tested.status == 200, tested.text
    assert tested.data["ok"] is False
    assert tested.data["statusCode"] is None
    assert tested.data["error"] == (
        "URL not allowed: the host resolves to a private, loopback, link-local or otherwise non-public address"
    )
    assert tested.data["eventId"].startswith("evt_test_")
    assert (again.status, again.body["code"], again.headers.get("Retry-After")) == (
        429,
        "rate_limit_exceeded",
        "10",
    )
    # A test leaves the breaker alone.
    assert (
        herald.api("GET", f"/api/v1/subscriptions/{sub_id}", key=key).data["breaker"]["consecutiveFailures"]
        == 0
    )


def test_deliveries_and_recovery_follow_the_subscriptions_own_jobs(herald: HeraldInMoto) -> None:
    key, tenant_id = tenant(herald)
    sub_id = created(herald, key)["id"]
    other_id = created(herald, key)["id"]
    failed = [delivery_job(herald, tenant_id, sub_id, failed=True) for _ in range(2)]
    delivery_job(herald, tenant_id, other_id, failed=True)
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()

    history = herald.api("GET", f"/api/v1/subscriptions/{sub_id}/deliveries?limit=10", key=key)
    recovered = herald.api("POST", f"/api/v1/subscriptions/{sub_id}/recover", {"since": since}, key=key)

    assert history.status == 200, history.text
    assert sorted(job["id"] for job in history.data["data"]) == sorted(failed)
    assert recovered.status == 200, recovered.text
    assert recovered.data == {"requeued": 2, "nextCursor": None}
    assert {herald.job_state(tenant_id, job_id).status for job_id in failed} == {JobStatus.PENDING}  # type: ignore[union-attr]
    action, target, details = audit(herald, tenant_id)[-1]
    assert (action, target, details["term"], details["requeued"]) == (
        "jobs.recovered",
        "jobs",
        f"subscription:{sub_id}",
        "2",
    )
    # The jobs list does not show delivery jobs (no gsi1 entry).
    assert herald.api("GET", "/api/v1/notifications/jobs", key=key).data["data"] == []


def test_the_cap_is_a_condition_on_the_accounts_count_kept_by_creations_and_deletions(
    herald: HeraldInMoto,
) -> None:
    """The store's own guard, without a read of the partition: at the limit a creation is refused
    whole (no item, no entry), and a deletion makes room again."""
    store, tenant_id = DynamoSubscriptionStore(herald.table), str(uuid.uuid4())
    sealed = SealedSecret(1, b"wrapped", b"nonce-12byte", b"ciphertext and its 16-byte tag")

    def subscription(number: int) -> Subscription:
        at = "2026-12-05T00:00:00.000Z"
        return Subscription(
            f"sub_{number:016x}", PUBLIC_URL, ("order.paid",), SubscriptionSecrets(sealed), at, at
        )

    def entry(number: int) -> AuditEntry:
        return harness_entry(tenant_id, AuditAction.SUBSCRIPTION_CREATED, f"sub_{number:016x}")

    store.create(tenant_id, subscription(1), entry(1), 2)
    store.create(tenant_id, subscription(2), entry(2), 2)
    with pytest.raises(SubscriptionLimit):
        store.create(tenant_id, subscription(3), entry(3), 2)
    assert [sub.subscription_id for sub, _ in store.list(tenant_id)] == [
        "sub_0000000000000001",
        "sub_0000000000000002",
    ]

    store.delete(
        tenant_id, subscription(1), harness_entry(tenant_id, AuditAction.SUBSCRIPTION_DELETED, "sub_1")
    )
    store.create(tenant_id, subscription(3), entry(3), 2)

    assert [sub.subscription_id for sub, _ in store.list(tenant_id)] == [
        "sub_0000000000000002",
        "sub_0000000000000003",
    ]


def test_the_events_list_reads_each_events_subscriptions_and_channels(herald: HeraldInMoto) -> None:
    """The list is queried on an index that projects neither the count nor the channels."""
    key, _ = tenant(herald)
    created(herald, key)
    sent = herald.api(
        "POST",
        "/api/v1/events",
        {"type": "order.paid", "payload": {"orderId": "o"}, "channels": ["eu"]},
        key=key,
    )
    assert sent.status == 202, sent.text

    listed = herald.api("GET", "/api/v1/events", key=key)

    assert listed.status == 200, listed.text
    [event] = listed.data["data"]
    assert (event["id"], event["type"], event["subscriptions"], event["channels"]) == (
        sent.data["eventId"],
        "order.paid",
        1,
        ["eu"],
    )
