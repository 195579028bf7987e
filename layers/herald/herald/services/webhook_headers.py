"""A webhook's custom headers are a secret of the tenant's: sealed at acceptance, before the job is
stored or queued, and opened only where they are sent or shown (the values, often a receiver's
credentials, never rest in clear in the table or a queue)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from msgspec.structs import replace

from herald.domain.jobs import compact_json
from herald.domain.notifications import NotificationRequest, SealedHeaders, WebhookNotification
from herald.domain.secrets import Purpose

if TYPE_CHECKING:
    from herald.services.ports.platform import SecretBox


def sealed(secrets: SecretBox, tenant_id: str, request: NotificationRequest) -> NotificationRequest:
    """The request as it is stored and queued: a webhook's header values sealed together."""
    clear = request.clear_headers
    if clear is None:
        return request
    headers = sealed_headers(secrets, tenant_id, clear)
    return replace(request, notification=replace(request.notification, headers=headers))


def sealed_headers(secrets: SecretBox, tenant_id: str, clear: Mapping[str, str]) -> SealedHeaders:
    """Header values sealed together, their names in clear (a webhook job's, a subscription's)."""
    values = compact_json(dict(clear)).decode()
    return SealedHeaders(tuple(clear), secrets.seal(tenant_id, Purpose.WEBHOOK_HEADERS, values))


def opened(secrets: SecretBox, tenant_id: str, webhook: WebhookNotification) -> WebhookNotification:
    """The webhook with its headers in clear (``SecretTampered`` when they are not this tenant's)."""
    headers = webhook.headers
    if not isinstance(headers, SealedHeaders):
        return webhook
    return replace(webhook, headers=opened_headers(secrets, tenant_id, headers))


def opened_headers(secrets: SecretBox, tenant_id: str, headers: SealedHeaders) -> dict[str, str]:
    """Sealed header values in clear (``SecretTampered`` when they are not this tenant's)."""
    values = json.loads(secrets.open(tenant_id, Purpose.WEBHOOK_HEADERS, headers.sealed))
    return {str(name): str(value) for name, value in values.items()}
