"""Job vocabulary shared by the API and the workers: statuses, types, priorities, queue messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from herald.settings import Channel, QueuePriority


class JobStatus(StrEnum):
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


DEFAULT_PRIORITY = 5
LOWEST_PRIORITY = 10


def queue_priority(priority: int) -> QueuePriority:
    """The SDK sends 1 (high), 5 (normal) or 10 (low); values between fall into the nearest band."""
    if priority <= 3:
        return QueuePriority.CRITICAL
    if priority <= 7:
        return QueuePriority.NORMAL
    return QueuePriority.LOW


# Inline payloads spare the worker a read; larger ones (long emails) are read from the table.
# SQS accepts 256 KiB per message by default; leave room for the envelope fields.
INLINE_PAYLOAD_LIMIT = 200 * 1024


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

    def to_json(self) -> str:
        body: dict[str, Any] = {
            "v": 1,
            "jobId": self.job_id,
            "tenantId": self.tenant_id,
            "type": self.channel.value,
            "plan": self.plan,
            "seenAttempts": self.seen_attempts,
        }
        encoded_payload = json.dumps(self.payload, separators=(",", ":"))
        if len(encoded_payload.encode()) <= INLINE_PAYLOAD_LIMIT:
            body["payload"] = self.payload
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> JobMessage:
        """Raises ValueError, KeyError or TypeError for a body no worker can use."""
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("a job message must be a JSON object")
        if body.get("v") != 1:
            raise ValueError(f"unsupported job message version {body.get('v')!r}")
        payload = body.get("payload")
        if payload is not None and not isinstance(payload, dict):
            raise ValueError("a job message payload must be a JSON object")
        return cls(
            job_id=str(body["jobId"]),
            tenant_id=str(body["tenantId"]),
            channel=Channel(body["type"]),
            plan=str(body["plan"]),
            seen_attempts=int(body["seenAttempts"]),
            payload=payload,
        )
