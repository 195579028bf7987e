"""The sandbox's one rule for keys and tokens: those that begin with ``sandbox-`` are valid."""

from __future__ import annotations

from flask import Request

SANDBOX_KEY_PREFIX = "sandbox-"


def is_sandbox_key(key: str | None) -> bool:
    return key is not None and key.startswith(SANDBOX_KEY_PREFIX)


def bearer_token(request: Request) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header, None when there is none."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
