"""The portal over HTTP through the local stack, as a tenant and its customer use it: the tenant makes
a link for "cust_1"; the customer's client opens it once for the portal cookie, adds its own
endpoint and sees only its own subscriptions; a second opening of the link fails; the cookie opens
none of the tenant's keys, jobs or account, and no other subscriber's subscription."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pytest
import requests

from herald_harness.tenants import HTTP_TIMEOUT, new_tenant

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack
    from herald_harness.tenants import Tenant

pytestmark = pytest.mark.e2e

SPENT = "This portal link has expired or was already used; ask for a new one."


def made(tenant: Tenant, method: str, path: str, body: Any, status: int = 201) -> Any:
    """The answer's data: an object, or a list for a listing."""
    answer = tenant.call(method, path, body)
    assert answer.status_code == status, answer.text
    return answer.json()["data"]


def test_a_customer_opens_its_link_once_and_manages_only_its_own_endpoints(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, providers=())
    hooks = f"{local_stack.sandbox_url}/hooks/portal-{uuid.uuid4().hex[:8]}"
    made(tenant, "POST", "/event-types", {"name": "order.paid", "description": "An order was paid"})
    theirs = made(
        tenant,
        "POST",
        "/subscriptions",
        {"url": f"{hooks}-2", "eventTypes": ["order.paid"], "subscriberId": "cust_2"},
    )
    link = made(tenant, "POST", "/portal-links", {"subscriberId": "cust_1", "ttlSeconds": 600})
    assert link["url"].startswith(f"{local_stack.base_url}/portal#")
    token = link["url"].split("#", 1)[1]

    # The customer's client: the page, then the token's exchange from the page's own origin.
    client = requests.Session()
    page = client.get(f"{local_stack.base_url}/portal", timeout=HTTP_TIMEOUT)
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    proof = {"Origin": local_stack.base_url}
    portal = f"{local_stack.api_root}/portal"
    opened = client.post(f"{portal}/session", json={"token": token}, headers=proof, timeout=HTTP_TIMEOUT)
    assert opened.status_code == 200, opened.text
    assert opened.json()["data"]["subscriberId"] == "cust_1"
    # The cookie is Secure; requests keeps it for https only, so this client sends it itself (a
    # browser counts http://127.0.0.1 as a secure context and sends it to /api/v1/portal).
    client.headers["Cookie"] = f"herald_portal={opened.cookies['herald_portal']}"

    catalog = client.get(f"{portal}/event-types", timeout=HTTP_TIMEOUT).json()["data"]
    assert [entry["name"] for entry in catalog] == ["order.paid"]
    added = client.post(
        f"{portal}/subscriptions",
        json={"url": f"{hooks}-1", "eventTypes": ["order.paid"]},
        headers=proof,
        timeout=HTTP_TIMEOUT,
    )
    assert added.status_code == 201, added.text
    mine = added.json()["data"]
    assert (mine["subscriberId"], mine["secret"][:6]) == ("cust_1", "whsec_")
    listed = client.get(f"{portal}/subscriptions", timeout=HTTP_TIMEOUT).json()["data"]
    assert [item["id"] for item in listed] == [mine["id"]]
    # The tenant sees both, each with its subscriber.
    everything = made(tenant, "GET", "/subscriptions", None, 200)
    assert {(item["id"], item["subscriberId"]) for item in everything} == {
        (mine["id"], "cust_1"),
        (theirs["id"], "cust_2"),
    }

    # Another subscriber's subscription is not there for this cookie.
    other = client.get(f"{portal}/subscriptions/{theirs['id']}", timeout=HTTP_TIMEOUT)
    assert (other.status_code, other.json()["error"]) == (404, f"There is no subscription {theirs['id']}.")
    removed = client.delete(f"{portal}/subscriptions/{theirs['id']}", headers=proof, timeout=HTTP_TIMEOUT)
    assert removed.status_code == 404

    # A second opening of the link, by anyone, fails.
    again = requests.post(f"{portal}/session", json={"token": token}, headers=proof, timeout=HTTP_TIMEOUT)
    assert (again.status_code, again.json()["code"], again.json()["error"]) == (
        401,
        "portal_link_invalid",
        SPENT,
    )


def test_the_portal_cookie_cannot_list_the_tenants_keys_or_jobs(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, providers=())
    link = made(tenant, "POST", "/portal-links", {"subscriberId": "cust_1", "ttlSeconds": 60})
    token = link["url"].split("#", 1)[1]
    proof = {"Origin": local_stack.base_url}
    opened = requests.post(
        f"{local_stack.api_root}/portal/session", json={"token": token}, headers=proof, timeout=HTTP_TIMEOUT
    )
    cookie = f"herald_portal={opened.cookies['herald_portal']}"
    # The browser would not even send it there (its path is /api/v1/portal); a client that does
    # gets what a request without a key gets.
    for path in ("/account/keys", "/notifications/jobs", "/account", "/subscriptions"):
        answer = requests.get(
            f"{local_stack.api_root}{path}", headers={"Cookie": cookie}, timeout=HTTP_TIMEOUT
        )
        assert (answer.status_code, answer.json()["error"]) == (
            401,
            "An API key is required (X-API-Key header).",
        ), path
    # Nor does the tenant's key open the portal's routes.
    by_key = tenant.call("GET", "/portal/subscriptions")
    assert (by_key.status_code, by_key.json()["error"]) == (
        401,
        "The portal session has ended; open a new portal link.",
    )
