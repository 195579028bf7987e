"""The console's webhook platform pages in a real browser against the local stack: an event type
created (a schema that is not JSON, and one the API refuses, each with its sentence by the form),
given a second version, deprecated, archived and brought back; two subscriptions to the sandbox's
receiver (one answering 503) with their secrets shown once; an event sent with the account's key
and its fan-out page showing each delivery's status and a link to its job; a subscription tested,
its secret rotated, disabled and enabled, one deleted; markup in a description and a payload shown
as text; a viewer sees the pages without any control that would change them; the pages on a phone."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from herald_harness.running_stack import RunningStack
from tests.e2e.browser import DESKTOP, PHONE, Console, screenshot, sign_up
from tests.e2e.test_console_phone import fits_a_phone
from tests.e2e.test_console_team import invite, sign_in

pytestmark = pytest.mark.e2e

MARKUP = "<img src=x onerror=\"document.title='pwned'\">"
SCHEMA = '{"type": "object", "required": ["orderId"], "examples": [{"orderId": "ord_1"}]}'
SECOND_SCHEMA = '{"type": "object", "required": ["orderId", "amount"]}'
# A $ref to a URL: Herald never fetches a schema, so the API refuses it with its sentence.
REMOTE_SCHEMA = '{"$ref": "https://schemas.example.com/order.json"}'
# The delivery's polling and the sandbox's retries take a few seconds.
DELIVERED_MS = 30_000


@pytest.fixture(scope="module")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def hook(console: Console, name: str) -> str:
    return f"{console.stack.sandbox_url}/hooks/{name}"


def form_error(page: Page) -> Locator:
    return page.locator(".form-error")


def create_event_type(console: Console, name: str) -> Page:
    page = console.open("/console/event-types", "Event types")
    form = page.get_by_role("form", name="New event type")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Description (optional)").fill(f"An order was paid {MARKUP}")
    form.get_by_label("Schema (JSON Schema 2020-12, optional)").fill(SCHEMA)
    form.get_by_role("button", name="Create event type").click()
    expect(page.get_by_role("heading", name="Version 1")).to_be_visible()
    return page


def create_subscription(console: Console, url: str, event_type: str, description: str = "") -> str:
    """Creates it on the Subscriptions page; the secret it shows once."""
    page = console.open("/console/subscriptions", "Subscriptions")
    form = page.get_by_role("form", name="New subscription")
    form.get_by_label("URL").fill(url)
    form.get_by_role("checkbox", name=re.compile(f"^{re.escape(event_type)}")).check()
    form.get_by_label("Description (optional)").fill(description)
    form.get_by_role("button", name="Create subscription").click()
    secret = page.locator("[data-secret]")
    expect(secret).to_have_text(re.compile(r"^whsec_\S+$"))
    expect(page.locator("tr[data-subscription]").filter(has_text=url)).to_be_visible()
    return secret.inner_text()


def test_an_event_type_is_created_versioned_deprecated_archived_and_restored(console: Console) -> None:
    page = console.open("/console/event-types", "Event types")
    expect(page.get_by_text("No event type yet.")).to_be_visible()
    form = page.get_by_role("form", name="New event type")
    form.get_by_label("Name").fill("invoice.sent")
    schema = form.get_by_label("Schema (JSON Schema 2020-12, optional)")
    schema.fill('{"type": "object",')
    form.get_by_role("button", name="Create event type").click()
    expect(form_error(page)).to_contain_text("The schema is not valid JSON:")

    refusal = console.tenant.call(
        "POST",
        "/event-types",
        {"name": "probe.remote", "schema": {"$ref": "https://schemas.example.com/order.json"}},
    )
    assert (refusal.status_code, refusal.json()["code"]) == (400, "event_type_invalid"), refusal.text
    schema.fill(REMOTE_SCHEMA)
    form.get_by_role("button", name="Create event type").click()
    expect(form_error(page)).to_have_text(refusal.json()["error"])

    schema.fill(SCHEMA)
    form.get_by_label("Description (optional)").fill(f"An invoice went out {MARKUP}")
    form.get_by_role("button", name="Create event type").click()
    expect(page.get_by_role("heading", name="invoice.sent")).to_be_visible()
    expect(page.get_by_role("heading", name="Version 1")).to_be_visible()
    expect(page.locator(".facts")).to_contain_text(MARKUP)
    expect(page.locator("[data-schema]")).to_contain_text('"required": [')
    assert page.title() != "pwned"
    console.check_accessibility("event type")

    edit = page.get_by_role("form", name="Edit the event type")
    edit.get_by_label("Schema (JSON Schema 2020-12)").fill(SECOND_SCHEMA)
    edit.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Version 2")).to_be_visible()
    expect(page.locator("[data-schema]")).to_contain_text('"amount"')

    page.get_by_role("button", name="Deprecate").click()
    expect(page.locator("h1 .badge-deprecated")).to_have_text("deprecated")
    page.get_by_role("button", name="Archive").click()  # the dialog is accepted by the context
    expect(page.locator("h1 .badge-archived")).to_have_text("archived")
    expect(page.locator(".facts")).to_contain_text("No: archived")
    archived = console.tenant.call("POST", "/events", {"type": "invoice.sent", "payload": {"orderId": "o"}})
    assert (archived.status_code, archived.json()["code"]) == (409, "event_type_archived")
    screenshot(page, "event-type")
    page.get_by_role("button", name="Un-archive").click()
    expect(page.locator("h1 .badge-archived")).to_have_count(0)
    page.get_by_role("button", name="Undo deprecation").click()
    expect(page.locator("h1 .badge-active")).to_have_text("active")

    page = console.open("/console/event-types", "Event types")
    row = page.locator('tr[data-event-type="invoice.sent"]')
    expect(row).to_contain_text("v2")
    expect(row).to_contain_text(MARKUP)
    console.check_accessibility("event types")
    screenshot(page, "event-types")


def test_subscriptions_receive_an_event_whose_fan_out_page_shows_each_delivery(console: Console) -> None:
    create_event_type(console, "order.paid")
    name = f"console-{uuid.uuid4().hex[:10]}"
    ok_url, failing_url = hook(console, name), hook(console, f"fail-503-{name}")
    secret = create_subscription(console, ok_url, "order.paid", f"The ERP {MARKUP}")
    page = console.page
    console.check_accessibility("subscription created")
    screenshot(page, "subscription-created")
    create_subscription(console, failing_url, "order.paid")
    # Shown once: after a reload, neither the secret nor its place is on the page.
    page.reload()
    expect(page.get_by_role("heading", name="Subscriptions")).to_be_visible()
    expect(page.locator("[data-secret]")).to_have_count(0)
    assert secret not in page.content()
    expect(page.locator("tr[data-subscription]").filter(has_text=ok_url)).to_contain_text(MARKUP)
    assert page.title() != "pwned"

    sent = console.tenant.call(
        "POST", "/events", {"type": "order.paid", "payload": {"orderId": "ord_7", "note": MARKUP}}
    )
    assert sent.status_code == 202, sent.text
    event_id = sent.json()["data"]["eventId"]
    assert sent.json()["data"]["subscriptions"] == 2

    page = console.open("/console/events", "Events")
    row = page.locator(f'tr[data-event="{event_id}"]')
    expect(row).to_contain_text("order.paid")
    expect(row).to_contain_text("2")
    console.check_accessibility("events")
    screenshot(page, "events")
    row.get_by_role("link").click()
    expect(page.get_by_role("heading", name="order.paid")).to_be_visible()
    expect(page.locator("[data-payload]")).to_contain_text('"orderId": "ord_7"')
    expect(page.locator("[data-payload]")).to_contain_text("<img src=x onerror=")
    delivered = page.locator("tr[data-subscription]").filter(has_text=ok_url)
    failing = page.locator("tr[data-subscription]").filter(has_text=failing_url)
    # The page follows the deliveries still moving: no reload needed.
    expect(delivered.locator("[data-status]")).to_have_text("completed", timeout=DELIVERED_MS)
    expect(delivered).to_contain_text("HTTP 200")
    expect(failing).to_contain_text("503", timeout=DELIVERED_MS)
    assert page.title() != "pwned"
    console.check_accessibility("event fan-out")
    screenshot(page, "event-fanout")

    delivered.get_by_role("link", name=re.compile(r"^Job ")).click()
    expect(page.get_by_role("heading", name=re.compile("^Webhook"))).to_be_visible()
    expect(page.locator("[data-status-detail]")).to_have_text("Delivered: the endpoint answered HTTP 200.")

    page.go_back()
    expect(page.get_by_role("heading", name="order.paid")).to_be_visible()
    page.locator("tr[data-subscription]").filter(has_text=ok_url).get_by_role("link", name=ok_url).click()
    expect(page.get_by_role("heading", name=re.compile("^Subscription"))).to_be_visible()
    expect(page.locator("[data-state-detail]")).to_contain_text("Enabled")
    expect(page.locator("tr[data-job]")).to_have_count(1)
    expect(page.locator("tr[data-job]")).to_contain_text("completed")

    page.get_by_role("button", name="Send a test event").click()
    expect(page.locator("[data-test-outcome] .message")).to_have_text(
        re.compile(r"^Delivered: the endpoint answered HTTP 200 in \d+ ms\.$")
    )
    console.check_accessibility("subscription")
    screenshot(page, "subscription")
    page.get_by_role("button", name="Send a test event").click()  # within 10 seconds: refused
    expect(page.locator("[data-test-outcome] .form-error")).to_contain_text("less than 10 seconds ago")

    page.get_by_role("button", name="Rotate secret").click()
    rotated = page.locator("[data-secret]")
    expect(rotated).to_have_text(re.compile(r"^whsec_\S+$"))
    assert rotated.inner_text() != secret
    expect(page.get_by_text("The previous secret keeps signing beside it until")).to_be_visible()

    page.get_by_role("button", name="Disable").click()
    expect(page.locator("h1 [data-state]")).to_have_text("disabled")
    expect(page.locator("[data-state-detail]")).to_contain_text(
        "its deliveries fail at once until it is enabled"
    )
    page = console.open("/console/subscriptions", "Subscriptions")
    expect(
        page.locator("tr[data-subscription]").filter(has_text=ok_url).locator("[data-state]")
    ).to_contain_text("disabled")
    page.locator("tr[data-subscription]").filter(has_text=ok_url).get_by_role("link").click()
    page.get_by_role("button", name="Enable").click()
    expect(page.locator("h1 [data-state]")).to_have_text("enabled")

    page = console.open("/console/subscriptions", "Subscriptions")
    page.locator("tr[data-subscription]").filter(has_text=failing_url).get_by_role("link").click()
    expect(page.locator("tr[data-job]")).to_have_count(1)
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="Subscriptions")).to_be_visible()
    expect(page.locator("tr[data-subscription]").filter(has_text=failing_url)).to_have_count(0)
    console.check_accessibility("subscriptions")
    screenshot(page, "subscriptions")


def test_a_viewer_sees_the_webhook_pages_without_their_controls(console: Console, browser: Browser) -> None:
    create_event_type(console, "refund.issued")
    create_subscription(console, hook(console, f"viewer-{uuid.uuid4().hex[:8]}"), "refund.issued")
    page = console.open("/console/members", "Members")
    viewer = f"viewer-{uuid.uuid4().hex[:8]}@example.com"
    invite(page, viewer, "viewer")
    theirs = sign_in(console.stack, browser, viewer)
    try:
        for path, heading in (
            ("/console/event-types", "Event types"),
            ("/console/subscriptions", "Subscriptions"),
        ):
            theirs.goto(f"{console.origin}{path}")
            expect(theirs.get_by_role("heading", name=heading, exact=True)).to_be_visible()
            expect(theirs.locator("tbody tr").first).to_be_visible()
            expect(theirs.get_by_role("form")).to_have_count(0)
            expect(theirs.locator("[data-refused]")).to_contain_text("Your role (viewer) cannot do this")
        theirs.locator("tbody tr").first.get_by_role("link").click()
        expect(theirs.get_by_role("heading", name=re.compile("^Subscription"))).to_be_visible()
        expect(theirs.locator("[data-state-detail]")).to_contain_text("Enabled")
        for name in ("Disable", "Delete", "Rotate secret", "Send a test event"):
            expect(theirs.get_by_role("button", name=name)).to_have_count(0)
        screenshot(theirs, "subscription-viewer")
        theirs.goto(f"{console.origin}/console/event-types/refund.issued")
        expect(theirs.get_by_role("heading", name="Version 1")).to_be_visible()
        for name in ("Save", "Deprecate", "Archive"):
            expect(theirs.get_by_role("button", name=name)).to_have_count(0)
    finally:
        theirs.context.close()


def test_the_webhook_pages_fit_a_phone(console: Console) -> None:
    create_event_type(console, "shipment.sent")
    create_subscription(
        console, hook(console, f"phone-{uuid.uuid4().hex}-a-long-receiver-path"), "shipment.sent"
    )
    sent = console.tenant.call("POST", "/events", {"type": "shipment.sent", "payload": {"orderId": "ord_9"}})
    assert sent.status_code == 202, sent.text
    page = console.page
    page.set_viewport_size(PHONE)
    try:
        for name, path, heading in (
            ("event-types", "/console/event-types", "Event types"),
            ("subscriptions", "/console/subscriptions", "Subscriptions"),
            ("events", "/console/events", "Events"),
            ("event", f"/console/events/{sent.json()['data']['eventId']}", "shipment.sent"),
        ):
            console.open(path, heading)
            fits_a_phone(console, name)
    finally:
        page.set_viewport_size(DESKTOP)
