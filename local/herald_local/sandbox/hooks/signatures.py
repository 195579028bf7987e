"""Checks of Herald's outbound webhook signatures (docs/api.md, "Signatures of outbound webhooks") against the
secrets registered with the sandbox. Each check is True, False, or None when it cannot be made (no
secret registered, or the delivery carries no such signature header). Header names are lower case."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

from standardwebhooks import Webhook
from standardwebhooks.webhooks import EmptyWebhookSecretError, WebhookVerificationError

NOTIFYKIT_SIGNATURE_HEADER = "x-webhook-signature"
NOTIFYKIT_TIMESTAMP_HEADER = "x-webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
# The same replay window as the Standard Webhooks library.
TOLERANCE_SECONDS = 300


def _notifykit_parts(header: str) -> tuple[str, str] | None:
    """``t=<ts>,v1=<hex>[,v1=<hex>…]`` → (ts, the last v1), which is what the SDK's verifier reads."""
    pairs = [part.strip().partition("=") for part in header.split(",")]
    timestamps = [value for key, _, value in pairs if key == "t"]
    signatures = [value for key, _, value in pairs if key == "v1"]
    return (timestamps[0], signatures[-1]) if timestamps and signatures else None


def _fresh(timestamp: str) -> bool:
    return timestamp.isdigit() and abs(time.time() - int(timestamp)) <= TOLERANCE_SECONDS


def notifykit_signed(secret: str, timestamp: str, body: bytes) -> str:
    """The hex HMAC-SHA256 of ``<ts>.<raw body>`` keyed with the whole secret string."""
    return hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def check_notifykit(headers: Mapping[str, str], body: bytes, secrets: list[str]) -> bool | None:
    header = headers.get(NOTIFYKIT_SIGNATURE_HEADER)
    if not secrets or header is None:
        return None
    parts = _notifykit_parts(header)
    if parts is None:
        return False
    timestamp, signature = parts
    declared = headers.get(NOTIFYKIT_TIMESTAMP_HEADER, timestamp)
    if declared != timestamp or not _fresh(timestamp):
        return False
    return any(
        hmac.compare_digest(notifykit_signed(secret, timestamp, body), signature) for secret in secrets
    )


def _standard_valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    try:
        Webhook(secret).verify(body, headers, json_parse=False)
    except (WebhookVerificationError, ValueError):  # ValueError: a malformed signature list or base64
        return False
    return True


def check_standard(headers: Mapping[str, str], body: bytes, secrets: list[str]) -> bool | None:
    if not secrets or headers.get(STANDARD_SIGNATURE_HEADER) is None:
        return None
    return any(_standard_valid(secret, dict(headers), body) for secret in secrets)


def check_all(headers: Mapping[str, str], body: bytes, secrets: list[str]) -> dict[str, bool | None]:
    return {
        "notifykit": check_notifykit(headers, body, secrets),
        "standard": check_standard(headers, body, secrets),
    }


def is_valid_secret(secret: str) -> bool:
    """A ``whsec_`` secret the Standard Webhooks library can decode into a non-empty key."""
    if not secret.startswith("whsec_"):
        return False
    try:
        Webhook(secret)
    except (EmptyWebhookSecretError, ValueError):  # ValueError: not base64
        return False
    return True
