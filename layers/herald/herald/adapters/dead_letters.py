"""The operator's view of undeliverable jobs: an enriched copy in the dead-letter queue."""

from __future__ import annotations

import json
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from herald.adapters import aws_clients
from herald.domain.errors import DependencyError

REDACTED = "[redacted]"


class DeadLetters(Protocol):
    def send(self, record: dict[str, Any]) -> None: ...


def redact_payload(payload: dict[str, Any] | None) -> dict[str, Any] | None:
    """Custom webhook headers often carry the receiver's credentials: keep their names only."""
    if not payload or "headers" not in payload:
        return payload
    headers = payload.get("headers") or {}
    return {**payload, "headers": dict.fromkeys(headers, REDACTED)}


class SqsDeadLetters:
    def __init__(self, queue_url: str) -> None:
        self._queue_url = queue_url

    def send(self, record: dict[str, Any]) -> None:
        try:
            aws_clients.sqs().send_message(
                QueueUrl=self._queue_url, MessageBody=json.dumps(record, default=str)
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc
