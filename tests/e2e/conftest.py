"""The local stack for end-to-end tests: the harness's ``python -m herald_local`` on free ports
(herald_harness.running_stack), one for the session and one per test that stops its own, with the
AWS calls their functions made handed to the least-privilege check."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from herald_harness.running_stack import RunningStack, start_stack
from herald_local.config import AWS_CALLS_DIR_NAME
from tests.support.least_privilege import keep_calls


def wait_for(probe: Callable[[], Any], what: str, timeout: float = 30.0, interval: float = 0.1) -> Any:
    """The first truthy result of ``probe``, polled for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = probe()
        if result:
            return result
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    stack = start_stack(tmp_path_factory.mktemp("herald-local"))
    yield stack
    stack.stop_cleanly()
    keep_calls(stack.state_dir / AWS_CALLS_DIR_NAME)


@pytest.fixture
def fresh_stack(tmp_path: Path) -> Iterator[RunningStack]:
    """A stack of the test's own, for tests that stop it; killed if the test did not stop it."""
    stack = start_stack(tmp_path)
    yield stack
    if stack.process.poll() is None:
        stack.process.kill()
        stack.process.wait()
    keep_calls(stack.state_dir / AWS_CALLS_DIR_NAME)


# The browser for the console's tests: one per worker, session-scoped (a walk goes on over several
# tests with the same browser).
@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # Imported here: tests.e2e.browser reads this module's helpers through tests.e2e.clients.
    from tests.e2e.browser import CHROMIUM_ARGS, chromium_path

    chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()
