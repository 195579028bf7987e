"""One-click unsubscribe in a real browser (Playwright driving the OS's Chromium) against the local
stack: the link's page, which runs no script, unsubscribes and resubscribes by its buttons; and the
console's Unsubscribes section on the Suppressions page lists the recipient, filters by topic and
takes an unsubscribe back."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT
from tests.e2e.browser import Console, sign_up
from tests.e2e.clients import finished_job, sandbox

pytestmark = pytest.mark.e2e


@pytest.fixture
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def _mailed_link(console: Console, to: str, topic: str) -> str:
    body = {"to": to, "subject": "Our news", "body": "<p>News</p>", "unsubscribe": {"topic": topic}}
    job = finished_job(console.tenant, console.tenant.send("email", body))
    [message] = sandbox(console.stack, "messages", jobId=job["id"])
    return str(message["mailHeaders"]["List-Unsubscribe"]).removeprefix("<").removesuffix(">")


def test_the_links_page_and_the_consoles_unsubscribes_section(console: Console) -> None:
    to = f"reader-{uuid.uuid4().hex[:8]}@example.com"
    link = _mailed_link(console, to, "newsletter")
    page = console.page
    scripts: list[str] = []
    page.on(
        "request", lambda request: scripts.append(request.url) if request.resource_type == "script" else None
    )

    page.goto(link)
    expect(page.get_by_role("heading", name="Unsubscribe", exact=True)).to_be_visible()
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.get_by_role("heading", name="You are unsubscribed")).to_be_visible()
    expect(page.get_by_text(f"{to} will get no more mail about newsletter")).to_be_visible()
    console.check_accessibility("unsubscribe page")
    page.get_by_role("button", name="Resubscribe").click()
    expect(page.get_by_role("heading", name="Unsubscribe", exact=True)).to_be_visible()
    assert scripts == []
    assert requests.post(link, data="List-Unsubscribe=One-Click", timeout=HTTP_TIMEOUT).status_code == 200

    page = console.open("/console/suppressions", "Suppressions")
    section = page.get_by_role("region", name="Unsubscribes")
    expect(section.get_by_role("row", name=f"{to} newsletter")).to_be_visible()
    section.get_by_role("searchbox", name="Topic").fill("billing")
    section.get_by_role("button", name="Filter").click()
    expect(page.get_by_text("No unsubscribes from billing.")).to_be_visible()
    section.get_by_role("searchbox", name="Topic").fill("newsletter")
    section.get_by_role("button", name="Filter").click()
    section.get_by_role("button", name=f"Resubscribe {to} to newsletter").click()
    expect(page.get_by_text(f"{to} gets newsletter again")).to_be_visible()
    console.check_accessibility("suppressions with unsubscribes")
    listed = console.tenant.call("GET", "/account/unsubscribes").json()["data"]
    assert listed == {"data": [], "nextCursor": None}
