"""The checks every inbound verifier shares: headers read strictly, the replay window, and
secrets that are never empty.

Header names are matched without regard to case (API Gateway lower-cases them, other callers may
not). A header Herald has to trust must be present, non-empty and printable ASCII; anything else
is refused before any cryptography runs, and no refusal ever repeats a header's value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from herald.domain.inbound import InvalidSignature, UnusableSecret

# Herald's replay window, in both directions: the Svix and Standard Webhooks libraries use the
# same five minutes, and a provider that signs its timestamp without documenting a window is held
# to the same.
TOLERANCE_SECONDS = 300

_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")
# Unix seconds as digits only: int() would also take signs, spaces and underscores.
_UNIX_SECONDS = re.compile(r"[0-9]{1,12}")


def required_header(headers: Mapping[str, str], name: str) -> str:
    wanted = name.lower()
    value = next((value for key, value in headers.items() if key.lower() == wanted), "")
    # Only HTTP's own optional white space: str.strip() would also eat Unicode separators.
    value = value.strip(" \t")
    if not value:
        raise InvalidSignature(f"missing {name} header")
    if not _PRINTABLE_ASCII.fullmatch(value):
        raise InvalidSignature(f"{name} header is not printable ASCII")
    return value


def fresh_timestamp(headers: Mapping[str, str], name: str, now: float) -> str:
    """The timestamp header as sent (it is part of what was signed), once it is inside the window."""
    return fresh_time(required_header(headers, name), name, now, source=f"{name} header")


def fresh_time(value: str, name: str, now: float, *, source: str | None = None) -> str:
    """A signed Unix time as sent, once it is inside the window (``source``: where it was read)."""
    if not _UNIX_SECONDS.fullmatch(value):
        raise InvalidSignature(f"{source or name} is not Unix seconds")
    age = now - int(value)
    if age > TOLERANCE_SECONDS:
        raise InvalidSignature(f"{name} is more than {TOLERANCE_SECONDS} seconds old")
    if age < -TOLERANCE_SECONDS:
        raise InvalidSignature(f"{name} is more than {TOLERANCE_SECONDS} seconds in the future")
    return value


def secret_bytes(secret: str, what: str) -> bytes:
    """A secret used as it is (an HMAC key, a password). An empty one would make every forgery
    with an empty key or password pass, so it counts as no secret at all."""
    if not secret:
        raise UnusableSecret(f"the {what} is empty")
    return secret.encode("utf-8")
