"""How the imitated APIs read keys and tokens: the email providers take those that begin with
``sandbox-``; the payment processors look at a bearer token's prefix."""

from __future__ import annotations

from flask import Request

SANDBOX_KEY_PREFIX = "sandbox-"


def is_sandbox_key(key: str | None) -> bool:
    return key is not None and key.startswith(SANDBOX_KEY_PREFIX)


def bearer_token(request: Request) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header, None when there is none."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def bearer_starts_with(request: Request, prefix: str) -> bool:
    """An ``Authorization: Bearer <token>`` header (that exact scheme) whose token starts with ``prefix``,
    as the payment processors check their keys."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return scheme == "Bearer" and bool(token) and token.startswith(prefix)
