"""Signatures of outbound webhooks, in two formats at once (api.md, "Outbound webhook signing").

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
import hashlib
import hmac
import secrets as token_source
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's marker, not a secret
_SECRET_BYTES = 32


def new_signing_secret() -> str:
    """A fresh tenant signing secret: ``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(token_source.token_bytes(_SECRET_BYTES)).decode("ascii")


def _standard_key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    # Tolerate unpadded base64 the way the standardwebhooks library does (extra padding is ignored).
    return base64.b64decode(encoded + "==")


def _hmac_sha256(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _notifykit_signature(secrets: Sequence[str], body: bytes, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + body
    versions = ",".join(f"v1={_hmac_sha256(secret.encode(), signed).hex()}" for secret in secrets)
    return f"t={timestamp},{versions}"


def _standard_signature(secrets: Sequence[str], message_id: str, body: bytes, timestamp: int) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(_hmac_sha256(_standard_key(secret), signed)).decode("ascii")
        for secret in secrets
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
        "webhook-signature": _standard_signature(secrets, message_id, body, timestamp),
    }
