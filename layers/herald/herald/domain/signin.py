"""Signing in to the console without a password: one-time codes by email, and sessions.

A code is six digits, valid for ten minutes, used once, and locked after five wrong tries; only a
salted SHA-256 of it is stored. A session is a random token in an HttpOnly cookie; only its SHA-256
is stored, with an expiry. Requests for codes are limited per address and per client IP, and the
answer is the same whether or not the address has an account.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from enum import StrEnum

import msgspec

CODE_DIGITS = 6
CODE_TTL_SECONDS = 600
MAX_CODE_TRIES = 5
SESSION_TTL_SECONDS = 12 * 3600
SESSION_COOKIE = "herald_session"
# Code requests (sign-up and sign-in together) per window.
THROTTLE_WINDOW_SECONDS = 3600
CODES_PER_ADDRESS = 5
CODES_PER_CLIENT = 20


class CodePurpose(StrEnum):
    SIGN_UP = "signup"
    SIGN_IN = "signin"


def normalized_email(address: str) -> str:
    return address.strip().lower()


def address_key(address: str) -> str:
    """What the tables hold instead of the address itself (codes, throttles, the email claim)."""
    return hashlib.sha256(normalized_email(address).encode()).hexdigest()


def new_code() -> str:
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def code_digest(salt: str, code: str) -> str:
    return hashlib.sha256(f"{salt}:{code.strip()}".encode()).hexdigest()


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class PendingCode(msgspec.Struct, frozen=True):
    """A code sent to an address and not yet used. ``name`` is the account name a sign-up asked for;
    ``tenant_id`` the account a sign-in code opens (None: the code creates one)."""

    address_key: str
    digest: str
    salt: str
    expires_at: int
    tries: int = 0
    name: str | None = None
    tenant_id: str | None = None

    def matches(self, code: str) -> bool:
        return hmac.compare_digest(self.digest, code_digest(self.salt, code))

    def usable(self, now: float) -> bool:
        return self.tries < MAX_CODE_TRIES and now < self.expires_at


class Session(msgspec.Struct, frozen=True):
    token_digest: str
    tenant_id: str
    created_at: str
    expires_at: int

    def live(self, now: float) -> bool:
        return now < self.expires_at
