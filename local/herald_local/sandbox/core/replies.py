"""Small HTTP pieces every route uses: JSON answers and request headers safe to keep."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from flask import Response

# Credentials never reach the store or the mailbox page.
_CREDENTIAL_HEADERS = frozenset({"authorization", "x-postmark-server-token", "x-postmark-account-token"})
REDACTED = "[redacted]"


def json_reply(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body), status=status, headers=dict(headers or {}), content_type="application/json"
    )


def empty_reply(status: int, headers: Mapping[str, str] | None = None) -> Response:
    return Response(b"", status=status, headers=dict(headers or {}))


def safe_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name: REDACTED if name.lower() in _CREDENTIAL_HEADERS else value for name, value in headers}


# The imitated rate-limit windows are one second long, so clients that honour them retry quickly.
RATE_LIMIT_WINDOW_SECONDS = 1


def status_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
