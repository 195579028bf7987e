"""The console of the local stack: every process's lines with its name in front, and the banner."""

from __future__ import annotations

import json
import logging
import shlex
import sys
import threading
from pathlib import Path
from typing import TextIO

from herald_local.demo import DemoTenant

LABEL_WIDTH = 22
_lock = threading.Lock()
DEMO_RECIPIENT = "someone@example.com"


def console_line(label: str, line: str, stream: TextIO | None = None) -> None:
    target = sys.stdout if stream is None else stream
    with _lock:
        target.write(f"{label[:LABEL_WIDTH]:<{LABEL_WIDTH}} | {line.rstrip()}\n")
        target.flush()


class ConsoleHandler(logging.Handler):
    """Log records of the runtime itself, in the same column layout as the children's output."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self._label = label

    def emit(self, record: logging.LogRecord) -> None:
        level = "" if record.levelno == logging.INFO else f"{record.levelname}: "
        for line in f"{level}{self.format(record)}".splitlines() or [""]:
            console_line(self._label, line)


def curl_example(api_url: str, api_key: str) -> str:
    body = json.dumps({"to": DEMO_RECIPIENT, "subject": "Hello from Herald", "body": "<p>It works.</p>"})
    return (
        f"curl -s -X POST {api_url}/notifications/email \\\n"
        f"  -H {shlex.quote('X-API-Key: ' + api_key)} -H 'Content-Type: application/json' \\\n"
        f"  -d {shlex.quote(body)}"
    )


def ready_banner(
    *,
    api_url: str,
    sandbox_url: str,
    moto_url: str,
    state_file: Path,
    tenant: DemoTenant | None,
    seconds: float,
) -> str:
    """Plain values in, so the console depends on nothing of the stack that it prints about."""
    lines = [
        "",
        f"  API              {api_url}",
        f"  API docs         {api_url}/docs",
        f"  Sandbox mailbox  {sandbox_url}/",
        f"  AWS (moto)       {moto_url}",
        f"  State file       {state_file}",
    ]
    if tenant is None:
        lines.append("  Demo tenant      not created (see the warnings above)")
    else:
        lines += [
            f"  Demo tenant      {tenant.tenant_id}",
            f"  Demo API key     {tenant.api_key}",
            "",
            f"Send an email to {DEMO_RECIPIENT} (it lands in the sandbox mailbox):",
            "",
            curl_example(api_url, tenant.api_key),
        ]
    lines += ["", f"Herald local stack ready in {seconds:.1f} s", ""]
    return "\n".join(lines)
