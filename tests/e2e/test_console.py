"""The console in a real browser (Playwright driving the OS's Chromium) against the local stack, as a
person uses it: sign up with the code from the sandbox mailbox, follow an email to its final state,
retry a failure, upgrade through the sandbox checkout, manage providers and a domain, rotate the key,
sign out; and the attacks on it (another tenant's job, markup in subjects and payloads, a
cross-origin POST with the session cookie, reused and guessed codes, a session after sign-out).

One browser and one signed-up tenant: the steps run in order, each continuing where the previous
one left the account. axe-core checks every page they visit. Apart from the walk, over HTTP only:
requests naming another Host and X-Forwarded-Proto, which must reach no link Herald writes.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from herald_harness.vendors.resend import RESEND_SECRET, resend_event, resend_headers
from tests.e2e.browser import Console, codes_sent, latest_code, screenshot, sign_up
from tests.e2e.clients import finished_job, sandbox, wait_for

pytestmark = pytest.mark.e2e

XSS_SUBJECT = 'Invoice <script>window.__pwned = 1</script> "><img src=x onerror="window.__pwned = 1">'
XSS_PAYLOAD = {
    "note": "<script>window.__pwned = 2</script>",
    "html": '"><img src=x onerror="window.__pwned = 2">',
}
# A client naming its own origin as the one the request was sent to.
FORGED_HOST = {"Host": "evil.example", "X-Forwarded-Proto": "http"}
FORGED = {**FORGED_HOST, "Origin": "http://evil.example"}


@pytest.fixture(scope="session")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def sign_up_starts_an_httponly_secure_strict_session_scripts_cannot_read(console: Console) -> None:
    cookie = next(cookie for cookie in console.context.cookies() if cookie["name"] == "herald_session")
    # Chromium treats http://127.0.0.1 as a secure context: it keeps the Secure cookie locally too.
    assert (cookie["httpOnly"], cookie["secure"], cookie["sameSite"]) == (True, True, "Strict")
    assert "herald_session" not in console.page.evaluate("document.cookie")
    headers = requests.get(f"{console.origin}/console", timeout=HTTP_TIMEOUT).headers
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy


def the_overview_shows_plan_usage_rate_and_the_activity_chart(console: Console) -> None:
    page = console.open("/console", "Overview")
    expect(page.get_by_text("Free", exact=True)).to_be_visible()
    expect(page.get_by_text("0 / 100")).to_be_visible()
    page.get_by_role("button", name="7 days").click()
    expect(page.get_by_role("button", name="7 days")).to_have_attribute("aria-pressed", "true")
    console.check_accessibility("overview")


def an_email_sent_through_the_api_appears_in_jobs_with_its_timeline_rendered_inert(
    console: Console,
) -> None:
    job_id = console.tenant.send(
        "email", {"to": "reader@example.com", "subject": XSS_SUBJECT, "body": "<p>Hi</p>"}
    )
    assert finished_job(console.tenant, job_id)["status"] == "completed"
    page = console.open("/console/jobs", "Jobs")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=re.compile(job_id)))
    expect(row.get_by_text("completed")).to_be_visible()
    screenshot(page, "jobs")
    console.check_accessibility("jobs")
    row.get_by_role("link").click()
    expect(page.get_by_text("Attempt 1: delivered via SES")).to_be_visible()
    # The subject is shown as the text it is: no element, no script ran.
    expect(page.get_by_text(XSS_SUBJECT, exact=True)).to_be_visible()
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("window.__pwned") is None
    screenshot(page, "job-timeline")
    console.check_accessibility("job")
    # The day's counters saw it (once TallyFunction read its status change from the table's
    # stream, within its batching window): the overview's chart and the listing's total.
    wait_for(
        lambda: (
            console.tenant.call("GET", "/account/activity?days=7").json()["data"]["totals"]["completed"] == 1
        ),
        "the day counts to show the completed job",
    )
    page = console.open("/console", "Overview")
    expect(page.locator(".total").filter(has_text="Completed").locator("dd")).to_have_text("1")
    screenshot(page, "overview")


def a_failed_job_shows_every_attempt_and_retry_queues_it_again_by_keyboard(console: Console) -> None:
    job_id = console.tenant.send(
        "email", {"to": "fail-500@example.com", "subject": "Receipt", "body": "<p>x</p>"}
    )
    failed = finished_job(console.tenant, job_id)
    assert failed["status"] == "failed"
    page = console.open(f"/console/jobs/{job_id}", "Email failed")
    for attempt in (1, 2, 3):
        expect(page.get_by_text(f"Attempt {attempt}: failed")).to_be_visible()
    expect(page.get_by_text("HTTP 500").first).to_be_visible()
    screenshot(page, "job-failed")
    tab_to(page, "Retry")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Queued again for delivery")).to_be_visible()
    wait_for(lambda: console.tenant.job(job_id)["attempts"] == 6, "the retry's three more attempts")


def a_scheduled_job_shows_its_time_and_key_and_cancel_ends_it(console: Console) -> None:
    send_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    body = {"to": "later@example.com", "subject": "Tomorrow", "body": "<p>x</p>"}
    job_id = console.tenant.send("email", {**body, "sendAt": send_at, "orderingKey": "order <b>7</b>"})
    page = console.open(f"/console/jobs/{job_id}", "Email scheduled")
    expect(page.locator("dt", has_text="Send at")).to_be_visible()
    expect(page.locator("dd code", has_text="order <b>7</b>")).to_be_visible()
    assert page.locator("dd b").count() == 0
    screenshot(page, "job-scheduled")
    page.get_by_role("button", name="Cancel", exact=True).click()
    expect(page.get_by_text("Cancelled: it will not be sent")).to_be_visible()
    expect(page.get_by_role("heading", name="Email cancelled", exact=True)).to_be_visible()
    assert page.get_by_role("button", name="Cancel", exact=True).count() == 0
    assert console.tenant.job(job_id)["status"] == "cancelled"
    screenshot(page, "job-cancelled")


def a_webhook_payload_with_markup_is_rendered_as_text(console: Console) -> None:
    url = f"{console.stack.sandbox_url}/hooks/console-xss"
    job_id = console.tenant.send("webhook", {"url": url, "payload": XSS_PAYLOAD})
    finished_job(console.tenant, job_id)
    page = console.open(f"/console/jobs/{job_id}", "Webhook completed")
    expect(page.locator("pre.payload")).to_contain_text("<script>window.__pwned = 2</script>")
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("window.__pwned") is None


def an_endpoint_outage_shows_on_endpoints_with_enable_and_failed_jobs_are_recovered(console: Console) -> None:
    stack, tenant = console.stack, console.tenant
    target = f"hook:console-outage-{uuid.uuid4().hex[:8]}"
    url = f"{stack.sandbox_url}/hooks/{target.removeprefix('hook:')}"
    outage = f"{stack.sandbox_url}/_sandbox/outages/{target}"
    # A receiver refusing (404) fails its job at once; answering 503 five times opens its breaker.
    requests.put(outage, json={"status": 404}, timeout=HTTP_TIMEOUT).raise_for_status()
    refused = finished_job(tenant, tenant.send("webhook", {"url": url, "payload": {"n": 0}}))
    assert refused["status"] == "failed"
    requests.put(outage, json={"status": 503}, timeout=HTTP_TIMEOUT).raise_for_status()
    for n in range(5):
        tenant.send("webhook", {"url": url, "payload": {"n": n + 1}})
    wait_for(
        lambda: [e for e in tenant.call("GET", "/account/endpoints").json()["data"] if e["state"] == "open"],
        "the endpoint's breaker to open",
    )

    page = console.open("/console/endpoints", "Webhook endpoints")
    row = page.get_by_role("row").filter(has_text=stack.sandbox_url)
    expect(row.get_by_text("open", exact=True)).to_be_visible()
    expect(row.get_by_text("the endpoint answered HTTP 503")).to_be_visible()
    screenshot(page, "endpoints")
    console.check_accessibility("endpoints")
    requests.delete(outage, timeout=HTTP_TIMEOUT)  # the receiver is back; the tenant need not wait
    row.get_by_role("button", name=f"Enable {stack.sandbox_url}").click()
    expect(page.get_by_text(f"{stack.sandbox_url} is enabled again")).to_be_visible()
    expect(row.get_by_text("closed", exact=True)).to_be_visible()

    page = console.open("/console/jobs?status=failed&type=webhook", "Jobs")
    screenshot(page, "jobs-recover")
    console.check_accessibility("recover")
    page.get_by_role("button", name="Re-queue failed jobs").click()
    expect(page.get_by_text(re.compile(r"^[1-9]\d* failed jobs? re-queued$"))).to_be_visible()
    recovered = wait_for(
        lambda: (job := tenant.job(refused["id"]))["status"] == "completed" and job, "the recovery"
    )
    assert recovered["attempts"] == 2


def another_tenants_job_id_in_the_url_is_not_found(console: Console) -> None:
    other = Tenant(console.stack.api_root, *console.stack.create_tenant(plan="startup", name="Other"))
    theirs = other.send(
        "webhook", {"url": f"{console.stack.sandbox_url}/hooks/other", "payload": {"secret": 1}}
    )
    page = console.open(f"/console/jobs/{theirs}", "Job not found")
    assert page.get_by_text('"secret"').count() == 0


def upgrading_through_the_sandbox_checkout_moves_the_plan_to_indie(console: Console) -> None:
    page = console.open("/console/billing", "Billing")
    console.check_accessibility("billing")
    page.get_by_role("button", name="Upgrade to Indie").click()
    expect(page.get_by_role("heading", name="Polar checkout (sandbox)")).to_be_visible()
    page.get_by_role("button", name="Pay").click()
    expect(page.get_by_text("Thank you: the payment went through")).to_be_visible()
    expect(page.locator("[data-plan]")).to_have_text("Indie")
    screenshot(page, "billing")


def providers_are_added_live_checked_and_reordered(console: Console) -> None:
    page = console.open("/console/providers", "Providers")
    # The form offers what the API lists, each provider with the fields it asks for.
    offered = requests.get(f"{console.stack.api_root}/providers", timeout=HTTP_TIMEOUT).json()["data"]
    choices = page.get_by_label("Provider", exact=True).locator("option")
    expect(choices).to_have_text([vendor["label"] for vendor in offered])
    for vendor in offered:
        page.get_by_label("Provider", exact=True).select_option(vendor["provider"])
        expect(page.get_by_label("Account token")).to_have_count(1 if vendor["accountToken"] else 0)
        expect(page.get_by_label("Region")).to_have_count(1 if vendor["regions"] else 0)
    for provider, secret in (("SENDGRID", None), ("RESEND", RESEND_SECRET)):
        page.get_by_label("Provider", exact=True).select_option(provider)
        page.get_by_label("API key", exact=True).fill(f"sandbox-{uuid.uuid4().hex}")
        if secret:
            page.get_by_label("Webhook secret").fill(secret)
        page.get_by_role("button", name="Check and save").click()
        expect(page.locator(f"tr[data-provider='{provider}']")).to_be_visible()
    expect(page.locator("tr[data-provider='RESEND']").get_by_text("set", exact=True)).to_be_visible()
    page.get_by_label("Provider", exact=True).select_option("POSTMARK")
    page.get_by_label("API key", exact=True).fill("not-a-sandbox-token")
    page.get_by_role("button", name="Check and save").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Postmark did not accept the key: the server token was refused"
    )
    tab_to(page, "Move up: Resend")
    page.keyboard.press("Enter")
    expect(page.locator("tbody tr").first).to_have_attribute("data-provider", "RESEND")
    order = console.tenant.call("GET", "/account/providers").json()["data"]
    assert [entry["provider"] for entry in order] == ["RESEND", "SENDGRID"]
    expect(page.get_by_text(f"/webhooks/resend/{console.tenant.tenant_id}")).to_be_visible()
    # Mailgun asks where the account lives; an EU key is stored as eu:<key> and checked there.
    page.get_by_label("Provider", exact=True).select_option("MAILGUN")
    page.get_by_label("Region").select_option("eu")
    key = f"sandbox-mg-{uuid.uuid4().hex}"
    page.get_by_label("API key", exact=True).fill(key)
    page.get_by_role("button", name="Check and save").click()
    expect(page.locator("tr[data-provider='MAILGUN']")).to_contain_text(f"••••{key[-4:]}")
    expect(page.get_by_text(f"/webhooks/mailgun/{console.tenant.tenant_id}")).to_be_visible()
    screenshot(page, "providers")
    console.check_accessibility("providers")


def a_domain_shows_the_dns_records_each_provider_wants(console: Console) -> None:
    domain = f"mail.{uuid.uuid4().hex[:8]}.example.com"
    page = console.open("/console/domains", "Domains")
    page.get_by_label("Domain").fill(domain)
    page.get_by_role("button", name="Add domain").click()
    card = page.locator(f"[data-domain='{domain}']")
    expect(card.get_by_role("heading", name="SendGrid")).to_be_visible()
    expect(card.get_by_role("heading", name="Resend")).to_be_visible()
    assert card.get_by_role("button", name=re.compile("^Copy")).count() >= 4
    card.get_by_role("button", name="Verify").click()
    expect(page.locator(f"[data-domain='{domain}'] .badge-verified").first).to_be_visible()
    screenshot(page, "domains")
    console.check_accessibility("domains")


def rotating_the_api_key_shows_the_new_one_once_and_refuses_the_old(console: Console) -> None:
    old = console.tenant.api_key
    page = console.open("/console/keys", "Keys & signing")
    console.check_accessibility("keys")
    # 24 hours of grace is the default; a leaked key is rotated without any (after a confirmation).
    row = page.locator("tr[data-key]").filter(has=page.get_by_role("rowheader", name="Default key"))
    row.locator("summary").click()
    row.get_by_label("Grace for the current secret").select_option("0")
    row.get_by_role("button", name="Rotate now").click()
    expect(page.get_by_text("The previous secret no longer works.", exact=False)).to_be_visible()
    new = page.locator("[data-secret]").inner_text()
    assert re.fullmatch(r"hk_[0-9a-f]{64}", new)
    assert new != old
    assert console.tenant.call("GET", "/account").status_code == 401
    console.tenant = Tenant(console.tenant.api_root, console.tenant.tenant_id, new)
    assert console.tenant.call("GET", "/account").status_code == 200
    # The console's session is the person's, not the key's: it goes on.
    console.open("/console/suppressions", "Suppressions")
    console.check_accessibility("suppressions")


def a_cross_origin_post_with_the_session_cookie_changes_nothing(console: Console) -> None:
    # Another origin on the same host is the same site, so the Strict cookie goes along; the
    # Origin check refuses it. A no-cors "simple" request is one a real page could send.
    page = console.context.new_page()
    page.goto(f"{console.stack.sandbox_url}/_sandbox/checkouts")  # a page of another origin, no CSP
    page.evaluate(
        """url => fetch(url, {method: "POST", mode: "no-cors", credentials: "include",
                             headers: {"Content-Type": "text/plain"}, body: '{"graceSeconds": 0}'})
                 .then(() => "sent")""",
        f"{console.origin}/api/v1/account/api-key/rotate",
    )
    page.close()
    assert console.tenant.call("GET", "/account").status_code == 200
    forged = console.context.request.post(
        f"{console.origin}/api/v1/account/webhook-secret", headers={"Origin": "https://evil.example"}
    )
    assert (forged.status, forged.json()["code"]) == (403, "cross_origin_request")
    # The Host and X-Forwarded-Proto a client writes never make its origin the stack's.
    forged_host = requests.post(
        f"{console.origin}/api/v1/account/webhook-secret",
        headers=FORGED,
        cookies={"herald_session": console.session_token()},
        timeout=HTTP_TIMEOUT,
    )
    assert (forged_host.status_code, forged_host.json()["code"]) == (403, "cross_origin_request")


def a_session_after_sign_out_is_refused(console: Console) -> None:
    token = console.session_token()
    console.open("/console", "Overview").get_by_role("button", name="Sign out").click()
    expect(console.page.get_by_role("heading", name="Sign in to Herald")).to_be_visible()
    console.check_accessibility("sign in")
    answer = requests.get(
        f"{console.stack.api_root}/account", cookies={"herald_session": token}, timeout=HTTP_TIMEOUT
    )
    assert (answer.status_code, answer.json()["code"]) == (401, "invalid_session")


def signing_in_by_keyboard_and_codes_that_are_reused_or_guessed_are_refused(console: Console) -> None:
    page = console.page
    verify = f"{console.origin}/api/v1/signin/verify"
    same_origin = {"Origin": console.origin}
    sent = codes_sent(console.stack, console.email)
    page.goto(f"{console.origin}/console/signin")
    # A fresh page: the first Tab reaches "Skip to content", the next the address field.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Work email")).to_be_focused()
    page.keyboard.type(console.email)
    page.keyboard.press("Enter")
    code = latest_code(console.stack, console.email, after=sent)
    expect(page.get_by_label("Six-digit code")).to_be_focused()
    page.keyboard.type(code)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    reused = console.context.request.post(
        verify, headers=same_origin, data={"email": console.email, "code": code}
    )
    assert (reused.status, reused.json()["code"]) == (401, "invalid_code")
    # A fresh code, guessed five times: dead, so even the right code no longer works.
    sent = codes_sent(console.stack, console.email)
    console.context.request.post(
        f"{console.origin}/api/v1/signin", headers=same_origin, data={"email": console.email}
    )
    right = latest_code(console.stack, console.email, after=sent)
    wrong = [f"{(int(right) + offset) % 1_000_000:06d}" for offset in range(1, 6)]
    answers = [
        console.context.request.post(
            verify, headers=same_origin, data={"email": console.email, "code": guess}
        )
        for guess in wrong
    ]
    assert [answer.status for answer in answers] == [401] * 5
    assert answers[-2].json()["error"] == "The code is not valid (1 try left)."
    assert answers[-1].json()["error"] == "The code is not valid and no longer works; ask for a new code."
    dead = console.context.request.post(
        verify, headers=same_origin, data={"email": console.email, "code": right}
    )
    assert (dead.status, dead.json()["code"]) == (401, "invalid_code")


def a_bounce_the_provider_reports_shows_in_the_timeline_and_the_suppression_can_be_removed(
    console: Console,
) -> None:
    to = f"bounced-{uuid.uuid4().hex[:8]}@example.com"
    job_id = console.tenant.send("email", {"to": to, "subject": "Welcome", "body": "<p>Hi</p>"})
    delivered = finished_job(console.tenant, job_id)
    assert delivered["deliveryLogs"][-1]["usedProvider"] == "RESEND", (
        delivered["errorMessage"],
        delivered["deliveryLogs"],
    )
    body = resend_event("resend-bounced", tenant_id=console.tenant.tenant_id, job_id=job_id, to=to)
    headers = resend_headers(body, int(time.time()), f"msg_{uuid.uuid4().hex}")
    reported = requests.post(
        f"{console.stack.api_root}/webhooks/resend/{console.tenant.tenant_id}",
        data=body,
        headers=headers,
        timeout=HTTP_TIMEOUT,
    )
    assert reported.status_code == 200, reported.text
    page = console.open(f"/console/jobs/{job_id}", "Email completed")
    expect(page.get_by_text("Resend reported: bounced")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^Recipient suppressed"))).to_be_visible()
    page = console.open("/console/suppressions", "Suppressions")
    page.get_by_role("button", name=f"Remove {to} from the suppression list").click()
    expect(page.get_by_text(f"{to} can receive mail again")).to_be_visible()
    assert console.tenant.call("GET", "/account/suppressions").json()["data"] == []


def every_page_visited_had_no_serious_or_critical_accessibility_violation(console: Console) -> None:
    assert set(console.visited) >= {
        "overview",
        "jobs",
        "job",
        "providers",
        "domains",
        "keys",
        "billing",
        "sign in",
        "endpoints",
        "recover",
    }
    assert {page: problems for page, problems in console.visited.items() if problems} == {}


def tab_to(page: Page, name: str, limit: int = 80) -> None:
    """Moves the keyboard focus with Tab to the control named ``name`` (its label or text)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement; return e && (e.getAttribute('aria-label') || e.textContent.trim()); }"
        )
        if focused == name:
            return
        time.sleep(0.01)
    pytest.fail(f"{name} cannot be reached with Tab")


# xdist may hand a module's tests to either worker (each with a stack of its own), and the walk's
# steps build on each other (the upgrade before the providers, the rotation before the sign-out):
# so the walk is one test, each step a function named for what it checks.
WALK = (
    sign_up_starts_an_httponly_secure_strict_session_scripts_cannot_read,
    the_overview_shows_plan_usage_rate_and_the_activity_chart,
    an_email_sent_through_the_api_appears_in_jobs_with_its_timeline_rendered_inert,
    a_failed_job_shows_every_attempt_and_retry_queues_it_again_by_keyboard,
    a_scheduled_job_shows_its_time_and_key_and_cancel_ends_it,
    a_webhook_payload_with_markup_is_rendered_as_text,
    another_tenants_job_id_in_the_url_is_not_found,
    upgrading_through_the_sandbox_checkout_moves_the_plan_to_indie,
    # After the upgrade: the free plan's 5 requests a minute would not take the outage's webhooks.
    an_endpoint_outage_shows_on_endpoints_with_enable_and_failed_jobs_are_recovered,
    providers_are_added_live_checked_and_reordered,
    a_domain_shows_the_dns_records_each_provider_wants,
    rotating_the_api_key_shows_the_new_one_once_and_refuses_the_old,
    a_cross_origin_post_with_the_session_cookie_changes_nothing,
    a_session_after_sign_out_is_refused,
    signing_in_by_keyboard_and_codes_that_are_reused_or_guessed_are_refused,
    a_bounce_the_provider_reports_shows_in_the_timeline_and_the_suppression_can_be_removed,
    every_page_visited_had_no_serious_or_critical_accessibility_violation,
)


def test_a_person_walks_the_console_and_every_attack_on_it_fails(console: Console) -> None:
    for step in WALK:
        step(console)


def test_a_forged_host_writes_no_link_and_passes_no_origin_check(local_stack: RunningStack) -> None:
    """The probe's request replayed: a sign-in for an address without an account, with Host,
    X-Forwarded-Proto and Origin naming another origin, is refused and mails nothing; a client that
    names the stack's origin passes the check, and the link mailed is still the stack's. Checkout
    return pages and the providers' webhook URLs are the stack's too."""
    victim = f"victim-{uuid.uuid4().hex[:8]}@example.com"
    sign_in = f"{local_stack.api_root}/signin"
    refused = requests.post(sign_in, json={"email": victim}, headers=FORGED, timeout=HTTP_TIMEOUT)
    assert (refused.status_code, refused.json()["code"]) == (403, "cross_origin_request")
    headers = {**FORGED_HOST, "Origin": local_stack.base_url}
    asked = requests.post(sign_in, json={"email": victim}, headers=headers, timeout=HTTP_TIMEOUT)
    assert asked.status_code == 202, asked.text
    (mail,) = wait_for(lambda: sandbox(local_stack, "messages", to=victim, provider="ses"), "the mail")
    assert f"sign up at {local_stack.base_url}/console" in mail["text"]
    assert "evil.example" not in json.dumps(mail)

    tenant = new_tenant(local_stack, providers=("SENDGRID",))
    with_key = {**FORGED_HOST, "X-API-Key": tenant.api_key}
    (provider,) = requests.get(
        f"{local_stack.api_root}/account/providers", headers=with_key, timeout=HTTP_TIMEOUT
    ).json()["data"]
    assert provider["webhookUrl"].startswith(f"{local_stack.api_root}/webhooks/")
    started = requests.post(
        f"{local_stack.api_root}/account/checkout",
        json={"plan": "indie"},
        headers=with_key,
        timeout=HTTP_TIMEOUT,
    )
    assert started.status_code == 201, started.text
    back = requests.post(
        f"{started.json()['data']['url']}/cancel", allow_redirects=False, timeout=HTTP_TIMEOUT
    )
    assert back.headers["Location"] == f"{local_stack.base_url}/console/billing?checkout=cancelled"
