"""Job vocabulary shared by the API and the workers: channels, statuses, priorities, queue messages,
and the one serialisation of payloads."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Channel(StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"


class QueuePriority(StrEnum):
    CRITICAL = "critical"
    NORMAL = "normal"
    LOW = "low"


class JobStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


FINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED})

# The NotifyKit SDK's priorities: 1 high, 5 normal, 10 low. Nothing else is accepted.
HIGH_PRIORITY = 1
DEFAULT_PRIORITY = 5
LOWEST_PRIORITY = 10
PRIORITY_QUEUES: dict[int, QueuePriority] = {
    HIGH_PRIORITY: QueuePriority.CRITICAL,
    DEFAULT_PRIORITY: QueuePriority.NORMAL,
    LOWEST_PRIORITY: QueuePriority.LOW,
}


def queue_priority(priority: int) -> QueuePriority:
    """The queue of an accepted priority; a stored value from before the strict rule falls into the
    nearest band."""
    if priority in PRIORITY_QUEUES:
        return PRIORITY_QUEUES[priority]
    if priority < DEFAULT_PRIORITY:
        return QueuePriority.CRITICAL
    return QueuePriority.NORMAL if priority < LOWEST_PRIORITY else QueuePriority.LOW


def compact_json(value: Any) -> bytes:
    """The one serialisation of payloads: what is hashed, stored, signed and sent."""
    return json.dumps(
        value, separators=(",", ":"), ensure_ascii=False, sort_keys=False, allow_nan=False
    ).encode()


# Inline payloads spare the worker a read; larger ones (long emails) are read from the table.
# SQS accepts 256 KiB per message by default; leave room for the envelope fields.
INLINE_PAYLOAD_LIMIT = 200 * 1024
MESSAGE_VERSION = 1


@dataclass(frozen=True)
class JobMessage:
    """The SQS message body of a job: enough to claim and deliver it without reading the table."""

    job_id: str
    tenant_id: str
    channel: Channel
    plan: str
    # The job's `attempts` value when this message was sent; the claim is guarded by it.
    seen_attempts: int
    payload: dict[str, Any] | None
    priority: int = DEFAULT_PRIORITY
    created_at: str | None = None
    # The request (or sweep) that queued the job: its log lines and the workers' share this id.
    correlation_id: str | None = None

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
        # Measured as the message carries it (JSON with ASCII escapes), which is what SQS counts.
        if (
            self.payload is not None
            and len(json.dumps(self.payload, separators=(",", ":"))) <= INLINE_PAYLOAD_LIMIT
        ):
            body["payload"] = self.payload
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> JobMessage:
        """Raises ValueError, KeyError or TypeError for a body no worker can use."""
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("a job message must be a JSON object")
        if body.get("v") != MESSAGE_VERSION:
            raise ValueError(f"unsupported job message version {body.get('v')!r}")
        payload = body.get("payload")
        if payload is not None and not isinstance(payload, dict):
            raise ValueError("a job message payload must be a JSON object")
        created_at = body.get("createdAt")
        correlation = body.get("correlationId")
        return cls(
            job_id=str(body["jobId"]),
            tenant_id=str(body["tenantId"]),
            channel=Channel(body["type"]),
            plan=str(body["plan"]),
            seen_attempts=int(body["seenAttempts"]),
            payload=payload,
            priority=int(body.get("priority", DEFAULT_PRIORITY)),
            created_at=str(created_at) if created_at is not None else None,
            correlation_id=str(correlation) if correlation is not None else None,
        )
