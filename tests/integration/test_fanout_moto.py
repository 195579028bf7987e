"""An event through the real API and FanoutFunction handlers against moto: stored once, its page on
the fan-out queue, one delivery job per subscription written with the subscription's term and no
listing entry, queued on the webhook queue; the same page run again writes nothing twice."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from herald.domain.events import delivery_job_id
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

PUBLIC = "https://93.184.216.34"  # a public address: the guard resolves no name
SCHEMA = {"type": "object", "required": ["orderId"], "properties": {"orderId": {"type": "string"}}}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def table_items(herald: HeraldInMoto, prefix: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    items = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return [item for item in items if str(item["pk"]).startswith(prefix)]


def subscribed(herald: HeraldInMoto, key: str, path: str, **fields: Any) -> str:
    body = {"url": f"{PUBLIC}/{path}", "eventTypes": ["order.paid"], **fields}
    answer = herald.api("POST", "/api/v1/subscriptions", body, key=key)
    assert answer.status == 201, answer.text
    return str(answer.data["id"])


def test_an_event_fans_out_once_per_subscription_even_when_its_page_runs_twice(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    assert (
        herald.api("POST", "/api/v1/event-types", {"name": "order.paid", "schema": SCHEMA}, key=key).status
        == 201
    )
    ids = [subscribed(herald, key, f"hooks/{n}") for n in range(3)]
    subscribed(herald, key, "hooks/other", channels=["cust_2"])

    answer = herald.api(
        "POST",
        "/api/v1/events",
        {"type": "order.paid", "payload": {"orderId": "o_1"}, "channels": ["cust_1"]},
        key=key,
    )

    assert answer.status == 202, answer.text
    event_id = answer.data["eventId"]
    assert answer.data == {"eventId": event_id, "type": "order.paid", "subscriptions": 3}
    [event] = table_items(herald, f"EVENT#{tenant_id}#")
    assert (event["type"], event["subscriptions"], event["gsi1pk"]) == (
        "order.paid",
        3,
        f"EVENTS#{tenant_id}",
    )
    pages = herald.receive_records("FanoutQueueUrl")
    assert [json.loads(page["body"])["last"] for page in pages] == [max(ids)]

    answers = [herald.invoke_worker("FanoutQueueUrl", pages), herald.invoke_worker("FanoutQueueUrl", pages)]

    assert answers == [{"batchItemFailures": []}] * 2
    expected = {delivery_job_id(tenant_id, event_id, sid) for sid in ids}
    jobs = [item for item in table_items(herald, f"JOB#{tenant_id}#") if item["sk"] == "JOB"]
    assert {str(item["pk"]).rsplit("#", 1)[1] for item in jobs} == expected
    assert all("gsi1pk" not in item for item in jobs)
    # The body is the event's, written once: the job items do not repeat it, the messages carry it.
    assert all(b"o_1" not in zlib.decompress(bytes(item["request"]), wbits=-zlib.MAX_WBITS) for item in jobs)
    assert sorted(str(item["gsi4pk"]) for item in jobs) == sorted(
        f"FIND#{tenant_id}#subscription:{sid}" for sid in ids
    )
    queued = [json.loads(message["Body"]) for message in _drain(herald, "WebhookNormalQueueUrl")]
    # The second run found the jobs unclaimed and queued them again: the worker's claim sends each once.
    assert sorted(body["jobId"] for body in queued) == sorted([*expected, *expected])
    assert {body["payload"]["delivery"]["eventId"] for body in queued} == {event_id}
    assert {body["payload"]["payload"]["data"]["orderId"] for body in queued} == {"o_1"}


def test_an_event_that_breaks_its_schema_is_refused_and_nothing_is_queued(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    herald.api("POST", "/api/v1/event-types", {"name": "order.paid", "schema": SCHEMA}, key=key)
    subscribed(herald, key, "hooks/a")

    answer = herald.api("POST", "/api/v1/events", {"type": "order.paid", "payload": {"orderId": 7}}, key=key)

    assert answer.status == 400
    assert answer.body["code"] == "event_payload_invalid"
    assert answer.body["errors"] == [{"path": "/orderId", "message": "7 is not of type 'string'"}]
    assert herald.receive_records("FanoutQueueUrl") == []


def test_another_tenants_event_is_not_found(herald: HeraldInMoto) -> None:
    key, other = herald.new_key(), herald.new_key()
    herald.api("POST", "/api/v1/event-types", {"name": "order.paid"}, key=key)
    event_id = herald.api("POST", "/api/v1/events", {"type": "order.paid", "payload": {}}, key=key).data[
        "eventId"
    ]

    mine = herald.api("GET", f"/api/v1/events/{event_id}", key=key)
    theirs = herald.api("GET", f"/api/v1/events/{event_id}", key=other)

    assert (mine.status, mine.data["subscriptions"], mine.data["deliveries"]) == (200, 0, [])
    listed = herald.api("GET", "/api/v1/events?limit=1", key=key)
    assert listed.status == 200, listed.text
    assert [(e["id"], e["type"], e["subscriptions"]) for e in listed.data["data"]] == [
        (event_id, "order.paid", 0)
    ]
    assert herald.api("GET", "/api/v1/events", key=other).data == {"data": [], "nextCursor": None}
    assert (theirs.status, theirs.body["code"], theirs.body["error"]) == (
        404,
        "event_not_found",
        "No event with this id.",
    )


def _drain(herald: HeraldInMoto, output: str) -> list[dict[str, Any]]:
    sqs, url, messages = client("sqs"), herald.queue_url(output), []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        messages.extend(batch)
        for message in batch:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return messages
