"""SendGrid's Signed Event Webhook: batches of delivery events, signed with ECDSA P-256.

SendGrid signs the timestamp header immediately followed by the raw body (SHA-256, no separator)
and sends the DER signature in base64. The tenant copies the verification key from its SendGrid
settings: base64 of a DER SubjectPublicKeyInfo.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature as BadEcdsaSignature
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key

from herald.adapters.inbound.payloads import (
    as_object,
    first_text,
    ignored,
    iso_time,
    load_json,
    object_id,
    reason,
    text,
)
from herald.adapters.inbound.verification import fresh_timestamp, required_header
from herald.domain.inbound import (
    DeliveryEvent,
    DeliveryEventType,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    UnusableSecret,
)
from herald.domain.providers import JOB_ID_TAG, TENANT_ID_TAG
from herald.domain.vendors import ProviderName
from herald.services.ports.providers import DeliveryWebhook

SIGNATURE_HEADER = "X-Twilio-Email-Event-Webhook-Signature"
TIMESTAMP_HEADER = "X-Twilio-Email-Event-Webhook-Timestamp"

_TYPES: Mapping[str, DeliveryEventType] = {
    "delivered": DeliveryEventType.DELIVERED,
    "deferred": DeliveryEventType.DEFERRED,
    "dropped": DeliveryEventType.DROPPED,
    "spamreport": DeliveryEventType.COMPLAINED,
    "unsubscribe": DeliveryEventType.UNSUBSCRIBED,
    "group_unsubscribe": DeliveryEventType.UNSUBSCRIBED,
    "open": DeliveryEventType.OPENED,
    "click": DeliveryEventType.CLICKED,
}


def verify(headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None:
    key = verification_key(secret)
    signature = _decoded_signature(required_header(headers, SIGNATURE_HEADER))
    timestamp = fresh_timestamp(headers, TIMESTAMP_HEADER, now)
    try:
        key.verify(signature, timestamp.encode("ascii") + raw_body, ec.ECDSA(hashes.SHA256()))
    except BadEcdsaSignature:
        raise InvalidSignature(f"{SIGNATURE_HEADER} does not match the body") from None


def verification_key(secret: str) -> ec.EllipticCurvePublicKey:
    """The tenant's key; also the check to run when a tenant stores one."""
    try:
        key = load_der_public_key(base64.b64decode(secret, validate=True))
    except (ValueError, UnsupportedAlgorithm):
        raise UnusableSecret("the SendGrid verification key is not base64 of a DER public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise UnusableSecret("the SendGrid verification key is not a P-256 public key")
    return key


def parse(raw_body: bytes) -> list[DeliveryEvent | IgnoredEvent]:
    batch = load_json(raw_body)
    if not isinstance(batch, list):
        raise MalformedPayload("the body is not a JSON array of events")
    return [_event(as_object(item)) for item in batch]


def _decoded_signature(header: str) -> bytes:
    try:
        return base64.b64decode(header, validate=True)
    except binascii.Error:
        raise InvalidSignature(f"{SIGNATURE_HEADER} is not base64") from None


def _event(fields: Mapping[str, Any]) -> DeliveryEvent | IgnoredEvent:
    name = text(fields, "event") or ""
    kind = _kind(name, fields)
    recipient = text(fields, "email")
    if kind is None or recipient is None:
        return ignored(ProviderName.SENDGRID, name, no_recipient=kind is not None)
    message_id = text(fields, "sg_message_id")
    return DeliveryEvent(
        provider=ProviderName.SENDGRID,
        # Every event carries sg_event_id; the fallback keeps an odd one deduplicable all the same.
        event_id=text(fields, "sg_event_id") or object_id(fields),
        type=kind,
        recipient=recipient.lower(),
        occurred_at=iso_time(fields.get("timestamp")),
        # Herald's custom_args come back as top-level keys of each event.
        job_id=text(fields, JOB_ID_TAG),
        tenant_id=text(fields, TENANT_ID_TAG),
        # The part before the first dot is the X-Message-Id the send answer carried.
        provider_message_id=message_id.split(".", 1)[0] if message_id else None,
        reason=reason(first_text(fields, "reason", "response", "url")),
    )


def _kind(name: str, fields: Mapping[str, Any]) -> DeliveryEventType | None:
    if name == "bounce":
        # A "blocked" bounce is the receiving server refusing for now; only "bounce" is permanent.
        blocked = fields.get("type") == "blocked"
        return DeliveryEventType.SOFT_BOUNCED if blocked else DeliveryEventType.BOUNCED
    return _TYPES.get(name)


WEBHOOK = DeliveryWebhook(ProviderName.SENDGRID, verify, lambda body, _headers: parse(body), verification_key)
