"""Resend's event webhooks, delivered and signed by Svix.

The signing secret is ``whsec_`` followed by base64 of the HMAC key. Resend's body holds no event
id: the ``svix-id`` header is the id, the same on every redelivery, so ``parse`` needs the headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herald.adapters.inbound import standard_webhooks
from herald.adapters.inbound.payloads import as_object, ignored, iso_time, load_report, reason, text
from herald.domain.inbound import DeliveryEvent, DeliveryEventType, IgnoredEvent, UnusableSecret
from herald.domain.providers import JOB_ID_TAG, TENANT_ID_TAG
from herald.domain.signing import standard_key
from herald.domain.vendors import ProviderName
from herald.services.ports.providers import DeliveryWebhook

_TYPES: Mapping[str, DeliveryEventType] = {
    "email.delivered": DeliveryEventType.DELIVERED,
    "email.delivery_delayed": DeliveryEventType.DEFERRED,
    "email.complained": DeliveryEventType.COMPLAINED,
    "email.opened": DeliveryEventType.OPENED,
    "email.clicked": DeliveryEventType.CLICKED,
    # Resend did not send (daily quota, ...) or would not (address on its suppression list).
    "email.failed": DeliveryEventType.DROPPED,
    "email.suppressed": DeliveryEventType.DROPPED,
}
# Where each kind of report keeps its description: (sub-object of data, field).
_REASONS = (("bounce", "message"), ("failed", "reason"), ("suppressed", "reason"), ("click", "link"))


def verify(headers: Mapping[str, str], raw_body: bytes, secret: str, now: float) -> None:
    standard_webhooks.verify(standard_webhooks.SVIX, headers, raw_body, [signing_key(secret)], now)


def signing_key(secret: str) -> bytes:
    """The HMAC key of the tenant's secret; also the check to run when a tenant stores one."""
    try:
        return standard_key(secret)
    except ValueError:
        raise UnusableSecret("the Resend signing secret is not whsec_ followed by base64") from None


def parse(raw_body: bytes, headers: Mapping[str, str]) -> list[DeliveryEvent | IgnoredEvent]:
    event, name = load_report(raw_body, "type")
    data = as_object(event.get("data"))
    kind = _kind(name, data)
    recipient = _recipient(data.get("to"))
    if kind is None or recipient is None:
        return [ignored(ProviderName.RESEND, name, no_recipient=kind is not None)]
    tags = as_object(data.get("tags"))
    return [
        DeliveryEvent(
            provider=ProviderName.RESEND,
            event_id=standard_webhooks.message_id(standard_webhooks.SVIX, headers),
            type=kind,
            recipient=recipient,
            occurred_at=iso_time(event.get("created_at")),
            job_id=text(tags, JOB_ID_TAG),
            tenant_id=text(tags, TENANT_ID_TAG),
            provider_message_id=text(data, "email_id"),
            reason=reason(_description(data)),
        )
    ]


def _kind(name: str, data: Mapping[str, Any]) -> DeliveryEventType | None:
    if name == "email.bounced":
        # Transient and Undetermined bounces may pass; only Permanent is a hard bounce.
        permanent = as_object(data.get("bounce")).get("type") == "Permanent"
        return DeliveryEventType.BOUNCED if permanent else DeliveryEventType.SOFT_BOUNCED
    return _TYPES.get(name)


def _recipient(to: object) -> str | None:
    # Herald sends every email to exactly one address, so the first one is the recipient.
    first = to[0] if isinstance(to, list) and to else to
    return first.lower() if isinstance(first, str) and first else None


def _description(data: Mapping[str, Any]) -> str | None:
    return next((value for part, key in _REASONS if (value := text(as_object(data.get(part)), key))), None)


WEBHOOK = DeliveryWebhook(ProviderName.RESEND, verify, parse, signing_key)
