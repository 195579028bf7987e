"""Postmark's webhooks: one delivery event per request, unsigned.

Postmark signs nothing; Herald's webhook URL is protected with HTTP Basic auth, which the tenant
sets on the webhook (credentials in the URL, or ``HttpAuth`` when the webhook is created through
the API). Both parts are the tenant's choice, so the user name is checked only when the tenant
stored one. Without a timestamp there is no replay window: a replayed request is a duplicate, and
duplicates are dropped by event id.

The tenant stores the credentials as one string: ``user:password``, or only the password when any
user name may pass. The split is at the first colon (HTTP Basic auth user names cannot hold one),
so a password with a colon in it is stored with its user name, or behind an empty one (``:pass:word``).
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Mapping
from typing import Any

import msgspec

from herald.adapters.inbound.payloads import (
    as_object,
    derived_id,
    first_text,
    ignored,
    iso_time,
    load_report,
    reason,
    text,
)
from herald.adapters.inbound.verification import required_header, secret_bytes
from herald.adapters.provider_fields import int_field
from herald.domain.inbound import (
    DeliveryEvent,
    DeliveryEventType,
    IgnoredEvent,
    InvalidSignature,
    UnusableSecret,
)
from herald.domain.providers import JOB_ID_TAG, TENANT_ID_TAG
from herald.domain.vendors import ProviderName
from herald.services.ports.providers import DeliveryWebhook

AUTHORIZATION_HEADER = "Authorization"
# Basic auth is all that protects the URL: a password must not be guessable.
MIN_PASSWORD_CHARS = 16

_TYPES: Mapping[str, DeliveryEventType] = {
    "Delivery": DeliveryEventType.DELIVERED,
    "Open": DeliveryEventType.OPENED,
    "Click": DeliveryEventType.CLICKED,
    "SpamComplaint": DeliveryEventType.COMPLAINED,
}
# Bounce types that are permanent; every other bounce type may pass and is only recorded.
_HARD_BOUNCES = frozenset({"HardBounce", "BadEmailAddress"})
# Records name their time by what happened.
_TIME_FIELDS = ("DeliveredAt", "BouncedAt", "ReceivedAt", "ChangedAt")


class BasicCredentials(msgspec.Struct, frozen=True):
    password: str
    # None or empty: the tenant chose no user name, so any user name passes.
    username: str | None = None

    def __repr__(self) -> str:
        return "BasicCredentials('<redacted>')"


def verify(
    headers: Mapping[str, str],
    raw_body: bytes,  # noqa: ARG001 - one signature for every verifier; Postmark signs no body
    secret: BasicCredentials,
    now: float,  # noqa: ARG001 - no timestamp to hold against it
) -> None:
    password = secret_bytes(secret.password, "Postmark webhook password")
    sent_user, sent_password = _basic_credentials(required_header(headers, AUTHORIZATION_HEADER))
    # Both comparisons always run, so the time taken does not tell which part was wrong.
    password_ok = hmac.compare_digest(sent_password, password)
    user_ok = not secret.username or hmac.compare_digest(sent_user, secret.username.encode("utf-8"))
    if not (password_ok and user_ok):
        raise InvalidSignature("wrong user name or password in the Authorization header")


def credentials(secret: str) -> BasicCredentials:
    """The credentials of the tenant's stored string; also the check to run when a tenant stores one."""
    username, colon, password = secret.partition(":")
    if not colon:
        username, password = "", secret
    if len(password) < MIN_PASSWORD_CHARS:
        raise UnusableSecret(
            f"the Postmark webhook password must be at least {MIN_PASSWORD_CHARS} characters "
            "(store user:password, or the password alone)"
        )
    if not secret.isprintable():
        raise UnusableSecret("the Postmark webhook credentials hold a control character")
    return BasicCredentials(password=password, username=username or None)


def parse(raw_body: bytes) -> list[DeliveryEvent | IgnoredEvent]:
    record, name = load_report(raw_body, "RecordType")
    kind = _kind(name, record)
    recipient = first_text(record, "Recipient", "Email")
    if kind is None or recipient is None:
        return [ignored(ProviderName.POSTMARK, name, no_recipient=kind is not None)]
    metadata = as_object(record.get("Metadata"))
    bounce_id = int_field(record, "ID")
    return [
        DeliveryEvent(
            provider=ProviderName.POSTMARK,
            # Bounces and complaints have an id; deliveries, opens and clicks have none.
            event_id=str(bounce_id) if bounce_id is not None else derived_id(raw_body),
            type=kind,
            recipient=recipient.lower(),
            occurred_at=iso_time(first_text(record, *_TIME_FIELDS)),
            job_id=text(metadata, JOB_ID_TAG),
            tenant_id=text(metadata, TENANT_ID_TAG),
            provider_message_id=text(record, "MessageID"),
            reason=reason(first_text(record, "Details", "Description", "OriginalLink", "SuppressionReason")),
        )
    ]


def _basic_credentials(header: str) -> tuple[bytes, bytes]:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        raise InvalidSignature(f"{AUTHORIZATION_HEADER} header is not Basic auth")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
    except binascii.Error:
        raise InvalidSignature(f"{AUTHORIZATION_HEADER} header is not base64") from None
    user, colon, password = decoded.partition(b":")
    if not colon:
        raise InvalidSignature(f"{AUTHORIZATION_HEADER} header holds no user:password pair")
    return user, password


def _kind(name: str, record: Mapping[str, Any]) -> DeliveryEventType | None:
    if name == "Bounce":
        return _bounce_kind(record)
    if name == "SubscriptionChange":
        # A change that lifts the suppression (reactivation) is not an unsubscribe.
        return DeliveryEventType.UNSUBSCRIBED if record.get("SuppressSending") is True else None
    return _TYPES.get(name)


def _bounce_kind(record: Mapping[str, Any]) -> DeliveryEventType:
    bounce_type = text(record, "Type")
    if bounce_type == "SpamComplaint":
        return DeliveryEventType.COMPLAINED
    # Inactive: Postmark has already deactivated the address, whatever the type says.
    if bounce_type in _HARD_BOUNCES or record.get("Inactive") is True:
        return DeliveryEventType.BOUNCED
    return DeliveryEventType.SOFT_BOUNCED


WEBHOOK = DeliveryWebhook(
    ProviderName.POSTMARK,
    lambda headers, body, secret, now: verify(headers, body, credentials(secret), now),
    lambda body, _headers: parse(body),
    credentials,
)
