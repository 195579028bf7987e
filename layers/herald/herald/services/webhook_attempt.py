"""One attempt at a webhook: the stored request, signed with the tenant's secrets, sent once
through the SSRF-safe sender (design.md rule 9)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import herald
from herald.adapters.vault import SecretTampered
from herald.adapters.webhook_sender import OutboundWebhook, WebhookOutcome, send_webhook
from herald.domain.attempts import AttemptOutcome
from herald.domain.errors import DependencyError
from herald.http.requests import compact_json
from herald.services.tenant_directory import TenantDirectory
from herald.settings import Settings

USER_AGENT = f"Herald/{herald.__version__}"


class WebhookAttempt:
    def __init__(
        self,
        settings: Settings,
        directory: TenantDirectory,
        sender: Callable[..., WebhookOutcome] = send_webhook,
    ) -> None:
        self._settings = settings
        self._directory = directory
        self._send = sender

    def run(self, job_id: str, tenant_id: str, payload: dict[str, Any]) -> AttemptOutcome:
        try:
            secrets = self._directory.signing_secrets(tenant_id)
        except DependencyError as exc:
            return AttemptOutcome(delivered=False, error_message=f"signing secret unavailable: {exc}")
        except SecretTampered:
            return AttemptOutcome(
                delivered=False, error_message="the signing secret cannot be decrypted", final=True
            )
        hook = OutboundWebhook(
            job_id=job_id,
            url=payload["url"],
            method=payload.get("method", "POST"),
            headers=payload.get("headers") or {},
            body=compact_json(payload["payload"]),
        )
        result = self._send(
            hook,
            secrets=secrets,
            local_origin=self._settings.local_webhook_origin,
            user_agent=USER_AGENT,
        )
        return AttemptOutcome(
            delivered=result.ok,
            error_message=None if result.ok else result.error_message,
            final=result.error_class == "permanent",
            retry_after_seconds=result.retry_after_seconds,
            response_status=result.status_code,
            response_body=result.body_excerpt or None,
        )
