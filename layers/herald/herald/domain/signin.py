"""Signing in to the console without a password: one-time codes by email, and sessions.

A code is six digits, valid for ten minutes, used once, and dies after five wrong tries; only a
salted SHA-256 of it is stored. The tries belong to the code: a new code starts afresh. An address
gets a new code only after a delay that doubles with each code of a streak (``SignInLimits``; by
default 30 s, 60 s, 120 s, 240 s, then 300 s), so a stranger who keeps asking for someone's codes delays the owner by minutes, never
locks them out; guessing is bounded by the tries per code, that pace, and per client IP limits on
code requests and verifications. A session is a random token in an HttpOnly cookie; only its SHA-256
is stored, with an expiry. Every answer and every store call is the same whether or not the address
has an account.
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
# The window of the per client IP limits (SignInLimits).
THROTTLE_WINDOW_SECONDS = 3600
# A streak of an address's codes ends when its last code is this old (the stored code is kept that
# long for it), and the next code waits only the first delay again.
CODE_STREAK_SECONDS = 3600


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


class SignInLimits(msgspec.Struct, frozen=True):
    """The template's sign-in limits (ConsoleFunction's settings): code requests that send mail and
    code verifications per client IP per hour, generous for an office behind one address and far
    too few to guess a code; and the wait before an address's next code, the first delay doubled
    per code of a streak up to the longest."""

    codes_per_client: int
    verifications_per_client: int
    first_code_delay: int
    max_code_delay: int

    def code_delay(self, sends: int) -> int:
        """How long after the ``sends``-th code of a streak the address may get the next one."""
        return min(self.first_code_delay << max(sends - 1, 0), self.max_code_delay)


class PendingCode(msgspec.Struct, frozen=True):
    """The last code sent to an address and not yet used. ``name`` is the account name a sign-up
    asked for; ``tenant_id`` the account a sign-in code opens (None: the code creates one); ``sends``
    which code of the address's streak it is (it sets the wait before the next)."""

    address_key: str
    digest: str
    salt: str
    issued_at: int
    sends: int = 1
    tries: int = 0
    name: str | None = None
    tenant_id: str | None = None

    def matches(self, code: str) -> bool:
        return hmac.compare_digest(self.digest, code_digest(self.salt, code))

    def usable(self, now: float) -> bool:
        return self.tries < MAX_CODE_TRIES and now < self.issued_at + CODE_TTL_SECONDS

    def next_code_at(self, limits: SignInLimits) -> int:
        return self.issued_at + limits.code_delay(self.sends)

    def streak(self, now: float) -> int:
        """The codes sent in the streak this one belongs to, 0 once the streak is over."""
        return self.sends if now < self.issued_at + CODE_STREAK_SECONDS else 0


class Session(msgspec.Struct, frozen=True):
    token_digest: str
    tenant_id: str
    created_at: str
    expires_at: int
    # The member of the tenant the session signs in as (None: a session from before members; ended).
    member_id: str | None = None

    def live(self, now: float) -> bool:
        return now < self.expires_at
