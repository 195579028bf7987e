"""What an event and its fan-out cost, step by step, on the rig of bench.rig (real handlers, moto):
an event accepted for 1, 10 and 100 subscriptions (its fixed cost), one fan-out page of 100
subscriptions (FanoutFunction, per delivery job it writes), a batch of delivery jobs through the
webhook worker, plain and for rate-limited subscriptions (each delivery reserves its send slot).

The tenant's subscriptions are registered through the API and point at the provider sandbox's hook
receiver; the event type has a small schema the payload (bench.samples' 1 KB order event) passes.
Each step is warmed up as bench.scenarios' are, and asserts its outcome afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.costs import Platform, PriceList, usd_per_million
from bench.rig import API, WEBHOOK_QUEUE, Rig, Step, StepCost
from bench.samples import ORDER_EVENT
from herald.services.tenants import IssuedKey

FANOUT_QUEUE = "FanoutQueueUrl"
EVENT_TYPE = "order.paid"
# What the accept checks the payload against: the order's shape, as a tenant would describe it.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["type", "id", "data"],
    "properties": {
        "type": {"type": "string"},
        "id": {"type": "string"},
        "data": {"type": "object", "required": ["order"]},
    },
}
ACCEPT_WIDTHS = (1, 10, 100)
PAGE_WIDTH = 100  # a full fan-out page (FANOUT_PAGE_SIZE)


# Tenants with many subscriptions, by rig and width: registering 100 through the API takes most of a
# minute, and an event accepted or fanned out for one leaves nothing the next step would measure.
_shared: dict[tuple[int, int], IssuedKey] = {}


def shared_tenant(rig: Rig, subscriptions: int) -> IssuedKey:
    key = (id(rig), subscriptions)
    if key not in _shared:
        _shared[key] = subscribed_tenant(rig, subscriptions)
    return _shared[key]


def subscribed_tenant(rig: Rig, subscriptions: int, rate_limit: int | None = None) -> IssuedKey:
    """A fresh tenant with the event type and ``subscriptions`` enabled subscriptions to it."""
    tenant = rig.new_tenant()
    created = rig.herald.api(
        "POST", "/api/v1/event-types", {"name": EVENT_TYPE, "schema": SCHEMA}, key=tenant.api_key
    )
    assert created.status == 201, created.body
    body: dict[str, Any] = {"url": rig.hook_url("fanout"), "eventTypes": [EVENT_TYPE]}
    if rate_limit is not None:
        body["rateLimitPerSecond"] = rate_limit
    for _ in range(subscriptions):
        answer = rig.herald.api("POST", "/api/v1/subscriptions", body, key=tenant.api_key)
        assert answer.status == 201, answer.body
    return tenant


def send_event(rig: Rig, tenant: IssuedKey, expected: int) -> str:
    answer = rig.call("POST", "/api/v1/events", {"type": EVENT_TYPE, "payload": ORDER_EVENT}, tenant.api_key)
    assert answer.status == 202, answer.body
    assert answer.data["subscriptions"] == expected, answer.body
    return str(answer.data["eventId"])


def accept_event(width: int) -> Step:
    """Events accepted one request at a time for a tenant with ``width`` subscriptions."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        tenant = shared_tenant(rig, width)
        rig.environment(API)
        send_event(rig, tenant, width)  # warm-up: key lookup, the schema validator, clients
        with rig.measuring(rig.batch_size) as cost:
            for _ in range(rig.batch_size):
                send_event(rig, tenant, width)
        rig.herald.drain_queues()
        return cost

    return step


def pages(rig: Rig, count: int) -> list[dict[str, Any]]:
    """``count`` fan-out pages (the queue holds only the step's own: it was drained before)."""
    records: list[dict[str, Any]] = []
    while len(records) < count and (batch := rig.herald.receive_records(FANOUT_QUEUE, count - len(records))):
        records += batch
    assert len(records) == count, f"{len(records)} of {count} fan-out pages"
    return records


def fan_out(rig: Rig, records: list[dict[str, Any]]) -> None:
    """Each page in its own invocation, as the template's BatchSize of 1 hands them over."""
    for record in records:
        assert rig.deliver(FANOUT_QUEUE, [record]) == {"batchItemFailures": []}


def fanout_page(rig: Rig) -> StepCost:
    """One page of ``PAGE_WIDTH`` subscriptions: per delivery job written and queued."""
    rig.herald.drain_queues()
    tenant = shared_tenant(rig, PAGE_WIDTH)
    rig.environment(API)
    send_event(rig, tenant, PAGE_WIDTH)
    send_event(rig, tenant, PAGE_WIDTH)
    rig.environment(rig.herald.event_source(FANOUT_QUEUE).function)
    warm_up, measured = pages(rig, 2)
    fan_out(rig, [warm_up])  # the tenant's plan, clients
    with rig.measuring(PAGE_WIDTH) as cost:
        fan_out(rig, [measured])
    queued = 0
    while batch := rig.herald.receive_records(WEBHOOK_QUEUE, 10):
        queued += len(batch)
        rig.herald.acknowledge(WEBHOOK_QUEUE, batch, {})
    assert queued == 2 * PAGE_WIDTH, f"{queued} delivery jobs queued of {2 * PAGE_WIDTH}"
    return cost


def deliver_fanout(rate_limit: int | None = None) -> Step:
    """A full worker batch of delivery jobs, one per subscription (of one event), each answered 2xx;
    with ``rate_limit``, each subscription's first delivery reserves its send slot (now)."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        tenant = subscribed_tenant(rig, rig.batch_size + 1, rate_limit)
        event_id = send_event(rig, tenant, rig.batch_size + 1)
        rig.environment(rig.herald.event_source(FANOUT_QUEUE).function)
        fan_out(rig, pages(rig, 1))
        rig.environment(rig.herald.event_source(WEBHOOK_QUEUE).function)
        rig.deliver(WEBHOOK_QUEUE, rig.receive(WEBHOOK_QUEUE, 1, tenant.tenant_id))  # warm-up
        records = rig.receive(WEBHOOK_QUEUE, rig.batch_size, tenant.tenant_id)
        with rig.measuring(len(records)) as cost:
            answer = rig.deliver(WEBHOOK_QUEUE, records)
        assert answer == {"batchItemFailures": []}, answer
        rig.environment(API)
        detail = rig.herald.api("GET", f"/api/v1/events/{event_id}", key=tenant.api_key)
        statuses = {delivery["status"] for delivery in detail.data["deliveries"]}
        assert statuses == {"completed"}, f"deliveries ended {statuses}"
        return cost

    return step


def scaled(step: Mapping[str, Any], factor: float) -> dict[str, Any]:
    """A step's per-notification figures times ``factor`` (an event's fixed cost shared by the
    deliveries of its fan-out), as bench.costs reads them."""
    return {
        **step,
        "calls": {call: count * factor for call, count in step["calls"].items()},
        "lambda": {
            function: {"invocations": use["invocations"] * factor, "ms": use["ms"] * factor}
            for function, use in step["lambda"].items()
        },
        "write_units": {"total": step["write_units"]["total"] * factor},
        "read_units": {"total": step["read_units"]["total"] * factor},
    }


# What one fan-out delivery costs end to end, for a 1 KB event to FANOUT_WIDTH subscriptions: the
# event's fixed cost shared by its deliveries, the fan-out page's share, the worker's delivery and
# the day counts' share (a delivery job's status changes are counted as any webhook's), by scenario
# key with each step's factor.
FANOUT_WIDTH = PAGE_WIDTH
FANOUT_DELIVERIES: dict[str, tuple[tuple[str, float], ...]] = {
    f"fan-out delivery ({FANOUT_WIDTH} subscriptions per event)": (
        (f"event_accept_{FANOUT_WIDTH}", 1 / FANOUT_WIDTH),
        ("event_fanout_page", 1.0),
        ("event_deliver", 1.0),
        ("tally_one_tenant", 1.0),
    ),
    f"rate-limited fan-out delivery ({FANOUT_WIDTH} per event)": (
        (f"event_accept_{FANOUT_WIDTH}", 1 / FANOUT_WIDTH),
        ("event_fanout_page", 1.0),
        ("event_deliver_rate_limited", 1.0),
        ("tally_one_tenant", 1.0),
    ),
}


def fanout_costs(
    scenarios: Mapping[str, Mapping[str, Any]], platform: Platform, prices: PriceList
) -> dict[str, Any]:
    """Cost per million fan-out deliveries, each way of ``FANOUT_DELIVERIES`` whose steps were
    measured (a partial run's results may predate them)."""
    return {
        name: {
            "steps": [{"key": key, "factor": factor} for key, factor in steps],
            **usd_per_million([scaled(scenarios[key], factor) for key, factor in steps], platform, prices),
        }
        for name, steps in FANOUT_DELIVERIES.items()
        if all(key in scenarios and "fair_queues" in scenarios[key] for key, _ in steps)
    }
