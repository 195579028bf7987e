"""Ordering keys through the real ApiFunction against moto resources built from template.yaml: a keyed
job goes to its channel's FIFO queue in its tenant's and key's message group, in acceptance order,
and a group's next message is not handed out while one is in flight."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from herald.adapters.queueing import decode_message
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.domain.clock import now_iso
from herald.domain.job_records import DeliveryLog
from herald.domain.jobs import JobStatus
from herald.domain.ordering import ordering_group
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "order.paid"}}


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        from herald_harness.dns import resolve_publicly

        resolve_publicly(monkeypatch)
        with herald_in_moto(monkeypatch) as stack:
            yield stack


@pytest.fixture(autouse=True)
def _empty_queues(herald: HeraldInMoto) -> None:
    herald.drain_queues()


def send(herald: HeraldInMoto, key: str, **fields: object) -> str:
    answer = herald.api("POST", "/api/v1/notifications/webhook", {**WEBHOOK, **fields}, key=key)
    assert answer.status == 202, answer.body
    return str(answer.data["jobId"])


def receive(herald: HeraldInMoto, output: str, most: int = 10) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = (
        client("sqs")
        .receive_message(
            QueueUrl=herald.queue_url(output), MaxNumberOfMessages=most, MessageSystemAttributeNames=["All"]
        )
        .get("Messages", [])
    )
    return messages


def test_keyed_jobs_queue_in_their_keys_group_in_acceptance_order_and_unkeyed_ones_as_before(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    keyed = [send(herald, key, orderingKey="order-7", priority=1) for _ in range(3)]
    unkeyed = send(herald, key)

    # One at a time, as the template's event source takes them (batch size 1).
    [first] = receive(herald, "WebhookOrderedQueueUrl", 1)
    # While the group's first message is in flight, the group hands out nothing more.
    assert receive(herald, "WebhookOrderedQueueUrl") == []
    attributes = first["Attributes"]
    assert isinstance(attributes, dict)
    assert attributes["MessageGroupId"] == ordering_group(tenant_id, "order-7")
    assert attributes["MessageDeduplicationId"] == f"{keyed[0]}.0"
    body = json.loads(str(first["Body"]))
    assert (body["jobId"], body["orderingKey"]) == (keyed[0], "order-7")
    client("sqs").delete_message(
        QueueUrl=herald.queue_url("WebhookOrderedQueueUrl"), ReceiptHandle=first["ReceiptHandle"]
    )
    rest = [
        json.loads(str(message["Body"]))["jobId"] for message in receive(herald, "WebhookOrderedQueueUrl")
    ]
    assert rest == keyed[1:]  # the rest of the group, in acceptance order
    assert [json.loads(str(m["Body"]))["jobId"] for m in receive(herald, "WebhookNormalQueueUrl")] == [
        unkeyed
    ]
    # A key says nothing about priority: the critical queue got none of them.
    assert receive(herald, "WebhookCriticalQueueUrl") == []


def test_the_job_document_shows_the_ordering_key(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    job_id = send(herald, key, orderingKey="customer 42")
    job = herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key).data
    assert job["orderingKey"] == "customer 42"
    unkeyed = herald.api("GET", f"/api/v1/notifications/jobs/{send(herald, key)}", key=key).data
    assert unkeyed["orderingKey"] is None


def test_a_failed_keyed_job_retried_by_hand_goes_back_to_its_keys_group(herald: HeraldInMoto) -> None:
    """The claim writes the key on the job's status item, so the retry's message (POST .../retry,
    as a redrive or a recovery) joins the key's FIFO group again instead of a priority queue."""
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    job_id = send(herald, key, orderingKey="order-7")
    [queued] = receive(herald, "WebhookOrderedQueueUrl", 1)
    client("sqs").delete_message(
        QueueUrl=herald.queue_url("WebhookOrderedQueueUrl"), ReceiptHandle=queued["ReceiptHandle"]
    )
    message = decode_message(str(queued["Body"]))
    store = DynamoDeliveryStore(herald.table)
    now = int(time.time())
    claimed = store.claim(
        message, now=now, lease_seconds=60, started_at=now_iso(), max_attempts=3, expires_at=now + 3600
    )
    assert claimed is not None
    log = DeliveryLog("log-1", 1, False, now_iso(), error_message="endpoint answered 410")
    assert store.finish(message, log, JobStatus.FAILED, "endpoint answered 410")

    answer = herald.api("POST", f"/api/v1/notifications/jobs/{job_id}/retry", key=key)

    assert answer.status == 201, answer.body
    [again] = receive(herald, "WebhookOrderedQueueUrl", 1)
    attributes = again["Attributes"]
    assert isinstance(attributes, dict)
    assert attributes["MessageGroupId"] == ordering_group(tenant_id, "order-7")
    assert attributes["MessageDeduplicationId"] == f"{job_id}.1"
    body = json.loads(str(again["Body"]))
    assert (body["jobId"], body["orderingKey"], body["seenAttempts"]) == (job_id, "order-7", 1)
    assert receive(herald, "WebhookNormalQueueUrl") == []
