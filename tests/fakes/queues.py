"""In-memory queue and dead-letter queue that keep what was sent as SQS would carry it."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from herald.domain.alerts import JobAlert
from herald.domain.jobs import JobMessage, QueuePriority


@dataclass(frozen=True)
class Enqueued:
    message: JobMessage
    priority: QueuePriority
    delay_seconds: int


class FakeQueue:
    """Records what was enqueued, after a trip through the wire format."""

    def __init__(self) -> None:
        self.sent: deque[Enqueued] = deque()
        self.failure: Exception | None = None
        # Runs after each send: a test plays SQS delivering the message at once.
        self.after_enqueue: Callable[[Enqueued], None] | None = None

    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None:
        if self.failure is not None:
            raise self.failure
        enqueued = Enqueued(JobMessage.from_json(message.to_json()), priority, delay_seconds)
        self.sent.append(enqueued)
        if self.after_enqueue is not None:
            self.after_enqueue(enqueued)

    def take(self) -> Enqueued:
        return self.sent.popleft()


class FakeDeadLetters:
    """Keeps each record as the SQS body would carry it (JSON, non-JSON values as strings)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.failure: Exception | None = None

    def send(self, record: dict[str, Any]) -> None:
        if self.failure is not None:
            raise self.failure
        self.records.append(json.loads(json.dumps(record, default=str)))


class FakeAlerts:
    """The job alerts a test's engine or sweeper raised, in order."""

    def __init__(self) -> None:
        self.sent: list[JobAlert] = []

    def dead_lettered(self, alert: JobAlert) -> None:
        self.sent.append(alert)
