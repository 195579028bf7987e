"""The SQS message of a job: enough to claim and deliver it without reading the table."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from herald.domain.jobs import DEFAULT_PRIORITY, Channel
from herald.domain.notifications import NotificationRequest, request_document, request_from_document

# Inline requests spare the worker a read; larger ones (long emails) are read from the table.
# SQS accepts 256 KiB per message by default; leave room for the envelope fields.
INLINE_PAYLOAD_LIMIT = 200 * 1024
MESSAGE_VERSION = 1


class JobMessage(msgspec.Struct, frozen=True):
    job_id: str
    tenant_id: str
    channel: Channel
    plan: str
    # The job's `attempts` value when this message was sent; the claim is guarded by it.
    seen_attempts: int
    # The accepted request when the message carries it; None: the worker reads it from the table.
    request: NotificationRequest | None
    priority: int = DEFAULT_PRIORITY
    created_at: str | None = None
    # The request (or sweep) that queued the job: its log lines and the workers' share this id.
    correlation_id: str | None = None
    # A scheduled job's time: no worker starts it before then (the dispatcher's delay should see to it).
    send_at: str | None = None
    # A keyed job travels in its channel's FIFO queue, in the message group of its tenant and key.
    ordering_key: str | None = None

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "v": MESSAGE_VERSION,
            "jobId": self.job_id,
            "tenantId": self.tenant_id,
            "type": self.channel.value,
            "plan": self.plan,
            "seenAttempts": self.seen_attempts,
            "priority": self.priority,
        }
        if self.created_at is not None:
            body["createdAt"] = self.created_at
        if self.correlation_id is not None:
            body["correlationId"] = self.correlation_id
        if self.send_at is not None:
            body["sendAt"] = self.send_at
        if self.ordering_key is not None:
            body["orderingKey"] = self.ordering_key
        if self.request is not None:
            document = request_document(self.request)
            # Measured as the message carries it (JSON with ASCII escapes), which is what SQS counts.
            if len(json.dumps(document, separators=(",", ":"))) <= INLINE_PAYLOAD_LIMIT:
                body["payload"] = document
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> JobMessage:
        """Raises ValueError, KeyError or TypeError for a body no worker can use."""
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("a job message must be a JSON object")
        if body.get("v") != MESSAGE_VERSION:
            raise ValueError(f"unsupported job message version {body.get('v')!r}")
        channel = Channel(body["type"])
        document = body.get("payload")
        if document is not None and not isinstance(document, dict):
            raise ValueError("a job message payload must be a JSON object")
        created_at = body.get("createdAt")
        correlation = body.get("correlationId")
        send_at = body.get("sendAt")
        ordering_key = body.get("orderingKey")
        return cls(
            job_id=str(body["jobId"]),
            tenant_id=str(body["tenantId"]),
            channel=channel,
            plan=str(body["plan"]),
            seen_attempts=int(body["seenAttempts"]),
            request=request_from_document(channel, document) if document is not None else None,
            priority=int(body.get("priority", DEFAULT_PRIORITY)),
            created_at=str(created_at) if created_at is not None else None,
            correlation_id=str(correlation) if correlation is not None else None,
            send_at=str(send_at) if send_at is not None else None,
            ordering_key=str(ordering_key) if ordering_key is not None else None,
        )
