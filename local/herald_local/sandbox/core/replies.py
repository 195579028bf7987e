"""Small HTTP pieces every route uses: JSON answers and request headers safe to keep."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from flask import Response

REDACTED = "[redacted]"


def json_reply(body: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body), status=status, headers=dict(headers or {}), content_type="application/json"
    )


def empty_reply(status: int, headers: Mapping[str, str] | None = None) -> Response:
    return Response(b"", status=status, headers=dict(headers or {}))


def safe_headers(headers: Iterable[tuple[str, str]], *, token_headers: bool = False) -> dict[str, str]:
    """Credentials never reach the store or the mailbox page: ``Authorization``, and with
    ``token_headers`` (a request to an imitated provider, whose keys some take as ``X-…-Token``)
    every header named ``…-Token``."""
    return {name: REDACTED if _credential(name, token_headers) else value for name, value in headers}


def _credential(name: str, token_headers: bool) -> bool:
    lowered = name.lower()
    return lowered == "authorization" or (token_headers and lowered.endswith("-token"))


# The imitated rate-limit windows are one second long, so clients that honour them retry quickly.
RATE_LIMIT_WINDOW_SECONDS = 1


def status_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"
