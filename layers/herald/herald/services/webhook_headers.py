"""A webhook's custom headers are a secret of the tenant's: sealed at acceptance, before the job is
stored or queued, and opened only where they are sent or shown (the values, often a receiver's
credentials, never rest in clear in the table or a queue)."""

from __future__ import annotations

import json
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
    values = compact_json(dict(clear)).decode()
    headers = SealedHeaders(tuple(clear), secrets.seal(tenant_id, Purpose.WEBHOOK_HEADERS, values))
    return replace(request, notification=replace(request.notification, headers=headers))


def opened(secrets: SecretBox, tenant_id: str, webhook: WebhookNotification) -> WebhookNotification:
    """The webhook with its headers in clear (``SecretTampered`` when they are not this tenant's)."""
    headers = webhook.headers
    if not isinstance(headers, SealedHeaders):
        return webhook
    values = json.loads(secrets.open(tenant_id, Purpose.WEBHOOK_HEADERS, headers.sealed))
    return replace(webhook, headers={str(name): str(value) for name, value in values.items()})
