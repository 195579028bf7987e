"""Job vocabulary shared by the API and the workers: channels, statuses, priorities, and the one
serialisation of payloads."""

from __future__ import annotations

import json
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
    # Waiting for its sendAt (only jobs that asked for one); it becomes pending when dispatched.
    SCHEDULED = "scheduled"
    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    # A scheduled job its tenant cancelled before its dispatch: never sent, not counted.
    CANCELLED = "cancelled"


# The outcomes of delivery (the day counters count them).
FINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED})
# Every status a job ends in: each has its own gsi2 partition, written once, at the end.
ENDED_STATUSES = FINAL_STATUSES | {JobStatus.CANCELLED}

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
