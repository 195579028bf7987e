"""Provider JSON read defensively, and provider words made fit for a log line or a job row.

Shared by the outbound provider adapters and the inbound webhook parsers; it imports no HTTP
client, so a webhook verifier's cold start does not pay for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

# Reasons are stored in the job row and shown to the tenant: one short line is enough.
MAX_REASON_CHARS = 200
REDACTED = "[redacted]"

_CONTROL_OR_SPACE = re.compile(r"[\s\x00-\x1f\x7f]+")


def text_field(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) else None


def int_field(body: Mapping[str, Any], key: str) -> int | None:
    value = body.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def safe_reason(text: str | None, secrets: Iterable[str]) -> str | None:
    """A provider message made fit for logs and job rows: one line, trimmed, secrets removed."""
    if not text:
        return None
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    line = _CONTROL_OR_SPACE.sub(" ", text).strip()
    if len(line) > MAX_REASON_CHARS:
        line = line[: MAX_REASON_CHARS - 1].rstrip() + "…"
    return line or None
