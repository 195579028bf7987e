"""The day counts' writes against moto: transactions of at most DynamoDB's 100 items, each with a
request token of its own and parameters that follow from the changes alone, so that a retried
batch's transactions are the same requests (DynamoDB applies a token's transaction once in ten
minutes; moto does not keep tokens, so the requests themselves are compared)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest

from herald.adapters.store.activity_store import DynamoActivity
from herald.adapters.store.counter_store import COUNTER_TTL_SECONDS
from herald.domain.jobs import Channel, JobStatus
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

DAY = date(2026, 11, 30)
TOKEN = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def _sent_transactions(activity_table: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        sent.append(copy.deepcopy(params))

    activity_table.connection.client.meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems", keep
    )
    return sent


def test_a_batch_of_150_tenant_days_is_two_transactions_with_tokens_of_their_own(
    herald: HeraldInMoto,
) -> None:
    sent = _sent_transactions(herald.table)
    changes = {(f"tenant-{n:03}", DAY): {"completed_webhook": 2, "failed_email": 1} for n in range(150)}

    DynamoActivity(herald.table).add_outcomes(changes, TOKEN)

    assert [len(request["TransactItems"]) for request in sent] == [100, 50]
    assert [request["ClientRequestToken"] for request in sent] == [f"{TOKEN}-0", f"{TOKEN}-1"]
    (counted,) = DynamoActivity(herald.table).days("tenant-149", DAY, DAY)
    assert counted.count(JobStatus.COMPLETED, Channel.WEBHOOK) == 2
    assert counted.count(JobStatus.FAILED, None) == 1


def test_a_retry_sends_the_same_requests_and_the_expiry_follows_from_the_day(herald: HeraldInMoto) -> None:
    sent = _sent_transactions(herald.table)
    changes = {("tenant-a", DAY): {"completed_email": 1, "cancelled_webhook": -1}}

    DynamoActivity(herald.table).add_outcomes(changes, TOKEN)
    DynamoActivity(herald.table).add_outcomes(dict(changes), TOKEN)

    first, retry = sent
    assert retry == first
    (item,) = client("dynamodb").scan(TableName=herald.table.address.name)["Items"]
    midnight = int(datetime(2026, 11, 30, tzinfo=UTC).timestamp())
    assert int(item["expiresAt"]["N"]) == midnight + COUNTER_TTL_SECONDS
