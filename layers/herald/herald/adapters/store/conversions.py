"""Herald's values in their stored forms and back: the tenant side of the table (profiles,
credentials, domains), sealed secrets and a request's document. A job's state, log and events
convert in ``job_items``.

A sealed secret is stored as its format version and its three binary fields in base64: a map
attribute of the table's items, and a record within a webhook's document for its sealed custom
headers. Reading one checks what it must be for the vault to open it.

A request's document is the one form a request is stored in (its job item), queued in (the job
message carries it inline, which spares the worker a read) and copied to the operator in (the
dead-letter copy): a JSON object with the API's field names, absent options left out, so jobs and
messages written before the typed request read back unchanged. The fingerprint that tells two
requests under one idempotency key apart is hashed over it, as it always was.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

from herald.adapters.store.models import (
    DnsRecordAttribute,
    DomainItem,
    ProviderDomainAttribute,
    ProviderItem,
    SealedAttribute,
    TenantItem,
    domain_sk,
    provider_sk,
    tenant_pk,
)
from herald.adapters.store.table import Table
from herald.domain.account import TenantProfile
from herald.domain.attachments import Attachment
from herald.domain.jobs import Channel, compact_json
from herald.domain.notifications import (
    DeliveryRef,
    EmailNotification,
    Notification,
    NotificationRequest,
    SealedHeaders,
    WebhookNotification,
)
from herald.domain.providers import DnsRecord, ProviderDomain, SendingDomain, StoredProvider
from herald.domain.secrets import FORMAT_VERSION, NONCE_BYTES, TAG_BYTES, SealedSecret
from herald.domain.templates import TemplateUse
from herald.domain.vendors import ProviderName

# ---------------------------------------------------------------- the tenant side


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def profile_from(item: TenantItem) -> TenantProfile:
    return TenantProfile(
        tenant_id=item.tenant_id,
        name=item.name,
        email=item.email,
        plan=item.plan,
        status=item.status,
        created_at=item.created_at,
        # Tenants created before billing periods: their sign-up is the anchor.
        period_anchor=item.period_anchor or item.created_at,
        signing_secret=optional_from(item.signing_secret),
        signing_secret_created_at=item.signing_secret_created_at,
        previous_signing_secret=optional_from(item.previous_signing_secret),
        previous_valid_until=item.previous_valid_until,
        rate_limit=_int_or_none(item.rate_limit),
        quota_limit=_int_or_none(item.quota_limit),
        paid_until=item.paid_until,
        period_end=item.period_end,
        billing_status=item.billing_status,
        subscription=item.subscription,
        sessions_valid_from=item.sessions_valid_from,
    )


def profile_item(table: Table, profile: TenantProfile) -> TenantItem:
    return table[TenantItem](
        tenant_pk(profile.tenant_id),
        "PROFILE",
        tenant_id=profile.tenant_id,
        name=profile.name,
        email=profile.email,
        plan=profile.plan,
        status=profile.status,
        created_at=profile.created_at,
        period_anchor=profile.period_anchor,
        signing_secret=optional_to(profile.signing_secret),
        signing_secret_created_at=profile.signing_secret_created_at,
        previous_signing_secret=optional_to(profile.previous_signing_secret),
        previous_valid_until=profile.previous_valid_until,
        rate_limit=profile.rate_limit,
        quota_limit=profile.quota_limit,
        paid_until=profile.paid_until,
        period_end=profile.period_end,
        billing_status=profile.billing_status,
        subscription=profile.subscription,
    )


def provider_from(item: ProviderItem) -> StoredProvider:
    return StoredProvider(
        provider=item.provider,
        priority=int(item.priority),
        api_key=from_attribute(item.api_key),
        last_four=item.last_four,
        added_at=item.added_at,
        account_token=optional_from(item.account_token),
        webhook_secret=optional_from(item.webhook_secret),
    )


def provider_item(table: Table, tenant_id: str, provider: StoredProvider) -> ProviderItem:
    return table[ProviderItem](
        tenant_pk(tenant_id),
        provider_sk(provider.provider),
        provider=provider.provider,
        priority=provider.priority,
        api_key=to_attribute(provider.api_key),
        last_four=provider.last_four,
        added_at=provider.added_at,
        account_token=optional_to(provider.account_token),
        webhook_secret=optional_to(provider.webhook_secret),
    )


def domain_from(item: DomainItem) -> SendingDomain:
    return SendingDomain(
        domain=item.domain,
        created_at=item.created_at,
        providers=tuple(
            ProviderDomain(
                provider=entry.provider,
                provider_domain_id=entry.provider_domain_id,
                verified=bool(entry.verified),
                records=tuple(
                    DnsRecord(
                        type=record.type,
                        host=record.host,
                        value=record.value,
                        purpose=record.purpose or "",
                        priority=_int_or_none(record.priority),
                        status=record.status,
                    )
                    for record in entry.records or []
                ),
                error=entry.error,
            )
            for entry in item.providers or []
        ),
    )


def domain_item(table: Table, tenant_id: str, domain: SendingDomain) -> DomainItem:
    return table[DomainItem](
        tenant_pk(tenant_id),
        domain_sk(domain.domain),
        domain=domain.domain,
        created_at=domain.created_at,
        providers=[
            ProviderDomainAttribute(
                provider=entry.provider,
                provider_domain_id=entry.provider_domain_id,
                verified=entry.verified,
                error=entry.error,
                records=[
                    DnsRecordAttribute(
                        type=r.type,
                        host=r.host,
                        value=r.value,
                        purpose=r.purpose,
                        priority=r.priority,
                        status=r.status,
                    )
                    for r in entry.records
                ],
            )
            for entry in domain.providers
        ],
    )


# ---------------------------------------------------------------- sealed secrets


def to_attribute(sealed: SealedSecret) -> SealedAttribute:
    record = sealed_record(sealed)
    return SealedAttribute(
        version=record["version"],
        wrapped_key=record["wrappedKey"],
        nonce=record["nonce"],
        ciphertext=record["ciphertext"],
    )


def from_attribute(sealed: SealedAttribute) -> SealedSecret:
    return sealed_secret(sealed.version, sealed.wrapped_key, sealed.nonce, sealed.ciphertext)


def optional_from(sealed: SealedAttribute | None) -> SealedSecret | None:
    return None if sealed is None else from_attribute(sealed)


def optional_to(sealed: SealedSecret | None) -> SealedAttribute | None:
    return None if sealed is None else to_attribute(sealed)


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


# ---------------------------------------------------------------- a request's document


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
            "unsubscribe": _unsubscribe_field(notification.unsubscribe_topic),
            "attachments": [_attachment_fields(item) for item in notification.stored_attachments()] or None,
            "template": _template_fields(notification.template),
        }
    else:
        fields = {"url": notification.url, "method": notification.method, **_headers_fields(notification)}
        fields |= {
            "payload": dict(notification.payload),
            **options,
            "delivery": _delivery_fields(notification),
        }
    return {name: value for name, value in fields.items() if value is not None}


def request_from_document(channel: Channel, document: Mapping[str, Any]) -> NotificationRequest:
    """The request of a stored or queued document; KeyError, TypeError or ValueError when it is not one."""
    notification: Notification
    if channel is Channel.EMAIL:
        notification = EmailNotification(
            to=str(document["to"]),
            subject=str(document["subject"]),
            body=str(document["body"]),
            text=_optional(document, "text"),
            sender=_optional(document, "from"),
            reply_to=_optional(document, "replyTo"),
            provider=_provider(document, "provider"),
            fallback=_provider(document, "fallback"),
            unsubscribe_topic=_unsubscribe_topic(document),
            attachments=tuple(_attachment_from(item) for item in document.get("attachments") or ()),
            template=_template_from(document.get("template")),
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
            delivery=_delivery_from(document.get("delivery")),
        )
    priority = document.get("priority")
    return NotificationRequest(
        notification,
        priority=int(priority) if priority is not None else None,
        idempotency_key=_optional(document, "idempotencyKey"),
        send_at=_optional(document, "sendAt"),
        ordering_key=_optional(document, "orderingKey"),
    )


def fingerprint(request: NotificationRequest) -> str:
    """What tells two requests under one idempotency key apart (409 for the same, 422 otherwise): the
    hash of the request's document without its key."""
    document = {name: value for name, value in request_document(request).items() if name != "idempotencyKey"}
    return hashlib.sha256(request.channel.value.encode() + b"\n" + compact_json(document)).hexdigest()


def _delivery_fields(webhook: WebhookNotification) -> dict[str, Any] | None:
    ref = webhook.delivery
    if ref is None:
        return None
    fields: dict[str, Any] = {
        "eventId": ref.event_id,
        "subscriptionId": ref.subscription_id,
        "eventType": ref.event_type,
    }
    if ref.rate_limit_per_second is not None:
        fields["rateLimitPerSecond"] = ref.rate_limit_per_second
    return fields


def _delivery_from(fields: object) -> DeliveryRef | None:
    if not isinstance(fields, Mapping):
        return None
    rate = fields.get("rateLimitPerSecond")
    return DeliveryRef(
        str(fields["eventId"]),
        str(fields["subscriptionId"]),
        str(fields["eventType"]),
        int(rate) if rate is not None else None,
    )


def _attachment_fields(attachment: Attachment) -> dict[str, Any]:
    """A reference to a stored attachment; its content stays in the bucket."""
    return {
        "filename": attachment.filename,
        "contentType": attachment.content_type,
        "size": attachment.size,
        "sha256": attachment.sha256,
        "key": attachment.key,
    }


def _attachment_from(fields: Mapping[str, Any]) -> Attachment:
    return Attachment(
        filename=str(fields["filename"]),
        content_type=str(fields["contentType"]),
        size=int(fields["size"]),
        sha256=str(fields["sha256"]),
        key=str(fields["key"]),
    )


def _template_fields(use: TemplateUse | None) -> dict[str, Any] | None:
    """The template a job used (its id and version); a request not rendered yet also carries its
    data, so that two requests under one idempotency key compare by what the client sent."""
    if use is None:
        return None
    fields: dict[str, Any] = {"id": use.template_id, "version": use.version}
    return fields if use.rendered else fields | {"data": dict(use.data or {})}


def _template_from(fields: object) -> TemplateUse | None:
    if not isinstance(fields, Mapping):
        return None
    version = fields.get("version")
    return TemplateUse(str(fields["id"]), int(version) if version is not None else None)


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


def _unsubscribe_field(topic: str | None) -> dict[str, str] | None:
    return None if topic is None else {"topic": topic}


def _unsubscribe_topic(document: Mapping[str, Any]) -> str | None:
    unsubscribe = document.get("unsubscribe")
    if unsubscribe is None:
        return None
    if not isinstance(unsubscribe, Mapping):
        raise TypeError("an email's unsubscribe is a JSON object")
    return str(unsubscribe["topic"])


def _optional(document: Mapping[str, Any], name: str) -> str | None:
    value = document.get(name)
    return None if value is None else str(value)


def _provider(document: Mapping[str, Any], name: str) -> ProviderName | None:
    value = document.get(name)
    return None if value is None else ProviderName(value)
