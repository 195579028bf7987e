"""Events over HTTP through the local stack, as a tenant uses them: an event type with a schema, three
subscriptions (one of them failing), one event that each good endpoint receives exactly once signed
with its own subscription's secret while the failing one is retried and its breaker shows it; a
payload that breaks the schema refused at accept; channels; usage; a send-only key; another
tenant's event; the plain webhook route beside it; and a rate-limited subscription's deliveries
spread out."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
import requests

from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from tests.e2e.clients import finished_job, sandbox, wait_for
from tests.e2e.test_delivery import notifykit_verifies, standard_verifies

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

ORDER_PAID = {
    "name": "order.paid",
    "description": "An order was paid",
    "schema": {
        "type": "object",
        "required": ["orderId", "amount"],
        "properties": {"orderId": {"type": "string"}, "amount": {"type": "integer", "minimum": 1}},
    },
}
PAID = {"orderId": "ord_42", "amount": 4200}
# Three attempts (MaxAttempts) two and four seconds apart locally: a failing delivery ends well inside.
DELIVERY_TIMEOUT_SECONDS = 90.0
# The documented bound of a paced subscription: its rate, plus one at an interval's edge.
RATE = 2


def answered(tenant: Tenant, method: str, path: str, body: Any, status: int) -> Any:
    answer = tenant.call(method, path, body)
    assert answer.status_code == status, answer.text
    return answer.json()["data"]


def refused(answer: requests.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    assert body["success"] is False
    return body


def register_secret(stack: RunningStack, secret: str) -> None:
    """The sandbox checks each webhook it receives from now on against this secret too."""
    answer = requests.post(
        f"{stack.sandbox_url}/_sandbox/secrets", json={"secret": secret}, timeout=HTTP_TIMEOUT
    )
    assert answer.status_code == 201, answer.text


def subscribe(stack: RunningStack, tenant: Tenant, name: str, **extra: Any) -> dict[str, Any]:
    body = {"url": f"{stack.sandbox_url}/hooks/{name}", "eventTypes": ["order.paid"], **extra}
    created: dict[str, Any] = answered(tenant, "POST", "/subscriptions", body, 201)
    assert created["secret"].startswith("whsec_")
    return created


def send_event(tenant: Tenant, body: dict[str, Any], subscriptions: int) -> str:
    accepted = answered(tenant, "POST", "/events", {"type": "order.paid", **body}, 202)
    assert (accepted["type"], accepted["subscriptions"]) == ("order.paid", subscriptions)
    return str(accepted["eventId"])


def arrivals(stack: RunningStack, name: str, event_id: str) -> list[dict[str, Any]]:
    """What the endpoint ``name`` received of the event, oldest first."""
    return [hook for hook in sandbox(stack, "hooks", name=name) if (hook["json"] or {}).get("id") == event_id]


def deliveries(tenant: Tenant, event_id: str) -> dict[str, dict[str, Any]]:
    """GET /events/{id}'s deliveries by subscription id."""
    document = answered(tenant, "GET", f"/events/{event_id}", None, 200)
    return {delivery["subscriptionId"]: delivery for delivery in document["deliveries"]}


def all_finished(tenant: Tenant, event_id: str) -> dict[str, dict[str, Any]] | None:
    shown = deliveries(tenant, event_id)
    done = all(delivery["status"] in ("completed", "failed") for delivery in shown.values())
    return shown if shown and done else None


def test_an_event_reaches_each_subscription_once_signed_with_its_own_secret(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, [])
    other = new_tenant(local_stack, [])
    answered(tenant, "POST", "/event-types", ORDER_PAID, 201)
    run = uuid.uuid4().hex[:12]
    names = {"first": f"ev-first-{run}", "second": f"ev-second-{run}", "failing": f"fail-503-ev-{run}"}
    first = subscribe(local_stack, tenant, names["first"])
    second = subscribe(local_stack, tenant, names["second"], channels=["cust_1"])
    failing = subscribe(local_stack, tenant, names["failing"], channels=["cust_2"])
    ids = {"first": first["id"], "second": second["id"], "failing": failing["id"]}
    # Only the first subscription's secret is known to the sandbox for now: its checks must pass
    # for that one's delivery and fail for the second's.
    register_secret(local_stack, first["secret"])

    # A payload that breaks the schema is refused at accept, with where and what.
    bad = refused(tenant.call("POST", "/events", {"type": "order.paid", "payload": {"orderId": 42}}), 400)
    assert bad["code"] == "event_payload_invalid"
    assert bad["error"] == (
        "The payload does not match event type order.paid's schema (version 1): at its top level,"
        " 'amount' is a required property (and 1 more, listed in errors)."
    )
    assert sorted((error["path"], error["message"]) for error in bad["errors"]) == [
        ("", "'amount' is a required property"),
        ("/orderId", "42 is not of type 'string'"),
    ]
    assert answered(tenant, "GET", "/events", None, 200)["data"] == []

    event_id = send_event(tenant, {"payload": PAID}, subscriptions=3)
    shown = wait_for(
        lambda: all_finished(tenant, event_id), "the event's deliveries", DELIVERY_TIMEOUT_SECONDS
    )

    # Each good endpoint received it once, as {id, type, timestamp, data}; the failing one three times.
    [to_first] = arrivals(local_stack, names["first"], event_id)
    [to_second] = arrivals(local_stack, names["second"], event_id)
    to_failing = arrivals(local_stack, names["failing"], event_id)
    for hook in (to_first, to_second):
        body = json.loads(hook["body"])
        assert sorted(body) == ["data", "id", "timestamp", "type"]
        assert (body["id"], body["type"], body["data"]) == (event_id, "order.paid", PAID)
    assert len(to_failing) == 3
    assert {hook["status"] for hook in to_failing} == {503}
    assert len({hook["jobId"] for hook in (to_first, to_second, *to_failing)}) == 3

    # Each delivery is signed with its own subscription's secret, and not with the other's.
    assert to_first["signatures"] == {"notifykit": True, "standard": True}
    assert to_second["signatures"] == {"notifykit": False, "standard": False}
    for hook, own, foreign in ((to_first, first, second), (to_second, second, first)):
        raw, headers = hook["body"].encode(), hook["headers"]
        assert standard_verifies(own["secret"], raw, headers)
        assert notifykit_verifies(own["secret"], raw, headers)
        assert not standard_verifies(foreign["secret"], raw, headers)
        assert not notifykit_verifies(foreign["secret"], raw, headers)

    # The event shows each delivery; the failing one's breaker counts its failures.
    assert {key: (shown[sub]["status"], shown[sub]["attempts"]) for key, sub in ids.items()} == {
        "first": ("completed", 1),
        "second": ("completed", 1),
        "failing": ("failed", 3),
    }
    assert (shown[ids["failing"]]["responseStatus"], shown[ids["first"]]["responseStatus"]) == (503, 200)
    assert "503" in shown[ids["failing"]]["lastError"]
    assert {shown[sub]["jobId"] for sub in ids.values()} == {
        hook["jobId"] for hook in (to_first, to_second, *to_failing)
    }
    broken = answered(tenant, "GET", f"/subscriptions/{ids['failing']}", None, 200)
    assert broken["breaker"]["consecutiveFailures"] == 3
    assert "503" in broken["breaker"]["lastError"]
    assert (broken["state"], broken["breaker"]["state"]) == ("enabled", "closed")
    healthy = answered(tenant, "GET", f"/subscriptions/{ids['first']}", None, 200)["breaker"]
    assert (healthy["state"], healthy["consecutiveFailures"], healthy["lastError"]) == ("closed", 0, None)

    # Channels: an event to cust_1 reaches the subscription of that channel and the one of none.
    register_secret(local_stack, second["secret"])
    channel_event = send_event(tenant, {"payload": PAID, "channels": ["cust_1"]}, subscriptions=2)
    wait_for(
        lambda: all_finished(tenant, channel_event),
        "the channel event's deliveries",
        DELIVERY_TIMEOUT_SECONDS,
    )
    assert set(deliveries(tenant, channel_event)) == {ids["first"], ids["second"]}
    [again_second] = arrivals(local_stack, names["second"], channel_event)
    assert again_second["signatures"] == {"notifykit": True, "standard": True}
    assert len(arrivals(local_stack, names["first"], channel_event)) == 1
    assert arrivals(local_stack, names["failing"], channel_event) == []

    # A send-only key sends events, and cannot register endpoints.
    key = answered(tenant, "POST", "/account/keys", {"name": "events", "scopes": ["send"]}, 201)["key"]
    sender = Tenant(tenant.api_root, tenant.tenant_id, key)
    quiet_event = send_event(sender, {"payload": PAID, "channels": ["cust_9"]}, subscriptions=1)
    scoped = refused(
        sender.call("POST", "/subscriptions", {"url": first["url"], "eventTypes": ["order.paid"]}), 403
    )
    assert (scoped["code"], scoped["error"]) == (
        "insufficient_scope",
        'This request needs the manage scope, which the API key "events" lacks.',
    )

    # Another tenant cannot read the event.
    for stranger_event in (event_id, quiet_event):
        unknown = refused(other.call("GET", f"/events/{stranger_event}"), 404)
        assert (unknown["code"], unknown["error"]) == ("event_not_found", "No event with this id.")

    # The plain webhook route works as before, beside the events.
    plain = f"ev-plain-{run}"
    job_id = tenant.send("webhook", {"url": f"{local_stack.sandbox_url}/hooks/{plain}", "payload": {"n": 1}})
    assert (finished_job(tenant, job_id)["status"]) == "completed"
    [plain_hook] = sandbox(local_stack, "hooks", name=plain)
    assert (plain_hook["json"], plain_hook["jobId"]) == ({"n": 1}, job_id)

    # One webhook counted per delivery: 3 + 2 + 1 for the events, 1 for the plain webhook.
    assert answered(tenant, "GET", "/account", None, 200)["usage"]["webhooks"] == 7
    wait_for(lambda: arrivals(local_stack, names["first"], quiet_event), "the send-only key's event")


def received_at(hook: dict[str, Any]) -> float:
    return datetime.fromisoformat(hook["receivedAt"]).timestamp()


def test_a_rate_limited_subscriptions_deliveries_are_spread_out(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, [])
    answered(tenant, "POST", "/event-types", ORDER_PAID, 201)
    name = f"ev-paced-{uuid.uuid4().hex[:12]}"
    subscribe(local_stack, tenant, name, rateLimitPerSecond=RATE)

    sent = [
        send_event(tenant, {"payload": {**PAID, "orderId": f"ord_{n}"}}, subscriptions=1) for n in range(8)
    ]

    hooks = wait_for(
        lambda: len(found := sandbox(local_stack, "hooks", name=name)) >= len(sent) and found,
        "the paced deliveries",
        DELIVERY_TIMEOUT_SECONDS,
    )
    assert sorted(hook["json"]["id"] for hook in hooks) == sorted(sent)
    times = sorted(received_at(hook) for hook in hooks)
    busiest = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert busiest <= RATE + 1, times
    assert times[-1] - times[0] >= 3.0, times
