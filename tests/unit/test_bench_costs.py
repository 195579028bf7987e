"""The bench's cost model (bench.costs): measured per-notification quantities at the prices on file."""

from __future__ import annotations

from typing import Any

import pytest

from bench.costs import Platform, PriceList, usd_per_million

PRICES = PriceList.load()
PLATFORM = Platform(
    memory_mb={"Api": 512, "Worker": 1024},
    behind_http_api=frozenset({"Api"}),
    fed_by_queues=frozenset({"Worker"}),
    architectures={"Api": "arm64", "Worker": "arm64"},
)


def step(
    function: str, invocations: float, ms: float, calls: dict[str, float], *, wru: float, rru: float = 0.0
) -> dict[str, Any]:
    return {
        "lambda": {function: {"invocations": invocations, "ms": ms}},
        "calls": calls,
        "write_units": {"total": wru},
        "read_units": {"total": rru},
        "fair_queues": "sqs:SendMessage" in calls,
    }


ACCEPT = step("Api", 1, 10.0, {"dynamodb:TransactWriteItems": 1, "sqs:SendMessage": 1}, wru=13)
DELIVER = step("Worker", 0.2, 20.0, {"dynamodb:UpdateItem": 2, "kms:Decrypt": 0.01}, wru=4, rru=0.5)


def test_given_17_write_units_per_webhook_then_dynamodb_costs_10_63_per_million() -> None:
    cost = usd_per_million([ACCEPT, DELIVER], PLATFORM, PRICES)

    assert cost["per_notification"]["write_units"] == 17
    assert cost["usd_by_service"]["DynamoDB"] == pytest.approx(17 * 0.625 + 0.5 * 0.125)


def test_requests_are_counted_per_invocation_and_the_event_source_adds_a_receive_and_a_delete() -> None:
    cost = usd_per_million([ACCEPT, DELIVER], PLATFORM, PRICES)

    assert cost["usd_by_service"]["API Gateway"] == pytest.approx(1.00)
    assert cost["usd_by_service"]["Lambda requests"] == pytest.approx(1.2 * 0.20)
    # 1 send + 0.2 invocations x (receive + batch delete), at the standard price plus the fair-queue surcharge
    assert cost["usd_by_service"]["SQS"] == pytest.approx(1.4 * (0.40 + 0.10))
    assert cost["usd_by_service"]["KMS"] == pytest.approx(0.01 * 3.0)


def test_duration_is_billed_at_each_functions_memory() -> None:
    cost = usd_per_million([ACCEPT, DELIVER], PLATFORM, PRICES)

    gb_seconds = 0.010 * 0.5 + 0.020 * 1.0
    assert cost["per_notification"]["lambda_gb_seconds"] == pytest.approx(gb_seconds)
    assert cost["usd_by_service"]["Lambda duration"] == pytest.approx(gb_seconds * 0.0000133334 * 1_000_000)
    assert cost["usd_total"] == pytest.approx(sum(cost["usd_by_service"].values()))


def test_without_a_message_group_id_there_is_no_fair_queue_surcharge() -> None:
    unfair = {**ACCEPT, "fair_queues": False}

    assert usd_per_million([unfair], PLATFORM, PRICES)["usd_by_service"]["SQS"] == pytest.approx(0.40)


def test_only_arm64_lambda_prices_are_on_file() -> None:
    x86 = Platform(PLATFORM.memory_mb, PLATFORM.behind_http_api, PLATFORM.fed_by_queues, {"Api": "x86_64"})

    with pytest.raises(ValueError, match="arm64"):
        usd_per_million([ACCEPT], x86, PRICES)


def test_every_price_on_file_is_dated_and_sourced() -> None:
    for price in [*PRICES.prices.values(), *PRICES.alternatives.values()]:
        assert price.as_of
        assert price.source_url.startswith("https://")
        assert price.usd >= 0


def test_an_attachment_adds_an_s3_put_at_accept_and_a_get_per_pass() -> None:
    with_file = step("Api", 1, 12.0, {"dynamodb:PutItem": 1, "sqs:SendMessage": 1, "s3:PutObject": 1}, wru=4)
    read = step("Worker", 0.2, 25.0, {"dynamodb:UpdateItem": 2, "s3:GetObject": 1}, wru=2)

    cost = usd_per_million([with_file, read], PLATFORM, PRICES)

    assert (cost["per_notification"]["s3_put_requests"], cost["per_notification"]["s3_get_requests"]) == (
        1,
        1,
    )
    # $0.005 per 1 000 PUTs and $0.0004 per 1 000 GETs: $5.40 per million emails with one file.
    assert cost["usd_by_service"]["S3"] == pytest.approx(5.00 + 0.40)
    assert usd_per_million([ACCEPT, DELIVER], PLATFORM, PRICES)["usd_by_service"]["S3"] == 0
