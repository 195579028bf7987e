"""The documents Herald stores and queues its values in.

A request's document: the one form a request is stored in (the job item), queued in (the job
message's ``payload``) and copied to the operator in (the dead-letter copy). A JSON object with the
API's field names, absent options left out, so jobs and messages written before the typed request
read back unchanged; and the fingerprint that tells two requests under one idempotency key apart,
hashed over it as it always was.

A sealed secret's record: its format version and its three binary fields in base64, as the table's
sealed attributes hold it and a webhook's document its sealed custom headers. Reading one checks
what the record must be for the vault to open it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

from herald.domain.jobs import Channel, compact_json
from herald.domain.notifications import (
    EmailNotification,
    Notification,
    NotificationRequest,
    SealedHeaders,
    WebhookNotification,
)
from herald.domain.secrets import FORMAT_VERSION, NONCE_BYTES, TAG_BYTES, SealedSecret
from herald.domain.vendors import ProviderName


class _LastEncoded:
    """What one accept encodes up to three times (its fingerprint, its job item, its queue message) is
    one request: the last request encoded is kept with its document, compared by identity (a request
    is frozen, and this keeps it alive, so no other object takes its id). Its documents are read,
    never changed; it holds one request's document, at most an email's two bodies."""

    last: tuple[NotificationRequest, Mapping[str, Any]] | None = None


_memo = _LastEncoded()


def request_document(request: NotificationRequest) -> Mapping[str, Any]:
    """The request as a JSON object with the API's field names, absent options left out."""
    last = _memo.last
    if last is not None and last[0] is request:
        return last[1]
    document = _document(request)
    _memo.last = (request, document)
    return document


def _document(request: NotificationRequest) -> dict[str, Any]:
    notification = request.notification
    options = {
        "priority": request.priority,
        "idempotencyKey": request.idempotency_key,
        "sendAt": request.send_at,
        "orderingKey": request.ordering_key,
    }
    if isinstance(notification, EmailNotification):
        fields: dict[str, Any] = {
            "to": notification.to,
            "subject": notification.subject,
            "body": notification.body,
            "text": notification.text,
            "from": notification.sender,
            "replyTo": notification.reply_to,
            **options,
            "provider": notification.provider,
            "fallback": notification.fallback,
        }
    else:
        fields = {"url": notification.url, "method": notification.method, **_headers_fields(notification)}
        fields |= {"payload": dict(notification.payload), **options}
    return {name: value for name, value in fields.items() if value is not None}


def request_from_document(channel: Channel, document: Mapping[str, Any]) -> NotificationRequest:
    """The request of a stored or queued document; KeyError, TypeError or ValueError when it is not one."""
    notification: Notification
    if channel is Channel.EMAIL:
        notification = EmailNotification(
            to=str(document["to"]),
            subject=str(document["subject"]),
            body=str(document["body"]),
            text=optional_text(document, "text"),
            sender=optional_text(document, "from"),
            reply_to=optional_text(document, "replyTo"),
            provider=_provider(document, "provider"),
            fallback=_provider(document, "fallback"),
        )
    else:
        payload = document["payload"]
        if not isinstance(payload, Mapping):
            raise TypeError("a webhook's payload is a JSON object")
        notification = WebhookNotification(
            url=str(document["url"]),
            payload=payload,
            method=str(document.get("method", "POST")),
            headers=_headers_from(document),
        )
    priority = document.get("priority")
    return NotificationRequest(
        notification,
        priority=int(priority) if priority is not None else None,
        idempotency_key=optional_text(document, "idempotencyKey"),
        send_at=optional_text(document, "sendAt"),
        ordering_key=optional_text(document, "orderingKey"),
    )


def fingerprint(request: NotificationRequest) -> str:
    """What tells two requests under one idempotency key apart (409 for the same, 422 otherwise): the
    hash of the request's document without its key."""
    document = {name: value for name, value in request_document(request).items() if name != "idempotencyKey"}
    return hashlib.sha256(request.channel.value.encode() + b"\n" + compact_json(document)).hexdigest()


# ---------------------------------------------------------------- sealed secrets

_RECORD_FIELDS = frozenset({"version", "wrappedKey", "nonce", "ciphertext"})


class MalformedSecretRecord(ValueError):
    """A stored record is not a sealed secret this code reads (wrong shape or unknown format version)."""


def sealed_record(sealed: SealedSecret) -> dict[str, str | int]:
    return {
        "version": sealed.version,
        "wrappedKey": _b64encode(sealed.wrapped_key),
        "nonce": _b64encode(sealed.nonce),
        "ciphertext": _b64encode(sealed.ciphertext),
    }


def sealed_from_record(record: Mapping[str, object]) -> SealedSecret:
    if set(record) != _RECORD_FIELDS:
        raise MalformedSecretRecord(f"sealed secret record needs exactly the fields {sorted(_RECORD_FIELDS)}")
    return sealed_secret(record["version"], record["wrappedKey"], record["nonce"], record["ciphertext"])


def sealed_secret(version: object, wrapped_key: object, nonce: object, ciphertext: object) -> SealedSecret:
    """The sealed secret of a record's fields; ``MalformedSecretRecord`` unless they are one this code
    opens (the record's bytes are never part of the message)."""
    # DynamoDB numbers may come back as Decimal; bool is excluded because True == 1.
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise MalformedSecretRecord(f"unsupported sealed secret version {version!r}")
    sealed = SealedSecret(
        FORMAT_VERSION,
        _b64decode(wrapped_key, "wrappedKey"),
        _b64decode(nonce, "nonce"),
        _b64decode(ciphertext, "ciphertext"),
    )
    if not sealed.wrapped_key:
        raise MalformedSecretRecord("sealed secret has an empty wrapped key")
    if len(sealed.nonce) != NONCE_BYTES:
        raise MalformedSecretRecord(f"sealed secret nonce must be {NONCE_BYTES} bytes")
    if len(sealed.ciphertext) < TAG_BYTES:
        raise MalformedSecretRecord("sealed secret ciphertext is shorter than its tag")
    return sealed


def _b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _b64decode(value: object, name: str) -> bytes:
    if not isinstance(value, str):
        raise MalformedSecretRecord(f"sealed secret field {name} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise MalformedSecretRecord(f"sealed secret field {name} is not valid base64") from None


# ---------------------------------------------------------------- the request's parts


def _headers_fields(webhook: WebhookNotification) -> dict[str, Any]:
    headers = webhook.headers
    if isinstance(headers, SealedHeaders):
        return {"headerNames": list(headers.names), "sealedHeaders": sealed_record(headers.sealed)}
    return {"headers": dict(headers) or None}


def _headers_from(document: Mapping[str, Any]) -> Mapping[str, str] | SealedHeaders:
    if "sealedHeaders" in document:
        names = document.get("headerNames")
        if not isinstance(names, list):
            raise TypeError("sealed headers come with their names")
        return SealedHeaders(
            tuple(str(name) for name in names), sealed_from_record(document["sealedHeaders"])
        )
    headers = document.get("headers") or {}
    if not isinstance(headers, Mapping):
        raise TypeError("a webhook's headers are a JSON object")
    return {str(name): str(value) for name, value in headers.items()}


def optional_text(document: Mapping[str, Any], name: str) -> str | None:
    """A field's text; None when it is absent or null."""
    value = document.get(name)
    return None if value is None else str(value)


def _provider(document: Mapping[str, Any], name: str) -> ProviderName | None:
    value = document.get(name)
    return None if value is None else ProviderName(value)
