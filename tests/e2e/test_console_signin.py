"""Signing in to the console in Chromium, and where it leaves the person: a stranger who burns the
owner's codes does not keep the owner out; a signed-out deep link comes back after signing in,
never to another origin; the first visit goes to the sign-in page without an error; the focus
follows page changes; the demo tenant's owner sees the README's jobs; the docs page works under
its policy; HEAD of a console page."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant
from herald_local.demo import DEMO_EMAIL
from tests.e2e.browser import Console, codes_sent, latest_code, screenshot, sign_up
from tests.e2e.clients import finished_job
from tests.e2e.test_readme_walkthrough import printed_key

pytestmark = pytest.mark.e2e

WAIT = re.compile(r"ask for a new one in (\d+) seconds?")


@pytest.fixture
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


@pytest.fixture
def visitor(browser: Browser) -> Iterator[BrowserContext]:
    """A browser that never signed in here."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    yield context
    context.close()


def focused(page: Page) -> str:
    """The focused element: its tag and its text."""
    return str(
        page.evaluate(
            "() => `${document.activeElement.tagName} ${document.activeElement.textContent.trim()}`"
        )
    )


def ask_for_code(page: Page, stack: RunningStack, email: str) -> str:
    sent = codes_sent(stack, email)
    page.get_by_label("Work email").fill(email)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    return latest_code(stack, email, after=sent)


def enter(page: Page, code: str) -> None:
    page.get_by_label("Six-digit code").fill(code)
    page.get_by_role("button", name="Continue").click()


def test_a_stranger_burning_the_owners_codes_does_not_keep_the_owner_out(
    console: Console, visitor: BrowserContext
) -> None:
    stack, owner = console.stack, console.email
    page = visitor.new_page()
    page.goto(f"{stack.base_url}/console/signin")
    first = ask_for_code(page, stack, owner)
    # The stranger: sign-up and sign-in submissions with the owner's address, then guesses.
    same_origin = {"Origin": stack.base_url}
    submissions = [
        requests.post(f"{stack.api_root}/{route}", json=body, headers=same_origin, timeout=HTTP_TIMEOUT)
        for route, body in [("signup", {"email": owner, "name": "Evil"}), ("signin", {"email": owner})] * 2
    ]
    assert [answer.status_code for answer in submissions] == [429] * 4
    assert all(0 < answer.json()["retryAfter"] <= 30 for answer in submissions)
    guesses = [
        requests.post(
            f"{stack.api_root}/signin/verify",
            json={"email": owner, "code": f"{(int(first) + n) % 1_000_000:06d}"},
            headers=same_origin,
            timeout=HTTP_TIMEOUT,
        )
        for n in range(1, 6)
    ]
    assert guesses[-1].json()["error"] == "The code is not valid and no longer works; ask for a new code."
    # The owner's code died with the guesses: the page says so and offers a new code or another email.
    enter(page, first)
    expect(page.get_by_role("alert")).to_have_text("The code no longer works; ask for a new code.")
    expect(page.get_by_role("button", name="Use another email")).to_be_visible()
    screenshot(page, "signin-dead-code")
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("alert")).to_contain_text("you can ask for a new one in")
    screenshot(page, "signin-wait")
    wait = WAIT.search(page.get_by_role("alert").inner_text())
    assert wait is not None
    assert 0 < int(wait.group(1)) <= 30
    time.sleep(int(wait.group(1)) + 1)
    sent = codes_sent(stack, owner)
    page.get_by_role("button", name="Send a new code").click()
    expect(page.locator(".message-success")).to_have_text(
        "A new code is on its way; earlier codes no longer work."
    )
    fresh = latest_code(stack, owner, after=sent)
    for n in range(1, 5):
        enter(page, f"{(int(fresh) + n) % 1_000_000:06d}")
        expect(page.get_by_role("alert")).to_contain_text("left")
    expect(page.get_by_role("alert")).to_have_text("The code is not valid (1 try left).")
    screenshot(page, "signin-one-try-left")
    enter(page, fresh)
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()


def test_use_another_email_starts_over_with_the_address_to_correct(
    local_stack: RunningStack, visitor: BrowserContext
) -> None:
    page = visitor.new_page()
    page.goto(f"{local_stack.base_url}/console/signin")
    typo = f"typo-{uuid.uuid4().hex[:8]}@example.con"
    page.get_by_label("Work email").fill(typo)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    page.get_by_role("button", name="Use another email").click()
    expect(page.get_by_role("heading", name="Sign in to Herald")).to_be_visible()
    expect(page.get_by_label("Work email")).to_be_focused()
    expect(page.get_by_label("Work email")).to_have_value(typo)


def test_a_signed_out_deep_link_signs_the_demo_owner_in_and_opens_the_page_first_asked_for(
    local_stack: RunningStack, visitor: BrowserContext
) -> None:
    """The README's demo tenant: its owner signs in with the demo address and sees its jobs."""
    demo = Tenant(local_stack.api_root, "", printed_key(local_stack))
    job_id = demo.send("email", {"to": "someone@example.com", "subject": "Hello", "body": "<p>Hi</p>"})
    finished_job(demo, job_id)
    page = visitor.new_page()
    refused: list[int] = []
    errors: list[str] = []
    page.on("response", lambda answer: refused.append(answer.status) if answer.status >= 400 else None)
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{local_stack.base_url}/console/jobs/{job_id}")
    # Quietly to the sign-in page: no request refused, no error shown or logged.
    expect(page.get_by_role("heading", name="Sign in to Herald")).to_be_visible()
    assert (refused, errors) == ([], [])
    assert page.get_by_text("could not be shown").count() == 0
    # A fresh page: the first Tab reaches "Skip to content".
    page.keyboard.press("Tab")
    assert focused(page) == "A Skip to content"
    screenshot(page, "signin-deep-link")
    enter(page, ask_for_code(page, local_stack, DEMO_EMAIL))
    expect(page.get_by_role("heading", name=re.compile(r"^Email"))).to_be_focused()
    assert page.url == f"{local_stack.base_url}/console/jobs/{job_id}"
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Jobs").click()
    expect(page.get_by_role("heading", name="Jobs", exact=True)).to_be_focused()
    expect(page.locator(f'#main a[href="/console/jobs/{job_id}"]').first).to_be_visible()
    screenshot(page, "signin-demo-jobs")


def test_after_signing_in_no_link_sends_the_browser_to_another_origin(console: Console) -> None:
    page = console.page
    for target in ("//evil.example/console", "https://evil.example/console", "/\\evil.example"):
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in to Herald")).to_be_visible()
        page.goto(f"{console.origin}/console/signin?next={quote(target, safe='')}")
        enter(page, ask_for_code(page, console.stack, console.email))
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
        assert page.url == f"{console.origin}/console", target


def test_focus_goes_to_the_new_pages_heading_and_never_falls_to_the_body(console: Console) -> None:
    job_id = console.tenant.send(
        "email", {"to": "fail-500@example.com", "subject": "Receipt", "body": "<p>x</p>"}
    )
    assert finished_job(console.tenant, job_id)["status"] == "failed"
    page = console.open(f"/console/jobs/{job_id}", "Email failed")
    page.get_by_role("button", name="Retry").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("Queued again for delivery")).to_be_visible()
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(page.locator("#main h1")).to_be_focused()
    assert focused(page).startswith("H1 Email")
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Overview").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_focused()
    page.go_back()
    expect(page.get_by_role("heading", name=re.compile(r"^Email"))).to_be_focused()


def test_the_docs_page_works_under_its_policy_and_head_answers_like_get(
    local_stack: RunningStack, visitor: BrowserContext
) -> None:
    page = visitor.new_page()
    blocked: list[str] = []
    page.on(
        "console",
        lambda message: blocked.append(message.text) if "Content Security Policy" in message.text else None,
    )
    answer = page.goto(f"{local_stack.api_root}/docs")
    assert answer is not None
    assert "sha256-" in answer.headers["content-security-policy"]
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Herald API")
    page.get_by_text("/api/v1/ping", exact=True).first.click()
    expect(page.get_by_role("button", name="Try it out")).to_be_visible()
    assert blocked == []
    screenshot(page, "signin-docs")
    for path in ("/console", "/console/jobs/x", "/console/assets/app.js"):
        got = requests.get(f"{local_stack.base_url}{path}", timeout=HTTP_TIMEOUT)
        head = requests.head(f"{local_stack.base_url}{path}", timeout=HTTP_TIMEOUT)
        assert (head.status_code, head.content) == (200, b"")
        assert head.headers["Content-Type"] == got.headers["Content-Type"]
        assert head.headers["Content-Security-Policy"] == got.headers["Content-Security-Policy"]
