"""The bench's events and fan-out figures: an event's fixed cost shared by its deliveries, the page's
section built from the results (per-job write units against the target, Svix's price beside the
cost), the meter's own time counted once when a handler's writes meter side by side, and a batch
of messages with group ids priced as fair-queue requests."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.session import get_session

from bench.costs import Platform, PriceList
from bench.fanout import FANOUT_DELIVERIES, FANOUT_WIDTH, fanout_costs, scaled
from bench.report import _events
from bench.rig import FairQueueUse
from bench.table_meter import TableMeter
from herald_local.aws.sdk_calls import SdkCall


def step(title: str, writes: float, reads: float, calls: dict[str, float], function: str) -> dict[str, Any]:
    return {
        "title": title,
        "note": "",
        "notifications": 10,
        "calls": calls,
        "lambda": {function: {"invocations": 1.0, "ms": 100.0}},
        "fair_queues": True,
        "write_units": {"total": writes, "table": writes, "index": 0.0, "by_item": []},
        "read_units": {"total": reads, "by_item": []},
    }


def measured() -> dict[str, dict[str, Any]]:
    accept = {
        "dynamodb:GetItem": 1.0,
        "dynamodb:Query": 2.0,
        "dynamodb:PutItem": 1.0,
        "sqs:SendMessageBatch": 1.0,
    }
    steps = {
        f"event_accept_{width}": step(f"accept for {width}", 3.0, reads, accept, "ApiFunction")
        for width, reads in ((1, 3.0), (10, 4.0), (100, 15.0))
    }
    steps["event_fanout_page"] = step(
        "a page", 3.0, 0.14, {"dynamodb:PutItem": 1.0, "sqs:SendMessageBatch": 0.1}, "FanoutFunction"
    )
    steps["event_fanout_page"]["write_units"]["by_item"] = [
        {"item": "JOB#*#* JOB", "bytes_after": 1061, "table_units": 2.0, "index_units": 1.0}
    ]
    steps["event_deliver"] = step("deliver", 2.0, 3.0, {"dynamodb:UpdateItem": 2.0}, "WebhookWorkerFunction")
    steps["event_deliver_rate_limited"] = step(
        "deliver, limited", 3.0, 3.0, {"dynamodb:UpdateItem": 3.0}, "WebhookWorkerFunction"
    )
    steps["tally_one_tenant"] = step("tally", 0.02, 0.0, {}, "TallyFunction")
    return steps


PLATFORM = Platform(
    memory_mb={"ApiFunction": 512, "FanoutFunction": 512, "WebhookWorkerFunction": 512, "TallyFunction": 512},
    behind_http_api=frozenset({"ApiFunction"}),
    fed_by_queues=frozenset({"FanoutFunction", "WebhookWorkerFunction"}),
    architectures=dict.fromkeys(
        ("ApiFunction", "FanoutFunction", "WebhookWorkerFunction", "TallyFunction"), "arm64"
    ),
)


def test_an_events_fixed_cost_is_shared_by_the_deliveries_of_its_fan_out() -> None:
    shared = scaled(measured()[f"event_accept_{FANOUT_WIDTH}"], 1 / FANOUT_WIDTH)

    assert shared["write_units"]["total"] == pytest.approx(3.0 / FANOUT_WIDTH)
    assert shared["calls"]["dynamodb:Query"] == pytest.approx(2.0 / FANOUT_WIDTH)
    assert shared["lambda"]["ApiFunction"] == {"invocations": 1 / FANOUT_WIDTH, "ms": 100.0 / FANOUT_WIDTH}


def test_a_fan_out_delivery_costs_its_share_of_the_event_plus_its_page_and_worker_steps() -> None:
    costs = fanout_costs(measured(), PLATFORM, PriceList.load())
    plain, limited = (costs[name]["per_notification"] for name in FANOUT_DELIVERIES)

    assert plain["write_units"] == pytest.approx(3.0 / FANOUT_WIDTH + 3.0 + 2.0 + 0.02)
    assert limited["write_units"] - plain["write_units"] == pytest.approx(1.0)
    assert plain["api_requests"] == pytest.approx(1 / FANOUT_WIDTH)


def test_a_fan_out_delivery_whose_steps_were_not_measured_is_left_out() -> None:
    steps = measured()
    del steps["event_deliver_rate_limited"]

    assert list(fanout_costs(steps, PLATFORM, PriceList.load())) == [next(iter(FANOUT_DELIVERIES))]


def test_the_events_section_gives_write_units_per_delivered_job_against_the_target_and_svixs_price() -> None:
    steps = measured()
    prices = PriceList.load()
    results = {
        "write_units_per_notification": steps,
        "calls_per_notification": steps,
        "fanout_cost_per_million": fanout_costs(steps, PLATFORM, prices),
        "prices": {"alternatives": {"svix": {"usd": 0.0001, "per": 1, "as_of": "read 2026-09-20"}}},
        "fanout_timing": {
            "1000": {
                "subscriptions": 1000,
                "runs": [61.5],
                "median_seconds": 61.5,
                "registration_seconds": 40.0,
                "registered_by": "over HTTP for 100, copies for the rest",
                "accept_503s": 0,
                "fanout_page_timeouts": 2,
            }
        },
    }

    text = _events(results)

    assert "**Write units per delivered fan-out job: 5** (above the target of 4)" in text
    assert (
        "the job item of 1061 bytes, which refers to the 1 KB event the event item holds once (the queue"
        " message carries the body), 37 bytes past 1 KB, 2 table and 1 index units" in text
    )
    assert "plus 3 per event whatever its width" in text
    assert "A rate-limited subscription's delivery writes 1 more (its send slot)" in text
    assert "Read units: 3 / 4 / 15 per event for 1 / 10 / 100 subscriptions" in text
    assert "| 1000 | 61.50 | 61.50 | 40 s, over HTTP for 100, copies for the rest | 0 / 2 |" in text
    assert "Svix's list price as of writing: $100.00 per million messages, from svix.com/pricing" in text
    total = results["fanout_cost_per_million"][next(iter(FANOUT_DELIVERIES))]["usd_total"]
    assert f"{100 / total:.0f}×" in text


def test_without_the_local_stack_run_the_section_says_the_timing_was_not_measured() -> None:
    steps = measured()
    results = {
        "write_units_per_notification": steps,
        "calls_per_notification": steps,
        "prices": {"alternatives": {"svix": {"usd": 0.0001, "per": 1, "as_of": ""}}},
    }

    assert "not measured in this run (`--skip-fanout-timing`)" in _events(results)


def test_metering_side_by_side_counts_the_meters_time_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([0.0, 1.5])  # the first metering starts at 0; the last of the overlapping ends at 1.5
    monkeypatch.setattr("bench.table_meter.time.perf_counter", lambda: next(clock))
    meter = TableMeter({}, client=None)  # type: ignore[arg-type]

    with meter._overhead(), meter._overhead():  # a second write metered while the first is
        pass

    assert meter.overhead_seconds == 1.5


def test_a_batch_of_messages_with_group_ids_is_a_fair_queue_request() -> None:
    seen = FairQueueUse()
    entries = [{"Id": "1", "MessageBody": "{}", "MessageGroupId": "tenant"}]

    sqs = get_session().create_client("sqs", region_name="us-east-1")

    seen(SdkCall(sqs, "SendMessageBatch", {"QueueUrl": "q", "Entries": entries}), lambda: None)

    assert seen.seen
