"""The local stack's console: a summary by default, everything with --verbose; the log file always
gets every line."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from herald_local.__main__ import _arguments
from herald_local.apigateway import gateway
from herald_local.host import console
from herald_local.sandbox.core import send_flow
from herald_local.sandbox.slack import webhook as slack

LAMBDA_LINE = "START RequestId: 5d1c Version: $LATEST"
SUMMARY_LINE = "GET /api/v1/ping -> 200 (3 ms)"


@pytest.fixture
def screen() -> Iterator[io.StringIO]:
    terminal = io.StringIO()
    yield terminal
    console.configure(verbose=True, log_path=None)  # as every other test expects it


def _say_both() -> None:
    console.child_line("ApiFunction", LAMBDA_LINE)
    console.console_line("herald-local", SUMMARY_LINE)


def test_given_the_default_then_the_console_shows_only_the_runtimes_lines_and_the_file_every_line(
    screen: io.StringIO, tmp_path: Path
) -> None:
    console.configure(verbose=False, log_path=tmp_path / "herald-local.log", console=screen)

    _say_both()

    assert screen.getvalue() == f"{'herald-local':<22} | {SUMMARY_LINE}\n"
    logged = (tmp_path / "herald-local.log").read_text()
    assert f"{'ApiFunction':<22} | {LAMBDA_LINE}\n" in logged
    assert f"{'herald-local':<22} | {SUMMARY_LINE}\n" in logged


def test_given_verbose_then_the_console_shows_every_line(screen: io.StringIO, tmp_path: Path) -> None:
    console.configure(verbose=True, log_path=tmp_path / "herald-local.log", console=screen)

    _say_both()

    assert LAMBDA_LINE in screen.getvalue()
    assert SUMMARY_LINE in screen.getvalue()


def test_the_stack_takes_a_verbose_flag() -> None:
    assert _arguments(["--verbose"]).verbose is True
    assert _arguments([]).verbose is False


@pytest.mark.parametrize(
    ("logger", "label"),
    [
        (gateway.log, "api"),
        (send_flow.log, "sandbox"),
        (slack.log, "slack"),
        (logging.getLogger("herald_local.stack"), "herald-local"),
    ],
)
def test_the_runtimes_lines_carry_the_label_of_the_part_that_logged_them(
    screen: io.StringIO, logger: logging.Logger, label: str
) -> None:
    console.configure(verbose=False, log_path=None, console=screen)
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 1, SUMMARY_LINE, (), None)

    console.ConsoleHandler("herald-local").emit(record)

    assert screen.getvalue() == f"{label:<22} | {SUMMARY_LINE}\n"
