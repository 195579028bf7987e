"""Signatures of outbound webhooks, in two formats at once (docs/api.md, "Signatures of outbound webhooks").

- NotifyKit style, what the NotifyKit SDK's ``verifyWebhookSignature`` checks: ``X-Webhook-Timestamp``
  and ``X-Webhook-Signature: t=<ts>,v1=<hex>``, HMAC-SHA256 of ``"<ts>.<body>"`` keyed with the whole
  secret string.
- Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64>``,
  HMAC-SHA256 of ``"<id>.<ts>.<body>"`` keyed with the base64-decoded part after ``whsec_``.

During a secret rotation both secrets sign. Secrets come oldest first; the newest signature goes last
in the NotifyKit header because the SDK's verifier reads the last ``v1``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as token_source
from collections.abc import Sequence
from datetime import timedelta

# How long the previous secret keeps signing after a rotation (an account's or a subscription's):
# a day for receivers to take the new one.
SIGNING_OVERLAP = timedelta(hours=24)
SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's marker, not a secret
_SECRET_BYTES = 32


def new_signing_secret() -> str:
    """A fresh tenant signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(token_source.token_bytes(_SECRET_BYTES)).decode("ascii")


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks (or Svix) secret: the base64 after ``whsec_``.

    Raises ``ValueError`` unless that is base64 of at least one byte: decoding leniently would
    turn a garbled secret into an empty or guessable key, and a receiver would accept forgeries.
    """
    encoded = secret.removeprefix(SECRET_PREFIX)
    # Unpadded base64 is tolerated, as the reference libraries do.
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except binascii.Error:
        raise ValueError("the secret is not base64") from None
    if not key:
        raise ValueError("the secret holds no key")
    return key


def standard_signature(key: bytes, message_id: str, timestamp: int | str, body: bytes) -> str:
    """One Standard Webhooks signature, without its ``v1,`` label: base64 of the HMAC-SHA256 of
    ``"<id>.<timestamp>.<body>"``."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return base64.b64encode(_hmac_sha256(key, signed)).decode("ascii")


def _hmac_sha256(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _notifykit_signature(secrets: Sequence[str], body: bytes, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + body
    versions = ",".join(f"v1={_hmac_sha256(secret.encode(), signed).hex()}" for secret in secrets)
    return f"t={timestamp},{versions}"


def _standard_signatures(secrets: Sequence[str], message_id: str, body: bytes, timestamp: int) -> str:
    return " ".join(
        "v1," + standard_signature(standard_key(secret), message_id, timestamp, body) for secret in secrets
    )


def signature_headers(secrets: Sequence[str], message_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The signature headers for one delivery of ``body``; empty when the tenant has no secret."""
    if not secrets:
        return {}
    return {
        "X-Webhook-Timestamp": str(timestamp),
        "X-Webhook-Signature": _notifykit_signature(secrets, body, timestamp),
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": _standard_signatures(secrets, message_id, body, timestamp),
    }
