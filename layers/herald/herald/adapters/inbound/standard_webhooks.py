"""Svix and Standard Webhooks (Polar's): one signature scheme under two header prefixes.

The sender signs ``"<message id>.<timestamp>.<raw body>"`` with HMAC-SHA256 and sends
``v1,<base64>`` values, space-separated: during a secret rotation it signs with the old and the new
secret at once, so any one matching value is enough. Values of other versions are skipped. The
signature itself is Herald's own Standard Webhooks signing (``herald.domain.signing``), used here
the other way round.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping

import msgspec

from herald.adapters.inbound.verification import fresh_timestamp, required_header
from herald.domain.inbound import InvalidSignature
from herald.domain.signing import standard_signature

SIGNATURE_VERSION = "v1"


class SchemeHeaders(msgspec.Struct, frozen=True):
    message_id: str
    timestamp: str
    signature: str


SVIX = SchemeHeaders("svix-id", "svix-timestamp", "svix-signature")
STANDARD = SchemeHeaders("webhook-id", "webhook-timestamp", "webhook-signature")


def verify(
    scheme: SchemeHeaders, headers: Mapping[str, str], raw_body: bytes, keys: Iterable[bytes], now: float
) -> None:
    """Pass if a ``v1`` value matches the HMAC under any of ``keys``; raise ``InvalidSignature``."""
    message_id = required_header(headers, scheme.message_id)
    timestamp = fresh_timestamp(headers, scheme.timestamp, now)
    offered = _offered_signatures(required_header(headers, scheme.signature), scheme.signature)
    for key in keys:
        expected = standard_signature(key, message_id, timestamp, raw_body)
        # Every offered value is compared in constant time; only which one matched can leak.
        if any(hmac.compare_digest(expected, candidate) for candidate in offered):
            return
    raise InvalidSignature(f"no {scheme.signature} value matches the body")


def message_id(scheme: SchemeHeaders, headers: Mapping[str, str]) -> str:
    """The sender's id of the message: the same on every redelivery, so the dedupe key."""
    return required_header(headers, scheme.message_id)


def _offered_signatures(header: str, name: str) -> list[str]:
    entries = (entry.partition(",") for entry in header.split(" "))
    signatures = [value for version, _, value in entries if version == SIGNATURE_VERSION and value]
    if not signatures:
        raise InvalidSignature(f"{name} header holds no {SIGNATURE_VERSION} signature")
    return signatures
