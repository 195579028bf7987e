"""Chromium for the console's browser tests: the operating system's own build, driven by Playwright.

No browser can be downloaded here (``playwright install`` fails), so the tests use Debian's
``chromium`` package at ``/usr/bin/chromium`` (``make test`` installs it where it can). A missing
browser fails the tests with what to install: a browser test never skips silently. Chromium runs
headless and without the background services that dial out (updates, sync, safe browsing).
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant
from tests.e2e.clients import sandbox, wait_for

CHROMIUM = Path(os.environ.get("HERALD_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]
# What the accessibility checks refuse (axe-core's impact levels).
REFUSED_IMPACTS = frozenset({"serious", "critical"})
# Where screenshots go: docs/console/ when regenerating the docs (make screenshots), else nowhere.
SCREENSHOTS = os.environ.get("HERALD_CONSOLE_SCREENSHOTS")
CODE = re.compile(r"Your Herald code: (\d{6})")
DESKTOP: ViewportSize = {"width": 1280, "height": 860}
PHONE: ViewportSize = {"width": 375, "height": 740}


def chromium_path() -> str:
    if not CHROMIUM.is_file():
        pytest.fail(
            f"The console's browser tests need Chromium at {CHROMIUM}: install Debian's package "
            "(apt-get install chromium), or point HERALD_CHROMIUM at a Chromium binary."
        )
    return str(CHROMIUM)


_axe = Axe()


def accessibility_problems(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now (injected by the test)."""
    violations: list[dict[str, Any]] = _axe.run(page).response["violations"]
    return [
        {"id": item["id"], "impact": item["impact"], "nodes": [node["target"] for node in item["nodes"]][:5]}
        for item in violations
        if item.get("impact") in REFUSED_IMPACTS
    ]


def screenshot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        folder = Path(SCREENSHOTS)
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@dataclass
class Console:
    stack: RunningStack
    context: BrowserContext
    page: Page
    email: str
    tenant: Tenant
    visited: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        return self.stack.base_url

    def open(self, path: str, heading: str) -> Page:
        self.page.goto(f"{self.origin}{path}")
        expect(self.page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
        return self.page

    def check_accessibility(self, name: str) -> None:
        self.visited[name] = accessibility_problems(self.page)
        assert self.visited[name] == [], name

    def session_token(self) -> str:
        return next(
            cookie["value"] for cookie in self.context.cookies() if cookie["name"] == "herald_session"
        )


def latest_code(stack: RunningStack, email: str, after: int = 0) -> str:
    """The newest sign-in code the sandbox received for ``email`` (from Herald's SES sender)."""

    def newest() -> str | None:
        messages = sandbox(stack, "messages", to=email, provider="ses")
        found = CODE.search(messages[-1]["subject"]) if len(messages) > after else None
        return found.group(1) if found else None

    code: str = wait_for(newest, f"a code for {email}", timeout=20)
    return code


def codes_sent(stack: RunningStack, email: str) -> int:
    return len(sandbox(stack, "messages", to=email, provider="ses"))


def sign_up(stack: RunningStack, browser: Browser, viewport: ViewportSize = DESKTOP) -> Console:
    """Signs up in a new browser context: the form, the code from the sandbox mailbox, the first
    key; the page left on the overview. The caller closes ``context``."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    email = f"console-{uuid.uuid4().hex[:8]}@example.com"
    page.goto(f"{stack.base_url}/console/signup")
    page.get_by_label("Work email").fill(email)
    page.get_by_label("Account name").fill("Acme Labs")
    if viewport == DESKTOP:  # the docs show the desktop form; a phone test takes its own pictures
        screenshot(page, "signup")
    page.get_by_role("button", name="Email me a code").click()
    page.get_by_label("Six-digit code").fill(latest_code(stack, email))
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Your account is ready")).to_be_visible()
    api_key = page.locator("[data-secret]").inner_text()
    assert re.fullmatch(r"hk_[0-9a-f]{64}", api_key)
    tenant_id = requests.get(
        f"{stack.api_root}/account", headers={"X-API-Key": api_key}, timeout=HTTP_TIMEOUT
    ).json()["data"]["tenantId"]
    made = Console(stack, context, page, email, Tenant(stack.api_root, tenant_id, api_key))
    made.check_accessibility("first key")
    page.get_by_role("button", name="Go to the console").click()
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    return made
