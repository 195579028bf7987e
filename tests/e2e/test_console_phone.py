"""The console on a phone (375 × 740 CSS pixels), in a real browser against the local stack: a tenant
signs up at that size, has a little of everything (an email, a webhook, an upgrade, a provider,
a domain, a suppression, an endpoint that failed), and every page fits the screen's width, shows its
heading on the first screen (the navigation folds behind a Menu button), and passes axe-core. The Menu
button works with the keyboard alone; at a desktop width the navigation is the sidebar again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT
from herald_harness.vendors.resend import RESEND_SECRET, resend_event, resend_headers
from tests.e2e.browser import DESKTOP, PHONE, Console, screenshot, sign_up
from tests.e2e.clients import finished_job, wait_for

pytestmark = pytest.mark.e2e

# Where a page's main heading must start: on the first screen, below a one-line bar of navigation.
FIRST_SCREEN_TOP = 200
# The sidebar's width at a desktop width (style.css).
SIDEBAR_WIDTH = 232


@pytest.fixture(scope="module")
def phone(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser, PHONE)
    yield made
    made.context.close()


def layout(page: Page) -> dict[str, float]:
    """How wide the document is against the screen, and where the main heading starts."""
    measured: dict[str, float] = page.evaluate(
        """() => ({
            scrollWidth: document.documentElement.scrollWidth,
            innerWidth: window.innerWidth,
            headingTop: document.querySelector("main h1").getBoundingClientRect().top,
        })"""
    )
    return measured


def fits_a_phone(console: Console, name: str) -> None:
    page = console.page
    measured = layout(page)
    assert measured["scrollWidth"] <= measured["innerWidth"], (name, measured)
    assert measured["headingTop"] < FIRST_SCREEN_TOP, (name, measured)
    screenshot(page, f"phone-{name}")
    console.check_accessibility(f"phone {name}")


def a_little_of_everything(console: Console) -> dict[str, str]:
    """An email, a webhook, the Indie plan (through the sandbox checkout, on the phone), a
    provider, a domain, a bounced recipient and an endpoint that answered 503: every page has rows."""
    stack, tenant = console.stack, console.tenant
    email = tenant.send(
        "email", {"to": "reader@example.com", "subject": "Your December invoice", "body": "<p>Hi</p>"}
    )
    webhook = tenant.send(
        "webhook",
        {"url": f"{stack.sandbox_url}/hooks/phone-{uuid.uuid4().hex}", "payload": {"note": "x" * 300}},
    )
    finished_job(tenant, email)
    finished_job(tenant, webhook)
    page = console.open("/console/billing", "Billing")
    fits_a_phone(console, "billing")
    page.get_by_role("button", name="Upgrade to Indie").click()
    page.get_by_role("button", name="Pay").click()
    expect(page.locator("[data-plan]")).to_have_text("Indie")
    added = tenant.call(
        "PUT",
        "/account/providers/RESEND",
        {"apiKey": f"sandbox-{uuid.uuid4().hex}", "webhookSecret": RESEND_SECRET},
    )
    assert added.status_code == 201, added.text
    domain = f"mail.{uuid.uuid4().hex[:8]}.example.com"
    assert tenant.call("POST", "/account/domains", {"domain": domain}).status_code == 201
    bounced(console)
    failing_endpoint(console)
    return {"email": email, "webhook": webhook, "domain": domain}


def bounced(console: Console) -> None:
    tenant = console.tenant
    to = f"bounced-{uuid.uuid4().hex[:8]}@example.com"
    job_id = tenant.send("email", {"to": to, "subject": "Welcome", "body": "<p>Hi</p>"})
    finished_job(tenant, job_id)
    body = resend_event("resend-bounced", tenant_id=tenant.tenant_id, job_id=job_id, to=to)
    reported = requests.post(
        f"{console.stack.api_root}/webhooks/resend/{tenant.tenant_id}",
        data=body,
        headers=resend_headers(body, int(time.time()), f"msg_{uuid.uuid4().hex}"),
        timeout=HTTP_TIMEOUT,
    )
    assert reported.status_code == 200, reported.text
    wait_for(lambda: tenant.call("GET", "/account/suppressions").json()["data"], "the suppression")


def failing_endpoint(console: Console) -> None:
    stack, tenant = console.stack, console.tenant
    target = f"hook:phone-outage-{uuid.uuid4().hex[:8]}"
    outage = f"{stack.sandbox_url}/_sandbox/outages/{target}"
    requests.put(outage, json={"status": 503}, timeout=HTTP_TIMEOUT).raise_for_status()
    tenant.send(
        "webhook", {"url": f"{stack.sandbox_url}/hooks/{target.removeprefix('hook:')}", "payload": {}}
    )
    wait_for(lambda: tenant.call("GET", "/account/endpoints").json()["data"], "the endpoint's failure")
    requests.delete(outage, timeout=HTTP_TIMEOUT)


def test_every_page_fits_a_phone_with_its_heading_on_the_first_screen(phone: Console) -> None:
    made = a_little_of_everything(phone)
    pages = [
        ("overview", "/console", "Overview", "Figures by day"),
        ("jobs", "/console/jobs", "Jobs", made["email"][:8]),
        ("job", f"/console/jobs/{made['webhook']}", "Webhook completed", "Payload"),
        ("providers", "/console/providers", "Providers", "Resend"),
        ("domains", "/console/domains", "Domains", made["domain"]),
        ("keys", "/console/keys", "Keys & signing", "Default key"),
        ("suppressions", "/console/suppressions", "Suppressions", "bounced-"),
        ("endpoints", "/console/endpoints", "Webhook endpoints", phone.stack.sandbox_url),
    ]
    for name, path, heading, content in pages:
        page = phone.open(path, heading)
        expect(page.locator("main").get_by_text(content).first).to_be_visible()
        fits_a_phone(phone, name)


def test_the_menu_button_opens_and_closes_by_keyboard_and_its_links_work(phone: Console) -> None:
    page = phone.open("/console", "Overview")
    menu = page.get_by_role("button", name="Menu")
    links = page.get_by_role("navigation", name="Console").get_by_role("link")
    expect(links.first).to_be_hidden()
    # The skip link stays first; the Menu button comes right after it, before the page.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(menu).to_be_focused()
    page.keyboard.press("Enter")
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(page.locator(f"#{menu.get_attribute('aria-controls')}")).to_be_visible()
    screenshot(page, "phone-menu")
    phone.check_accessibility("phone menu")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Overview")).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(menu).to_be_focused()
    expect(links.first).to_be_hidden()
    page.keyboard.press("Space")
    for _ in range(3):
        page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Providers")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Providers", exact=True)).to_be_visible()
    # A new page starts with the menu folded again.
    expect(page.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "false")
    assert layout(page)["headingTop"] < FIRST_SCREEN_TOP


def test_at_a_desktop_width_the_navigation_is_the_sidebar(phone: Console) -> None:
    page = phone.open("/console/jobs", "Jobs")
    page.set_viewport_size(DESKTOP)
    try:
        expect(page.get_by_role("button", name="Menu")).to_be_hidden()
        nav = page.get_by_role("navigation", name="Console")
        expect(nav.get_by_role("link", name="Billing")).to_be_visible()
        box = nav.bounding_box()
        assert box is not None
        assert (box["x"], box["width"]) == (0, SIDEBAR_WIDTH)
        assert layout(page)["scrollWidth"] <= DESKTOP["width"]
    finally:
        page.set_viewport_size(PHONE)


def test_signing_out_from_the_menu_and_the_sign_in_pages_fit_a_phone(phone: Console) -> None:
    page = phone.open("/console", "Overview")
    page.get_by_role("button", name="Menu").click()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in to Herald")).to_be_visible()
    fits_a_phone(phone, "signin")
    phone.open("/console/signup", "Create your Herald account")
    fits_a_phone(phone, "signup")
