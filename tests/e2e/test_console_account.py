"""The account pages on a tenant's first day, in Chromium: each step replays a defect of issue 37
(paying broke email without a word, Billing offered a downgrade as an upgrade and no prices, the
signing card kept saying "No secret", the grace period fell back to none, Verify said nothing, an
optional secret read "missing", endpoints could not be disabled) and checks what the person sees."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant
from tests.e2e.browser import Console, screenshot, sign_up
from tests.e2e.clients import wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def formatted(console: Console, value: int) -> str:
    """A count as the console writes it, in the browser's locale."""
    text: str = console.page.evaluate(f"new Intl.NumberFormat().format({value})")
    return text


def a_new_account_sees_a_first_request_with_its_own_origin(console: Console) -> None:
    page = console.open("/console", "Overview")
    card = page.locator("[data-first-run]")
    expect(card.get_by_role("heading", name="Send your first email")).to_be_visible()
    command = card.locator("pre").inner_text()
    assert f"curl -X POST {console.origin}/api/v1/notifications/email" in command
    assert '-H "X-API-Key: $HERALD_API_KEY"' in command
    assert console.email in command
    expect(card.get_by_role("link", name="Providers")).to_have_attribute("href", "/console/providers")
    expect(card.get_by_role("link", name="the API documentation")).to_have_attribute("href", "/api/v1/docs")
    expect(page.get_by_text("Emails and webhooks this period")).to_be_visible()
    console.check_accessibility("first run")
    screenshot(page, "billing-first-run")


def billing_shows_every_plans_price_and_limits_and_warns_about_providers(console: Console) -> None:
    page = console.open("/console/billing", "Billing")
    indie = page.locator("[data-offer='indie']")
    # The stack's configured prices (in minor units), as the page writes them (cents and kobo: two
    # decimals), one per processor.
    plans = {entry["plan"]: entry for entry in console.tenant.call("GET", "/account/plans").json()["data"]}
    prices = plans["indie"]["prices"]
    assert [price["processor"] for price in prices] == ["polar", "paystack"]
    for price in prices:
        expect(indie.locator(".plan-price")).to_contain_text(f"{price['amount'] / 100:,.2f}")
    expect(indie.locator(".plan-price")).to_contain_text("$29.00")
    expect(indie).to_contain_text("50 requests a minute")
    expect(indie).to_contain_text(f"{formatted(console, 4000)} webhooks a month")
    expect(page.locator("[data-offer='startup']")).to_contain_text(
        f"{formatted(console, 15000)} webhooks a month"
    )
    note = indie.locator("[data-provider-note]")
    expect(note).to_contain_text("This plan sends email through your own provider (SendGrid, Resend")
    expect(note.get_by_role("link", name="Providers")).to_be_visible()
    expect(page.locator("[data-offer='free']")).to_contain_text("Your plan.")
    console.check_accessibility("billing plans")
    screenshot(page, "billing-plans")


def after_paying_the_overview_asks_for_a_provider_and_email_is_refused_meanwhile(console: Console) -> None:
    page = console.page
    page.locator("[data-offer='indie']").get_by_role("button", name="Upgrade to Indie").click()
    page.get_by_role("button", name="Pay").click()
    expect(page.get_by_text("Thank you: the payment went through")).to_be_visible()
    # Paid-until is the paid period's end, the same moment the quota period ends.
    period_end = page.locator("[data-period]").inner_text().split(" – ")[1]
    expect(page.locator("[data-paid-until]")).to_have_text(period_end)
    refused = console.tenant.call(
        "POST", "/notifications/email", {"to": "reader@example.com", "subject": "Hi", "body": "<p>Hi</p>"}
    )
    assert (refused.status_code, refused.json()["code"]) == (403, "provider_required")

    page = console.open("/console", "Overview")
    notice = page.locator("[data-notice='provider']")
    expect(notice.get_by_role("heading", name="Add a provider to send email")).to_be_visible()
    expect(notice).to_contain_text("emails are refused with provider_required; webhooks go out as usual")
    expect(notice.get_by_role("link", name="Add a provider")).to_have_attribute("href", "/console/providers")
    expect(
        page.locator("[data-first-run]").get_by_role("heading", name="Send your first webhook")
    ).to_be_visible()
    expect(page.get_by_text("Webhooks this period; emails are unmetered on your plan")).to_be_visible()
    expect(page.get_by_text(f"0 / {formatted(console, 4000)}")).to_be_visible()
    console.check_accessibility("paid overview")
    screenshot(page, "billing-paid-overview")


def the_first_run_card_goes_once_something_was_sent(console: Console) -> None:
    console.tenant.send("webhook", {"url": f"{console.stack.sandbox_url}/hooks/first", "payload": {"n": 1}})
    page = console.open("/console", "Overview")
    expect(page.get_by_role("heading", name="Activity")).to_be_visible()
    expect(page.locator("[data-first-run]")).to_have_count(0)
    page.locator(".day-table summary").click()
    expect(page.locator(".day-table table.table")).to_be_visible()


def a_paying_account_changes_plans_in_the_portal_never_by_a_downgrade_called_upgrade(
    console: Console,
) -> None:
    page = console.open("/console/billing", "Billing")
    expect(page.locator("[data-offer='indie']")).to_contain_text("Your plan.")
    expect(page.get_by_role("button", name=re.compile("^Upgrade to Indie"))).to_have_count(0)
    expect(page.get_by_role("button", name="Upgrade to Startup in the customer portal")).to_be_visible()
    expect(page.get_by_role("button", name="Downgrade to Free in the customer portal")).to_be_visible()
    expect(page.locator("[data-provider-note]")).to_have_count(0)  # its plan uses providers already
    console.check_accessibility("billing while paying")
    screenshot(page, "billing-paying")
    page.get_by_role("button", name="Manage the subscription").click()
    expect(page.get_by_role("heading", name="Polar customer portal (sandbox)")).to_be_visible()
    expect(page.get_by_text(console.tenant.tenant_id)).to_be_visible()


def the_signing_card_and_the_key_grace_read_what_is_set(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    page.get_by_role("button", name="Create signing secret").click()
    expect(page.locator("[data-secret]")).to_have_text(re.compile(r"^whsec_"))
    signing = page.locator("section[aria-labelledby='signing-title']")
    expect(signing.get_by_role("button", name="Rotate")).to_be_visible()
    expect(signing.get_by_text("No secret")).to_have_count(0)
    expect(signing.get_by_role("button", name="Create signing secret")).to_have_count(0)

    old = console.tenant
    row = page.locator("tr[data-key]").filter(has=page.get_by_role("rowheader", name="Default key"))
    row.locator("summary").click()
    grace = row.get_by_label("Grace for the current secret")
    expect(grace.locator("option:checked")).to_have_text("24 hours")
    row.get_by_role("button", name="Rotate now").click()
    new = page.locator("section[aria-label='The new secret of Default key'] [data-secret]").inner_text()
    # Said twice: in the note under the new secret, and in the key's row.
    expect(page.get_by_text(re.compile("The previous secret works until"))).to_have_count(2)
    assert old.call("GET", "/account").status_code == 200  # 24 hours of grace
    console.tenant = Tenant(old.api_root, old.tenant_id, new)
    page.reload()
    expect(page.locator("[data-grace]")).to_contain_text("The previous secret works until")
    console.check_accessibility("keys with grace")


def an_optional_webhook_secret_is_neutral_and_verify_says_what_it_found(console: Console) -> None:
    page = console.open("/console/providers", "Providers")
    for provider in ("SENDGRID", "POSTMARK"):
        page.get_by_label("Provider", exact=True).select_option(provider)
        page.get_by_label("API key", exact=True).fill(f"sandbox-{uuid.uuid4().hex}")
        page.get_by_role("button", name="Check and save").click()
        expect(page.locator(f"tr[data-provider='{provider}']")).to_be_visible()
    row = page.locator("tr[data-provider='POSTMARK']")
    expect(row.get_by_text("not set (optional)")).to_be_visible()
    expect(page.locator(".badge-missing")).to_have_count(0)

    domain = f"mail.{uuid.uuid4().hex[:8]}.example.com"
    page = console.open("/console/domains", "Domains")
    page.get_by_label("Domain").fill(domain)
    page.get_by_role("button", name="Add domain").click()
    card = page.locator(f"[data-domain='{domain}']")
    postmark = card.locator(".domain-provider").filter(has=page.get_by_role("heading", name="Postmark"))
    expect(postmark.locator(".message-error")).to_contain_text(
        "Postmark could not set up this domain and named no DNS records. It answered:"
    )
    expect(postmark.locator("table")).to_have_count(0)
    card.get_by_role("button", name="Verify").click()
    outcome = page.locator(f"[data-domain='{domain}'] [data-outcome]")
    # The sandbox's SendGrid verifies at once; Postmark, without an account token, cannot.
    expect(outcome).to_contain_text(f"{domain} is verified: you can send from it.")
    expect(outcome).to_contain_text("Postmark answered:")
    expect(outcome).not_to_contain_text("SendGrid")
    console.check_accessibility("domain verified")
    screenshot(page, "billing-domain-verify")


def an_endpoint_can_be_disabled_by_hand_and_its_webhooks_then_fail(console: Console) -> None:
    stack, tenant = console.stack, console.tenant
    target = f"hook:account-{uuid.uuid4().hex[:8]}"
    url = f"{stack.sandbox_url}/hooks/{target.removeprefix('hook:')}"
    outage = f"{stack.sandbox_url}/_sandbox/outages/{target}"
    requests.put(outage, json={"status": 503}, timeout=HTTP_TIMEOUT).raise_for_status()
    for n in range(5):
        tenant.send("webhook", {"url": url, "payload": {"n": n}})
    wait_for(lambda: tenant.call("GET", "/account/endpoints").json()["data"], "the endpoint's breaker")
    requests.delete(outage, timeout=HTTP_TIMEOUT)

    page = console.open("/console/endpoints", "Webhook endpoints")
    row = page.get_by_role("row").filter(has_text=stack.sandbox_url)
    # Checked before the toast fades in: axe reads a half-transparent toast's contrast as too low.
    console.check_accessibility("endpoint with disable")
    row.get_by_role("button", name=f"Disable {stack.sandbox_url}").click()
    expect(
        page.get_by_text(f"{stack.sandbox_url} is disabled: its webhooks fail until you enable it")
    ).to_be_visible()
    expect(row.get_by_text("disabled", exact=True)).to_be_visible()
    expect(row.get_by_role("button", name=f"Disable {stack.sandbox_url}")).to_have_count(0)
    job = tenant.send("webhook", {"url": url, "payload": {"n": "after"}})
    failed = wait_for(lambda: (found := tenant.job(job))["status"] == "failed" and found, "the job to fail")
    assert failed["errorMessage"] == (
        "the webhook endpoint is disabled, by the tenant or after a long outage (endpoint_disabled);"
        " the job was not sent"
    )
    row.get_by_role("button", name=f"Enable {stack.sandbox_url}").click()
    expect(row.get_by_text("closed", exact=True)).to_be_visible()


STEPS = (
    a_new_account_sees_a_first_request_with_its_own_origin,
    billing_shows_every_plans_price_and_limits_and_warns_about_providers,
    after_paying_the_overview_asks_for_a_provider_and_email_is_refused_meanwhile,
    the_first_run_card_goes_once_something_was_sent,
    a_paying_account_changes_plans_in_the_portal_never_by_a_downgrade_called_upgrade,
    the_signing_card_and_the_key_grace_read_what_is_set,
    an_optional_webhook_secret_is_neutral_and_verify_says_what_it_found,
    an_endpoint_can_be_disabled_by_hand_and_its_webhooks_then_fail,
)


# The steps build on each other (the upgrade before the portal and the providers), so they are one
# test, each step a function named for what it checks.
def test_a_first_day_on_the_account_pages_works(console: Console) -> None:
    for step in STEPS:
        step(console)
