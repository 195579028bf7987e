"""The console of the local stack, and its log file.

Every line of every process (the function runners' Lambda and Powertools logs, moto, the runtime
itself) goes to the log file in the state folder, with its source's name in front. The console
shows by default only the runtime's own lines: one per API request, one per delivery the provider
sandbox receives, warnings, and the ready banner; with ``verbose`` it shows every line, as the
log file does.
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from herald_local.demo import DemoTenant

LABEL_WIDTH = 22
DEMO_RECIPIENT = "someone@example.com"
_lock = threading.Lock()


@dataclass
class _Destinations:
    # Every line of the child processes on the console too (the default outside the stack's own
    # entry points, e.g. in tests, which keep showing everything).
    verbose: bool = True
    console: TextIO | None = None  # None: sys.stdout as it is when a line is written
    log_file: TextIO | None = None


_destinations = _Destinations()


def configure(*, verbose: bool, log_path: Path | None, console: TextIO | None = None) -> None:
    """Where lines go from now on; the log file is appended to (several runs, one file)."""
    log_file = None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = log_path.open("a", encoding="utf-8")
        log_file.write(f"---- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} ----\n")
    with _lock:
        if _destinations.log_file is not None:
            _destinations.log_file.close()
        _destinations.verbose, _destinations.console, _destinations.log_file = verbose, console, log_file


def _write(target: TextIO, label: str, line: str) -> None:
    target.write(f"{label[:LABEL_WIDTH]:<{LABEL_WIDTH}} | {line.rstrip()}\n")
    target.flush()


def _emit(label: str, line: str, *, on_console: bool) -> None:
    with _lock:
        if _destinations.log_file is not None:
            _write(_destinations.log_file, label, line)
        if on_console:
            _write(_destinations.console or sys.stdout, label, line)


def child_line(label: str, line: str) -> None:
    """A line a child process wrote: always to the log file, to the console only when verbose."""
    _emit(label, line, on_console=_destinations.verbose)


def console_line(label: str, line: str) -> None:
    """A line of the runtime itself: to the console and to the log file."""
    _emit(label, line, on_console=True)


# The parts of the runtime whose lines carry their own label: the API's request lines, the
# provider sandbox's delivery lines.
_LABELS = (
    ("herald_local.gateway", "api"),
    ("herald_local.sandbox.slack", "slack"),
    ("herald_local.sandbox", "sandbox"),
)


class ConsoleHandler(logging.Handler):
    """Log records of the runtime itself, in the same column layout as the children's output."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self._label = label

    def emit(self, record: logging.LogRecord) -> None:
        label = next((name for prefix, name in _LABELS if record.name.startswith(prefix)), self._label)
        level = "" if record.levelno == logging.INFO else f"{record.levelname}: "
        for line in f"{level}{self.format(record)}".splitlines() or [""]:
            console_line(label, line)


def curl_example(api_root: str, api_key: str) -> str:
    body = json.dumps({"to": DEMO_RECIPIENT, "subject": "Hello from Herald", "body": "<p>It works.</p>"})
    return (
        f"curl -s -X POST {api_root}/notifications/email \\\n"
        f"  -H {shlex.quote('X-API-Key: ' + api_key)} -H 'Content-Type: application/json' \\\n"
        f"  -d {shlex.quote(body)}"
    )


def ready_banner(
    *,
    base_url: str,
    api_root: str,
    sandbox_url: str,
    moto_url: str,
    state_file: Path,
    log_file: Path,
    tenant: DemoTenant | None,
    seconds: float,
) -> str:
    """Plain values in, so the console depends on nothing of the stack that it prints about."""
    lines = [
        "",
        f"  SDK baseUrl      {base_url}  (the SDK adds {api_root.removeprefix(base_url)} itself)",
        f"  API root         {api_root}",
        f"  API docs         {api_root}/docs",
        f"  Console          {base_url}/console  (sign up; the code arrives in the sandbox mailbox)",
        f"  Sandbox mailbox  {sandbox_url}/",
        f"  AWS (moto)       {moto_url}",
        f"  State file       {state_file}",
        f"  Full logs        {log_file}  (or run with --verbose)",
    ]
    if tenant is None:
        lines.append("  Demo tenant      not created (see the warnings above)")
    else:
        lines += [
            f"  Demo tenant      {tenant.tenant_id}",
            f"  Demo API key     {tenant.api_key}",
            f"  Signing secret   {tenant.signing_secret or 'not created (see the warnings above)'}",
            "",
            f"Send an email to {DEMO_RECIPIENT} (it lands in the sandbox mailbox):",
            "",
            curl_example(api_root, tenant.api_key),
        ]
    lines += ["", f"Herald local stack ready in {seconds:.1f} s", ""]
    return "\n".join(lines)
