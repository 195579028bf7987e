"""Where an attempt's detail is stored (DynamoDB in moto): a retried attempt's exchange in an item of
its own, written once, so the status item every later claim rewrites stays small; the attempt that
ends the job inline; read back together with the job, whatever their place."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from msgspec.structs import replace

from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.inbound_store import DynamoJobEvents
from herald.adapters.store.job_store import DynamoJobStore
from herald.domain.job_records import DeliveryLog, JobEvent, JobMessage, NewJob
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import NotificationRequest, WebhookNotification
from herald.domain.webhooks import BODY_EXCERPT_BYTES, WebhookExchange
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

CREATED = "2026-12-04T03:10:00.000Z"
TENANT = "t-detail"
LARGE = WebhookExchange(
    request_headers={"Content-Type": "application/json", "webhook-signature": "[masked]"},
    response_headers={"Content-Type": "text/html", "Retry-After": "5"},
    body_excerpt="x" * BODY_EXCERPT_BYTES,
)
SMALL = WebhookExchange(request_headers={"Content-Type": "application/json"}, body_excerpt='{"ok":true}')


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def accepted(herald: HeraldInMoto) -> JobMessage:
    job_id = str(uuid.uuid4())
    request = NotificationRequest(WebhookNotification("https://hooks.example.com/in", {"n": 1}))
    DynamoJobStore(herald.table, 3).insert(NewJob(job_id, TENANT, request, 5, 3, CREATED, 2_000_000_000))
    return JobMessage(job_id, TENANT, Channel.WEBHOOK, "startup", 0, request, created_at=CREATED)


def attempt(
    store: DynamoDeliveryStore, message: JobMessage, number: int, exchange: WebhookExchange
) -> DeliveryLog:
    # A retry's message names the attempts it was sent after.
    claim = store.claim(
        replace(message, seen_attempts=number - 1),
        now=1,
        lease_seconds=120,
        started_at=CREATED,
        max_attempts=3,
        expires_at=2_000_000_000,
    )
    assert claim is not None
    assert claim.attempt == number
    return DeliveryLog(
        f"log-{number}", number, False, CREATED, response_status=503, latency_ms=40, exchange=exchange
    )


def partition(herald: HeraldInMoto, job_id: str) -> dict[str, dict[str, Any]]:
    """The job's items as DynamoDB holds them, by sort key."""
    answer = client("dynamodb").query(
        TableName=herald.table.address.name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"JOB#{TENANT}#{job_id}"}},
    )
    return {item["sk"]["S"]: item for item in answer["Items"]}


def size(item: dict[str, Any]) -> int:
    """Roughly what DynamoDB bills: attribute names and values, as text."""
    return len(str(item))


def test_a_retried_attempts_large_answer_is_kept_beside_the_status_item_and_the_last_one_inline(
    herald: HeraldInMoto,
) -> None:
    store = DynamoDeliveryStore(herald.table)
    message = accepted(herald)

    first = attempt(store, message, 1, LARGE)
    assert store.release_for_retry(
        message, first, "the endpoint answered HTTP 503", (), "2026-12-04T03:11:00.000Z"
    )
    retried = partition(herald, message.job_id)
    last = attempt(store, message, 2, SMALL)
    assert store.finish(message, last, JobStatus.FAILED, "the endpoint answered HTTP 503")
    items = partition(herald, message.job_id)

    status = items["STATUS"]
    assert size(retried["STATUS"]) < 1024  # what the next claim and outcome are billed on
    assert "ATTEMPT#log-1" in items
    assert size(items["ATTEMPT#log-1"]) > BODY_EXCERPT_BYTES
    first_entry, last_entry = (entry["M"] for entry in status["deliveryLogs"]["L"])
    assert "exchange" not in first_entry
    assert "ATTEMPT#log-2" not in items  # nothing rewrites the status item after the job ended
    assert "exchange" in last_entry
    view = DynamoJobStore(herald.table, 3).get(TENANT, message.job_id)
    assert view is not None
    assert [(log.exchange, log.latency_ms, log.response_status) for log in view.state.delivery_logs] == [
        (LARGE, 40, 503),
        (SMALL, 40, 503),
    ]


def test_a_jobs_events_read_in_the_order_herald_received_them_whatever_time_the_provider_claims(
    herald: HeraldInMoto,
) -> None:
    """The defect: a bounce sorted by the provider's claimed time showed before the delivery it followed."""
    message = accepted(herald)
    events = DynamoJobEvents(herald.table)
    reports = [
        JobEvent("delivered", "2026-12-04T03:12:00.000Z", "RESEND", received_at="2026-12-04T03:12:01.000Z"),
        # Claimed a day early, received after the delivery.
        JobEvent("bounced", "2026-12-03T03:00:00.000Z", "RESEND", received_at="2026-12-04T03:13:00.000Z"),
    ]
    for n, event in enumerate(reports):
        assert events.add(TENANT, message.job_id, f"evt-{n}", event, 2_000_000_000)

    view = DynamoJobStore(herald.table, 3).get(TENANT, message.job_id)

    assert view is not None
    assert [event.type for event in view.events] == ["delivered", "bounced"]
    assert view.events[1].received_at == "2026-12-04T03:13:00.000Z"
