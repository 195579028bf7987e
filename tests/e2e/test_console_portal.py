"""The portal page in a real browser against the local stack, as a tenant's customer uses it: the
link opens the page, which exchanges the token and takes it out of the address; the customer adds
its endpoint (the secret shown once, with a copy button), tests, disables and enables it, reads its
deliveries and deletes it, and never sees another subscriber's endpoint; text the tenant wrote is
shown as text; the link does not open twice."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from tests.e2e.browser import DESKTOP, accessibility_problems, screenshot

pytestmark = pytest.mark.e2e

HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    made = browser.new_context(viewport=DESKTOP)
    yield made
    made.close()


def made(tenant: Tenant, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = tenant.call("POST", path, body)
    assert answer.status_code == 201, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def opened(context: BrowserContext, url: str) -> Page:
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(url)
    return page


def test_a_customer_manages_its_own_endpoint_on_the_portal_page(
    local_stack: RunningStack, context: BrowserContext, browser: Browser
) -> None:
    tenant = new_tenant(local_stack, providers=())
    made(tenant, "/event-types", {"name": "order.paid", "description": f"An order was paid {HOSTILE}"})
    made(tenant, "/event-types", {"name": "order.refunded", "description": "An order was refunded"})
    hooks = f"{local_stack.sandbox_url}/hooks/portal-page-{uuid.uuid4().hex[:8]}"
    made(
        tenant,
        "/subscriptions",
        {"url": f"{hooks}-theirs", "eventTypes": ["order.paid"], "subscriberId": "cust_2"},
    )
    link = made(tenant, "/portal-links", {"subscriberId": "cust_1", "ttlSeconds": 600})["url"]

    page = opened(context, link)
    expect(page.get_by_role("heading", name="Webhook endpoints")).to_be_visible()
    expect(page.get_by_text("Endpoints of cust_1")).to_be_visible()
    expect(page.get_by_text("No endpoint yet: add one below.")).to_be_visible()
    # The token left the address bar (and the history) once it was exchanged.
    assert page.url == f"{local_stack.base_url}/portal"
    # The tenant's text is text.
    expect(page.get_by_text(f"An order was paid {HOSTILE}", exact=False)).to_be_visible()

    page.get_by_label("URL").fill(f"{hooks}-mine")
    page.get_by_label("Description (optional)").fill("Orders <b>bold</b>")
    page.get_by_role("checkbox", name="order.paid").check()
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.get_by_role("heading", name="Signing secret")).to_be_visible()
    secret = page.locator("[data-secret]").inner_text()
    assert secret.startswith("whsec_")
    expect(page.get_by_role("button", name="Copy Signing secret")).to_be_visible()
    row = page.locator("tr[data-subscription]")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(f"{hooks}-mine")
    expect(row).to_contain_text("Orders <b>bold</b>")
    expect(row).to_contain_text("enabled")
    assert accessibility_problems(page) == []
    screenshot(page, "portal")

    row.get_by_role("button", name="Send test").click()
    expect(page.locator("#toast")).to_contain_text("Test delivered: HTTP 200.")
    row.get_by_role("button", name="Disable").click()
    expect(row).to_contain_text("disabled")
    row.get_by_role("button", name="Enable").click()
    expect(row).to_contain_text("enabled")
    row.get_by_role("button", name="Deliveries").click()
    expect(page.get_by_role("heading", name=f"Recent deliveries to {hooks}-mine")).to_be_visible()
    expect(page.get_by_text("No delivery yet.")).to_be_visible()

    # A reload keeps the session (the cookie), without the token.
    page.reload()
    expect(page.locator("tr[data-subscription]")).to_have_count(1)
    assert page.title() != "pwned"

    # The link does not open twice, in this browser or another.
    other = browser.new_context(viewport=DESKTOP)
    try:
        again = opened(other, link)
        expect(again.get_by_role("heading", name="This portal link can no longer be used")).to_be_visible()
        expect(
            again.get_by_text("This portal link has expired or was already used; ask for a new one.")
        ).to_be_visible()
    finally:
        other.close()

    page.locator("tr[data-subscription]").get_by_role("button", name="Delete").click()
    expect(page.get_by_text("No endpoint yet: add one below.")).to_be_visible()
    # The other subscriber's endpoint was never shown, and still stands.
    listed = requests.get(
        f"{local_stack.api_root}/subscriptions", headers={"X-API-Key": tenant.api_key}, timeout=HTTP_TIMEOUT
    ).json()["data"]
    assert [item["subscriberId"] for item in listed] == ["cust_2"]


def test_a_signed_out_portal_says_so(local_stack: RunningStack, context: BrowserContext) -> None:
    tenant = new_tenant(local_stack, providers=())
    link = made(tenant, "/portal-links", {"ttlSeconds": 60})["url"]
    page = opened(context, link)
    expect(page.get_by_text("Every endpoint of the account")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Signed out")).to_be_visible()
    page.reload()
    expect(page.get_by_text("The portal session has ended; open a new portal link.")).to_be_visible()
