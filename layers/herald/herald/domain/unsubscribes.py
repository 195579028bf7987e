"""One-click unsubscribe (RFC 8058): topics, the signed token in a ``List-Unsubscribe`` URL, and the
unsubscribes a tenant's recipients recorded.

A send that names a topic carries ``List-Unsubscribe: <https://<origin>/u/<token>>`` and
``List-Unsubscribe-Post: List-Unsubscribe=One-Click``. The token is the credential of the one thing it
allows: unsubscribing (or resubscribing) one recipient of one tenant from one topic. It is signed,
not encrypted: it carries the recipient's own address, which only that recipient's mail shows.

Token: ``<version>.<payload>.<mac>``, the payload and the mac unpadded base64url; the payload is
``tenant id \\n canonical address \\n topic``; the mac is the first 16 bytes of HMAC-SHA256 over the
version and the payload, keyed with the platform's unsubscribe key of that version. No expiry: an
unsubscribe link must keep working for as long as the mail is kept (RFC 8058 asks it to work "for
some time"; Gmail reads it at any time). A new key is a new version.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from enum import StrEnum

import msgspec

from herald.domain.addresses import canonical_address

# A topic as a send names it: what a recipient unsubscribes from.
TOPIC_PATTERN = r"^[a-z0-9._-]{1,64}$"
_TOPIC = re.compile(TOPIC_PATTERN)
# The topic of an unsubscribe that covers every topic: a provider's unsubscribe event names none.
ALL_TOPICS = "*"
TOKEN_VERSION = "1"  # noqa: S105 (a format version, not a secret)
_MAC_BYTES = 16
# Keeps these MACs apart from anything else the platform might ever sign with the same key.
_DOMAIN = b"herald/unsubscribe\n"
LIST_UNSUBSCRIBE_POST = "List-Unsubscribe=One-Click"


def is_topic(value: str) -> bool:
    return _TOPIC.fullmatch(value) is not None


class UnsubscribeSource(StrEnum):
    ONE_CLICK = "one-click"  # the POST a mailbox provider (or the confirmation page) made
    PROVIDER = "provider"  # an email provider's unsubscribe event


class Subscriber(msgspec.Struct, frozen=True):
    """Whom a token names: one recipient (canonical address) of one tenant, for one topic."""

    tenant_id: str
    address: str
    topic: str


class Unsubscribe(msgspec.Struct, frozen=True):
    """A recorded unsubscribe: mail of ``topic`` (or of every topic, ``ALL_TOPICS``) no longer goes
    to ``address``."""

    address: str
    topic: str
    created_at: str
    source: UnsubscribeSource
    # The provider of a provider event.
    provider: str | None = None


class UnsubscribePage(msgspec.Struct, frozen=True):
    items: tuple[Unsubscribe, ...]
    next_cursor: str | None


class InvalidToken(Exception):
    """Not a token Herald signed (forged, altered, truncated, unknown version)."""


def subscriber(tenant_id: str, address: str, topic: str) -> Subscriber:
    return Subscriber(tenant_id, canonical_address(address), topic)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidToken from exc


def _mac(key: bytes, version: str, payload: bytes) -> bytes:
    signed = _DOMAIN + version.encode() + b"\n" + payload
    return hmac.new(key, signed, hashlib.sha256).digest()[:_MAC_BYTES]


def sign(key: bytes, who: Subscriber) -> str:
    payload = "\n".join((who.tenant_id, who.address, who.topic)).encode()
    return f"{TOKEN_VERSION}.{_b64(payload)}.{_b64(_mac(key, TOKEN_VERSION, payload))}"


def verify(key: bytes, token: str) -> Subscriber:
    """Whom ``token`` names; ``InvalidToken`` unless ``key`` signed exactly this token."""
    version, _, rest = token.partition(".")
    encoded, _, mac = rest.partition(".")
    if version != TOKEN_VERSION or not encoded or not mac:
        raise InvalidToken
    payload = _unb64(encoded)
    # Compared before the payload is read: nothing about a forged token's contents is looked at.
    if not hmac.compare_digest(_unb64(mac), _mac(key, version, payload)):
        raise InvalidToken
    try:
        tenant_id, address, topic = payload.decode().split("\n")
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidToken from exc
    return Subscriber(tenant_id, address, topic)


def list_unsubscribe_headers(origin: str, token: str) -> tuple[tuple[str, str], ...]:
    """The two headers of RFC 8058, HTTPS only (Herald receives no mail, so no ``mailto:``)."""
    return (
        ("List-Unsubscribe", f"<{origin}/u/{token}>"),
        ("List-Unsubscribe-Post", LIST_UNSUBSCRIBE_POST),
    )
