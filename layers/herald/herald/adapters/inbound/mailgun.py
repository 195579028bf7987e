"""Mailgun's event webhooks: one event per request, signed inside the JSON body.

The body's ``signature`` holds a Unix ``timestamp``, a random ``token`` and their ``signature``: the
hex HMAC-SHA256 of timestamp and token, concatenated, keyed with the account's HTTP webhook signing
key (not its API key). The body itself is not signed, so a captured signature could be sent with
any other body while its timestamp is fresh: the token is single-use (the caller marks it), and the
timestamp must be within the replay window.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from herald.adapters.inbound.payloads import (
    as_object,
    derived_id,
    first_text,
    ignored,
    iso_time,
    load_json,
    reason,
    text,
)
from herald.adapters.inbound.verification import fresh_time, secret_bytes
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

SIGNATURE = "signature"
EVENT_DATA = "event-data"

_TYPES: Mapping[str, DeliveryEventType] = {
    "delivered": DeliveryEventType.DELIVERED,
    "opened": DeliveryEventType.OPENED,
    "clicked": DeliveryEventType.CLICKED,
    "unsubscribed": DeliveryEventType.UNSUBSCRIBED,
    "complained": DeliveryEventType.COMPLAINED,
}


def verify(
    headers: Mapping[str, str],  # noqa: ARG001 - one signature for every verifier; Mailgun signs in the body
    raw_body: bytes,
    secret: str,
    now: float,
) -> None:
    key = signing_key(secret)
    signed = _signature(raw_body)
    timestamp = fresh_time(_field(signed, "timestamp"), "signature timestamp", now)
    token, offered = _field(signed, "token"), _field(signed, SIGNATURE)
    expected = hmac.new(key, (timestamp + token).encode("ascii"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, offered.lower()):
        raise InvalidSignature("the signature does not match its timestamp and token")


def signing_key(secret: str) -> bytes:
    """The tenant's webhook signing key; also the check to run when a tenant stores one."""
    if not secret.isprintable():
        raise UnusableSecret("the Mailgun webhook signing key holds a control character")
    return secret_bytes(secret, "Mailgun webhook signing key")


def single_use_token(raw_body: bytes, _headers: Mapping[str, str]) -> str:
    """The verified request's token, which Mailgun never signs twice."""
    return _field(_signature(raw_body), "token")


def parse(raw_body: bytes, _headers: Mapping[str, str]) -> list[DeliveryEvent | IgnoredEvent]:
    body = load_json(raw_body)
    if not isinstance(body, dict):
        raise MalformedPayload("the body is not a JSON object")
    data = as_object(body.get(EVENT_DATA))
    name = text(data, "event") or ""
    kind = _kind(name, data)
    recipient = text(data, "recipient")
    if kind is None or recipient is None:
        return [ignored(ProviderName.MAILGUN, name, no_recipient=kind is not None)]
    variables = as_object(data.get("user-variables"))
    return [
        DeliveryEvent(
            provider=ProviderName.MAILGUN,
            # Every event has an id; the fallback keeps an odd one deduplicable all the same.
            event_id=text(data, "id") or derived_id(raw_body),
            type=kind,
            recipient=recipient.lower(),
            occurred_at=iso_time(data.get("timestamp")),
            job_id=text(variables, JOB_ID_TAG),
            tenant_id=text(variables, TENANT_ID_TAG),
            provider_message_id=text(as_object(as_object(data.get("message")).get("headers")), "message-id"),
            reason=reason(_description(data)),
        )
    ]


def _signature(raw_body: bytes) -> Mapping[str, Any]:
    """The body's signature object; a body without one proves nothing."""
    try:
        body = load_json(raw_body)
    except MalformedPayload:
        raise InvalidSignature("the body is not JSON, so it holds no signature") from None
    signed = body.get(SIGNATURE) if isinstance(body, dict) else None
    if not isinstance(signed, dict):
        raise InvalidSignature("the body holds no signature object")
    return signed


def _field(signed: Mapping[str, Any], name: str) -> str:
    value = signed.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidSignature(f"the signature object holds no {name}")
    if not (value.isascii() and value.isprintable()):
        raise InvalidSignature(f"the signature's {name} is not printable ASCII")
    return value


def _kind(name: str, data: Mapping[str, Any]) -> DeliveryEventType | None:
    if name == "failed":
        # Permanent: the address refuses mail for good (or Mailgun's own suppression list holds it).
        permanent = data.get("severity") == "permanent"
        return DeliveryEventType.BOUNCED if permanent else DeliveryEventType.SOFT_BOUNCED
    # "accepted" (and anything else) tells Herald nothing its own send did not.
    return _TYPES.get(name)


def _description(data: Mapping[str, Any]) -> str | None:
    status = as_object(data.get("delivery-status"))
    return first_text(status, "description", "message") or first_text(data, "reason", "url")


WEBHOOK = DeliveryWebhook(ProviderName.MAILGUN, verify, parse, signing_key, single_use=single_use_token)
