"""Finding any message in the console's jobs list (a real browser against the local stack): the
search by recipient over the last week, the Recipient / URL column, the exports, and the list's
defects replayed (a count over an empty table, a bad filter replacing the page, times without a
zone, "2 / 4" attempts)."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Browser, Page, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT
from tests.e2e.browser import PHONE, Console, screenshot, sign_up
from tests.e2e.clients import finished_job, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    # A free tenant may send 5 a minute; these tests send more.
    local_stack.cli("tenant", "set-limit", made.tenant.tenant_id, "--rate", "100")
    yield made
    made.context.close()


def _downloaded(page: Page, button: str) -> str:
    with page.expect_download() as download:
        page.get_by_role("button", name=button).click()
    return Path(download.value.path()).read_text()


def test_an_email_is_found_by_its_recipient_over_the_last_week_and_exported(console: Console) -> None:
    tenant, stack = console.tenant, console.stack
    ana = f"ana-{uuid.uuid4().hex[:6]}@example.com"
    found = [
        tenant.send("email", {"to": ana, "subject": f"=Order {n}", "body": "<p>Hi</p>"}) for n in range(2)
    ]
    other = tenant.send("email", {"to": "bob@example.com", "subject": "Other", "body": "<p>Hi</p>"})
    hook = tenant.send("webhook", {"url": f"{stack.sandbox_url}/hooks/search", "payload": {"n": 1}})
    for job_id in [*found, other, hook]:
        finished_job(tenant, job_id)

    page = console.open("/console/jobs", "Jobs")
    expect(page.get_by_label(re.compile(r"^From \("))).to_have_value(re.compile(r"^\d{4}-\d{2}-\d{2}$"))
    page.get_by_label("Recipient or host").fill(ana.upper())
    page.get_by_role("button", name="Search").click()

    rows = page.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(page.get_by_text("2 jobs shown")).to_be_visible()
    expect(page.get_by_role("columnheader", name="Recipient / URL")).to_be_visible()
    expect(rows.first.get_by_text(ana, exact=True)).to_be_visible()
    expect(rows.first.get_by_text("=Order 1", exact=True)).to_be_visible()
    # Every time says its zone; attempts read as a person counts them.
    expect(rows.first.get_by_text(re.compile(r"\d{1,2}:\d{2}:\d{2}.*(UTC|GMT)"))).to_be_visible()
    expect(rows.first.get_by_text("1 attempt", exact=True)).to_be_visible()
    screenshot(page, "search-found")
    console.check_accessibility("jobs search")

    sheet = list(csv.DictReader(io.StringIO(_downloaded(page, "Export CSV"))))
    assert [(row["id"], row["recipient"], row["subject"]) for row in sheet] == [
        (found[1], ana, "'=Order 1"),
        (found[0], ana, "'=Order 0"),
    ]
    lines = [json.loads(line) for line in _downloaded(page, "Export JSON lines").splitlines()]
    assert [(job["id"], job["subject"], job["status"]) for job in lines] == [
        (found[1], "=Order 1", "completed"),
        (found[0], "=Order 0", "completed"),
    ]

    page.get_by_label("Recipient or host").fill("127.0.0.1")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.get_by_text(f"{stack.sandbox_url}/hooks/search")).to_be_visible()


def test_another_tenants_recipient_is_never_found(console: Console) -> None:
    other = console.stack.create_tenant(plan="free", name="Other")
    secret = f"theirs-{uuid.uuid4().hex[:6]}@example.com"
    answer = requests.post(
        f"{console.stack.api_root}/notifications/email",
        json={"to": secret, "subject": "Theirs", "body": "<p>x</p>"},
        headers={"X-API-Key": other[1]},
        timeout=HTTP_TIMEOUT,
    )
    assert answer.status_code == 202, answer.text

    page = console.open(f"/console/jobs?find={secret}", "Jobs")

    expect(page.get_by_text("0 jobs shown")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^No jobs match this search"))).to_be_visible()
    assert secret not in _downloaded(page, "Export CSV")


def test_a_bad_filter_keeps_the_page_and_says_why_next_to_the_form(console: Console) -> None:
    page = console.open("/console/jobs?status=bogus", "Jobs")

    expect(page.get_by_role("search", name="Search jobs")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("status")
    expect(page.get_by_role("heading", name="This page could not be shown")).to_have_count(0)
    screenshot(page, "search-error")


def test_after_recovering_failed_jobs_the_count_is_what_the_table_shows(console: Console) -> None:
    tenant, stack = console.tenant, console.stack
    target = f"search-outage-{uuid.uuid4().hex[:8]}"
    outage = f"{stack.sandbox_url}/_sandbox/outages/hook:{target}"
    requests.put(outage, json={"status": 404}, timeout=HTTP_TIMEOUT).raise_for_status()
    refused = finished_job(
        tenant, tenant.send("webhook", {"url": f"{stack.sandbox_url}/hooks/{target}", "payload": {}})
    )
    assert refused["status"] == "failed"
    requests.delete(outage, timeout=HTTP_TIMEOUT)

    page = console.open("/console/jobs?status=failed", "Jobs")
    expect(page.get_by_text("1 job shown")).to_be_visible()
    page.get_by_role("button", name="Re-queue failed jobs").click()
    expect(page.get_by_text("1 failed job re-queued")).to_be_visible()
    wait_for(lambda: tenant.job(refused["id"])["status"] == "completed", "the recovered job")
    page = console.open("/console/jobs?status=failed", "Jobs")

    expect(page.get_by_text("0 jobs shown")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^No failed jobs match this search"))).to_be_visible()
    page = console.open(f"/console/jobs?find={stack.sandbox_url.split('//')[1].split(':')[0]}", "Jobs")
    row = page.locator("tbody tr").filter(has=page.get_by_role("link", name=re.compile(refused["id"])))
    expect(row.get_by_text("2 attempts", exact=True)).to_be_visible()


def test_rows_in_flight_refresh_by_themselves(console: Console) -> None:
    send_at = (datetime.now(UTC) + timedelta(seconds=8)).isoformat()
    job_id = console.tenant.send(
        "webhook", {"url": f"{console.stack.sandbox_url}/hooks/live", "payload": {}, "sendAt": send_at}
    )

    page = console.open("/console/jobs", "Jobs")
    row = page.locator("tbody tr").filter(has=page.get_by_role("link", name=re.compile(job_id)))
    expect(row.get_by_text("scheduled", exact=True)).to_be_visible()

    # No reload: the page reads its rows again while one is in flight.
    expect(row.get_by_text("completed", exact=True)).to_be_visible(timeout=120_000)


def test_the_search_fits_a_phone(local_stack: RunningStack, browser: Browser) -> None:
    phone = sign_up(local_stack, browser, PHONE)
    try:
        page = phone.open("/console/jobs", "Jobs")
        screenshot(page, "search-phone")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], width
        phone.check_accessibility("jobs search on a phone")
    finally:
        phone.context.close()
