"""Subscriptions over HTTP through the local stack, as a tenant uses them: register an endpoint for
an event type, send it a test event that arrives signed with the subscription's own secret (and,
after a rotation, with the previous one too), change, disable, enable and delete it; another
tenant's id, a private address, an unknown event type and a read-only key are refused with their
sentences.

Event types are made through ``POST /api/v1/event-types``; where the stack does not serve that route
yet, the tests that need one are skipped (the refusals that need none still run)."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import requests

from herald_harness.tenants import HTTP_TIMEOUT, new_tenant
from tests.e2e.clients import sandbox
from tests.e2e.test_delivery import notifykit_verifies, standard_verifies

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack
    from herald_harness.tenants import Tenant

pytestmark = pytest.mark.e2e

EXAMPLE = {"orderId": "ord_42", "amount": 4200}
ORDER_PAID = {
    "name": "order.paid",
    "description": "An order was paid",
    "schema": {"type": "object", "required": ["orderId"], "examples": [EXAMPLE]},
}


def answered(tenant: Tenant, method: str, path: str, body: Any, status: int) -> dict[str, Any]:
    answer = tenant.call(method, path, body)
    assert answer.status_code == status, answer.text
    result: dict[str, Any] = answer.json()
    return result


def refused(tenant: Tenant, method: str, path: str, body: Any, status: int) -> tuple[str, str]:
    answer = answered(tenant, method, path, body, status)
    return answer["code"], answer["error"]


def with_event_type(local_stack: RunningStack) -> Tenant:
    """A tenant with the event type ``order.paid`` (skipped where the stack has no event-type route)."""
    tenant = new_tenant(local_stack, [])
    answer = tenant.call("POST", "/event-types", ORDER_PAID)
    if answer.status_code == 404 and answer.json().get("code") == "not_found":
        pytest.skip("this stack serves no POST /api/v1/event-types yet")
    assert answer.status_code == 201, answer.text
    return tenant


def hook_url(local_stack: RunningStack, name: str) -> str:
    return f"{local_stack.sandbox_url}/hooks/{name}"


def test_a_test_event_arrives_signed_with_the_subscriptions_secrets(local_stack: RunningStack) -> None:
    tenant = with_event_type(local_stack)
    name = f"sub-{uuid.uuid4().hex}"
    body = {
        "url": hook_url(local_stack, name),
        "eventTypes": ["order.paid"],
        "headers": {"X-Receiver": "r-77"},
    }
    created = answered(tenant, "POST", "/subscriptions", body, 201)["data"]
    first = created["secret"]
    rotated = answered(tenant, "POST", f"/subscriptions/{created['id']}/secret/rotate", None, 200)["data"]
    second = rotated["secret"]
    assert second != first
    assert rotated["previousValidUntil"] is not None

    outcome = answered(tenant, "POST", f"/subscriptions/{created['id']}/test", {}, 200)["data"]

    assert (outcome["ok"], outcome["error"], outcome["eventType"]) == (True, None, "order.paid")
    assert 200 <= outcome["statusCode"] < 300
    [hook] = sandbox(local_stack, "hooks", name=name)
    raw_body, headers = hook["body"].encode(), hook["headers"]
    event = json.loads(raw_body)
    assert (event["id"], event["type"], event["data"]) == (outcome["eventId"], "order.paid", EXAMPLE)
    assert event["id"].startswith("evt_test_")
    # Both secrets sign during the overlap; the NotifyKit header's last signature is the new one's.
    assert standard_verifies(first, raw_body, headers)
    assert standard_verifies(second, raw_body, headers)
    assert notifykit_verifies(second, raw_body, headers)
    assert {key.lower(): value for key, value in headers.items()}["x-receiver"] == "r-77"
    # Neither secret is shown again; a second test within 10 seconds waits.
    shown = tenant.call("GET", f"/subscriptions/{created['id']}")
    assert first not in shown.text
    assert second not in shown.text
    again = tenant.call("POST", f"/subscriptions/{created['id']}/test", {})
    assert (again.status_code, again.json()["code"], again.headers["Retry-After"]) == (
        429,
        "rate_limit_exceeded",
        "10",
    )


def test_a_subscription_is_changed_disabled_enabled_and_deleted_and_stays_its_tenants(
    local_stack: RunningStack,
) -> None:
    tenant = with_event_type(local_stack)
    other = new_tenant(local_stack, [])
    body = {"url": hook_url(local_stack, "crud"), "eventTypes": ["order.paid"], "rateLimitPerSecond": 5}
    sub_id = answered(tenant, "POST", "/subscriptions", body, 201)["data"]["id"]
    path = f"/subscriptions/{sub_id}"

    changed = answered(tenant, "PATCH", path, {"channels": ["eu"], "rateLimitPerSecond": None}, 200)["data"]
    assert (changed["channels"], changed["rateLimitPerSecond"], changed["state"]) == (["eu"], None, "enabled")
    assert answered(tenant, "POST", f"{path}/disable", None, 200)["data"]["state"] == "disabled"
    assert [item["state"] for item in answered(tenant, "GET", "/subscriptions", None, 200)["data"]] == [
        "disabled"
    ]
    assert answered(tenant, "POST", f"{path}/enable", None, 200)["data"]["breaker"]["state"] == "closed"
    history = answered(tenant, "GET", f"{path}/deliveries", None, 200)["data"]
    assert (history["data"], history["pagination"]["nextCursor"]) == ([], None)

    for method, suffix, request in [
        ("GET", "", None),
        ("PATCH", "", {"description": "x"}),
        ("DELETE", "", None),
    ]:
        assert refused(other, method, f"{path}{suffix}", request, 404) == (
            "subscription_not_found",
            f"There is no subscription {sub_id}.",
        )
    answered(tenant, "DELETE", path, None, 200)
    assert refused(tenant, "GET", path, None, 404) == (
        "subscription_not_found",
        f"There is no subscription {sub_id}.",
    )


@pytest.mark.parametrize(
    "url", ["https://10.0.0.1/hook", "https://169.254.169.254/latest/meta-data/", "http://example.com/hook"]
)
def test_a_private_metadata_or_plain_http_url_is_refused_at_registration(
    local_stack: RunningStack, url: str
) -> None:
    tenant = new_tenant(local_stack, [])
    code, error = refused(tenant, "POST", "/subscriptions", {"url": url, "eventTypes": ["order.paid"]}, 400)
    assert code == "url_not_allowed"
    assert error.startswith("The subscription's URL is not allowed: ")
    assert answered(tenant, "GET", "/subscriptions", None, 200)["data"] == []


def test_an_unknown_event_type_is_named_and_a_read_only_key_cannot_register(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, [])
    body = {"url": hook_url(local_stack, "unknown"), "eventTypes": ["invoice.voided"]}
    assert refused(tenant, "POST", "/subscriptions", body, 400) == (
        "validation_error",
        "Invalid request: eventTypes: there is no event type invoice.voided (or it is archived); create it first.",
    )
    key = answered(tenant, "POST", "/account/keys", {"name": "Reader", "scopes": ["read"]}, 201)["data"][
        "key"
    ]
    reader = requests.post(
        f"{tenant.api_root}/subscriptions", json=body, headers={"X-API-Key": key}, timeout=HTTP_TIMEOUT
    )
    assert (reader.status_code, reader.json()["code"]) == (403, "insufficient_scope")
    listed = requests.get(
        f"{tenant.api_root}/subscriptions", headers={"X-API-Key": key}, timeout=HTTP_TIMEOUT
    )
    assert listed.status_code == 200
