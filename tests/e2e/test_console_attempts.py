"""Seeing why, end to end: each attempt's detail in the job document (a webhook's request and
response, an email's providers), the job's statusDetail sentence, and the console's job page that
shows them; with the defects they replay (a job held by its endpoint's breaker said nothing of it,
a cancelled job's timeline was out of order, Retry was offered where no retry can help).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from tests.e2e.browser import screenshot, sign_up
from tests.e2e.clients import finished_job, wait_for

pytestmark = pytest.mark.e2e

PAYLOAD = {"order": "SO-1", "total": 42}


@pytest.fixture
def outages(local_stack: RunningStack) -> Iterator[list[str]]:
    """Hook names a test stages outages of; lifted afterwards whatever happened."""
    staged: list[str] = []
    yield staged
    for name in staged:
        requests.delete(f"{local_stack.sandbox_url}/_sandbox/outages/hook:{name}", timeout=HTTP_TIMEOUT)


def stage(stack: RunningStack, outages: list[str], name: str, status: int = 503) -> None:
    outages.append(name)
    answer = requests.put(
        f"{stack.sandbox_url}/_sandbox/outages/hook:{name}", json={"status": status}, timeout=HTTP_TIMEOUT
    )
    assert answer.status_code == 200, answer.text


def lift(stack: RunningStack, name: str) -> None:
    requests.delete(f"{stack.sandbox_url}/_sandbox/outages/hook:{name}", timeout=HTTP_TIMEOUT)


def hook(stack: RunningStack, name: str) -> str:
    return f"{stack.sandbox_url}/hooks/{name}"


def failed_then_delivered(
    stack: RunningStack, outages: list[str], tenant: Tenant, body: dict[str, Any]
) -> str:
    """A webhook whose first attempt meets a 503 and whose retry is answered 200."""
    name = f"why-{uuid.uuid4().hex[:8]}"
    stage(stack, outages, name)
    job_id = tenant.send("webhook", {"url": hook(stack, name), "payload": PAYLOAD, **body})
    wait_for(lambda: len(tenant.job(job_id)["deliveryLogs"]) == 1, "the first attempt to fail")
    lift(stack, name)
    assert finished_job(tenant, job_id)["status"] == "completed"
    return job_id


def test_a_webhook_that_fails_then_succeeds_shows_both_attempts_with_their_request_and_response(
    local_stack: RunningStack, outages: list[str]
) -> None:
    tenant = new_tenant(local_stack, [])
    created = tenant.call("POST", "/account/webhook-secret", {})
    assert created.status_code == 201, created.text
    secret = created.json()["data"]["secret"]
    credential = f"Bearer tok-{uuid.uuid4().hex}"

    job_id = failed_then_delivered(
        local_stack, outages, tenant, {"headers": {"Authorization": credential, "X-Team": "blue"}}
    )
    document = tenant.job(job_id)

    first, second = document["deliveryLogs"]
    assert [(log["status"], log["response"]["status"]) for log in (first, second)] == [
        ("failed", 503),
        ("success", 200),
    ]
    assert [json.loads(log["response"]["bodyExcerpt"]) for log in (first, second)] == [
        {"received": False},
        {"received": True},
    ]
    assert all(isinstance(log["response"]["latencyMs"], int) for log in (first, second))
    assert second["response"]["headers"]["Content-Type"] == "application/json"
    sent = second["request"]
    assert (sent["method"], sent["url"], sent["bodyBytes"]) == (
        "POST",
        document["payload"]["url"],
        len(json.dumps(PAYLOAD, separators=(",", ":"))),
    )
    headers = sent["headers"]
    assert (headers["Authorization"], headers["X-Team"], headers["webhook-id"]) == (
        "[masked]",
        "blue",
        job_id,
    )
    assert headers["webhook-signature"] == headers["X-Webhook-Signature"] == "[masked]"
    assert document["statusDetail"] == "Delivered: the endpoint answered HTTP 200."
    # No secret in the document: neither the credential header's value nor the signing secret.
    text = json.dumps(document)
    assert [found for found in (credential, secret, secret.removeprefix("whsec_")) if found in text] == []


def test_an_email_through_the_sandbox_shows_the_provider_its_latency_and_message_id(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, ["SENDGRID"])

    job = finished_job(
        tenant, tenant.send("email", {"to": "ada@example.com", "subject": "Hi", "body": "<p>x</p>"})
    )

    [log] = job["deliveryLogs"]
    [tried] = log["providers"]
    assert (tried["provider"], tried["outcome"]) == ("SENDGRID", "delivered")
    assert isinstance(tried["latencyMs"], int)
    assert tried["providerMessageId"]
    assert job["statusDetail"] == "Delivered via SendGrid."
    assert "request" not in log


def test_an_ordering_key_holds_jobs_of_its_channel_only(local_stack: RunningStack) -> None:
    """docs/api.md, orderingKey: the email and webhook queues are apart, so a webhook does not wait for
    an email with the same key (here, an email whose provider holds its answer for 30 s)."""
    tenant = new_tenant(local_stack, ["SENDGRID"])
    key = f"rk-{uuid.uuid4().hex[:8]}"
    email = tenant.send(
        "email",
        {"to": "timeout-sendgrid@example.com", "subject": "Hi", "body": "<p>x</p>", "orderingKey": key},
    )
    wait_for(lambda: tenant.job(email)["status"] == "processing", "the email's attempt to start")

    webhook = finished_job(
        tenant,
        tenant.send(
            "webhook", {"url": hook(local_stack, "why-keyed"), "payload": PAYLOAD, "orderingKey": key}
        ),
    )

    assert webhook["status"] == "completed"
    assert tenant.job(email)["status"] == "processing"


def test_a_webhook_held_by_its_endpoints_breaker_says_why_and_until_when(
    local_stack: RunningStack, browser: Browser, outages: list[str]
) -> None:
    """The defect: it showed "pending, 0 of 3" and a timeline of "Accepted" alone. Also a webhook
    that failed, then succeeded shows both attempts' request and response on its page."""
    console = sign_up(local_stack, browser)
    tenant = console.tenant
    recovered = failed_then_delivered(local_stack, outages, tenant, {})
    name = f"why-down-{uuid.uuid4().hex[:8]}"
    stage(local_stack, outages, name)
    for n in range(2):  # 2 jobs x 3 attempts: the fifth failure in a row opens the breaker
        tenant.send("webhook", {"url": hook(local_stack, name), "payload": {"n": n}})
    wait_for(
        lambda: [e for e in tenant.call("GET", "/account/endpoints").json()["data"] if e["state"] == "open"],
        "the endpoint's breaker to open",
    )

    held = tenant.send("webhook", {"url": hook(local_stack, name), "payload": {"n": 9}})
    waiting = wait_for(
        lambda: (
            (detail := tenant.job(held)["statusDetail"]).startswith("Waiting: the endpoint's breaker")
            and detail
        ),
        "the held job to say why it waits",
    )

    host = local_stack.sandbox_url.partition("://")[2]
    assert waiting.startswith(f"Waiting: the endpoint's breaker for {host} is open since ")
    assert f"(every job to {local_stack.sandbox_url} waits with it, whatever its path)." in waiting
    page = console.page
    page.goto(f"{local_stack.base_url}/console/jobs/{held}")
    expect(page.locator("[data-status-detail]")).to_contain_text("Waiting: the endpoint's breaker for")
    expect(page.locator("dd", has_text="None yet; up to 3")).to_be_visible()
    screenshot(page, "why-held")

    page = console.open(f"/console/jobs/{recovered}", "Webhook completed")
    expect(page.locator("[data-status-detail]")).to_have_text("Delivered: the endpoint answered HTTP 200.")
    expect(page.locator("dd", has_text="Delivered on attempt 2, after 1 attempt that failed")).to_be_visible()
    expect(page.get_by_text("Attempt 1: failed (HTTP 503)")).to_be_visible()
    expect(page.get_by_text("Attempt 2: delivered (HTTP 200)")).to_be_visible()
    summaries = page.locator("summary", has_text="Request and response")
    expect(summaries).to_have_count(2)
    summaries.nth(0).click()
    excerpt = page.locator("details[open] pre.excerpt")
    expect(excerpt).to_have_text('{"received": false}')
    expect(page.locator("details[open] dd code", has_text=recovered)).to_be_visible()  # webhook-id
    screenshot(page, "why-attempts")
    console.check_accessibility("job attempts")
    console.context.close()


def test_a_cancelled_job_reads_in_order_and_a_suppressed_recipient_is_not_offered_a_retry(
    local_stack: RunningStack, browser: Browser
) -> None:
    console = sign_up(local_stack, browser)
    tenant = console.tenant
    send_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    scheduled = tenant.send(
        "email", {"to": "later@example.com", "subject": "Later", "body": "<p>x</p>", "sendAt": send_at}
    )
    cancelled = tenant.call("POST", f"/notifications/jobs/{scheduled}/cancel", {})
    assert cancelled.status_code == 200, cancelled.text

    page = console.open(f"/console/jobs/{scheduled}", "Email cancelled")

    expect(page.locator("[data-status-detail]")).to_have_text("Cancelled before it was sent.")
    titles = page.locator(".tl-title").all_inner_texts()
    assert [title.split(" for ")[0] for title in titles] == [
        "Accepted",
        "Scheduled",
        "Cancelled before it was sent",
    ]

    # SES refuses the message itself (400 BadRequestException): the same message fails again.
    refused = finished_job(
        tenant,
        tenant.send(
            "email",
            {"to": f"fail-400+{uuid.uuid4().hex[:8]}@example.com", "subject": "x", "body": "<p>x</p>"},
        ),
    )
    assert (refused["status"], refused["retryable"]) == ("failed", False)
    page = console.open(f"/console/jobs/{refused['id']}", "Email failed")
    expect(page.locator("[data-status-detail]")).to_have_text(refused["statusDetail"])
    assert refused["statusDetail"].startswith("Failed: permanent failure (SES: Message rejected: fail-400+")
    assert page.get_by_role("button", name="Retry").count() == 0
    screenshot(page, "why-refused")
    console.context.close()


def test_a_job_failed_on_a_suppressed_recipient_is_not_retryable_and_its_retry_says_why(
    local_stack: RunningStack,
) -> None:
    """The defect: Retry was offered on "recipient suppressed", which no retry can change."""
    tenant = new_tenant(local_stack, ["POSTMARK"])
    # Postmark answers 422 "Inactive recipient": Herald suppresses the address.
    to = f"fail-422-postmark+{uuid.uuid4().hex[:8]}@example.com"
    email = {"to": to, "subject": "Welcome", "body": "<p>Hi</p>"}
    assert finished_job(tenant, tenant.send("email", email))["status"] == "failed"

    refused = finished_job(tenant, tenant.send("email", email))
    retried = tenant.call("POST", f"/notifications/jobs/{refused['id']}/retry", {})

    assert (refused["status"], refused["errorMessage"], refused["retryable"]) == (
        "failed",
        "recipient suppressed",
        False,
    )
    assert refused["statusDetail"] == "Failed: permanent failure (recipient suppressed), not retried."
    assert (retried.status_code, retried.json()["code"]) == (404, "job_not_retryable")
    assert retried.json()["error"] == (
        "This job failed in a way a retry cannot change (recipient suppressed); it is not retried."
    )
