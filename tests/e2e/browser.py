"""Chromium for the console's browser tests: the operating system's own build, driven by Playwright.

No browser can be downloaded here (``playwright install`` fails), so the tests use Debian's
``chromium`` package at ``/usr/bin/chromium`` (``make test`` installs it where it can). A missing
browser fails the tests with what to install: a browser test never skips silently. Chromium runs
headless and without the background services that dial out (updates, sync, safe browsing).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

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
