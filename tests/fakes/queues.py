"""In-memory queue and dead-letter queue that keep what was sent as SQS would carry it, and the
alert topic."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from herald.adapters.dead_letters import letter_document
from herald.adapters.queueing import decode_message, encode_message
from herald.domain.alerts import JobAlert
from herald.domain.dead_letters import FailedJobCopy, HeldMessage, UnreadableMessage
from herald.domain.job_records import JobMessage
from herald.domain.jobs import QueuePriority


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
        enqueued = Enqueued(decode_message(encode_message(message)), priority, delay_seconds)
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

    def send(self, letter: FailedJobCopy | UnreadableMessage) -> None:
        if self.failure is not None:
            raise self.failure
        self.records.append(json.loads(json.dumps(letter_document(letter), default=str)))


class FakeReturns:
    """Records the (queue name, receipt handle) of every message put back early, and of every
    message held in flight with its seconds."""

    def __init__(self) -> None:
        self.returned: list[tuple[str, str]] = []
        self.held: list[tuple[str, str, int]] = []

    def hold(self, queue_name: str, receipt_handle: str, seconds: int) -> None:
        self.held.append((queue_name, receipt_handle, seconds))

    def return_now(self, messages: Sequence[tuple[str, str]]) -> None:
        self.returned.extend(messages)


class FakeAlerts:
    """The job alerts a test's engine or sweeper raised, in order."""

    def __init__(self) -> None:
        self.sent: list[JobAlert] = []

    def dead_lettered(self, alert: JobAlert) -> None:
        self.sent.append(alert)


class FakeTopic:
    """The alert topic: what was published to it, in order; ``failure`` is raised instead when set."""

    def __init__(self) -> None:
        self.published: list[tuple[str, dict[str, Any]]] = []
        self.failure: Exception | None = None

    def publish(self, subject: str, message: dict[str, Any]) -> None:
        if self.failure is not None:
            raise self.failure
        self.published.append((subject, message))

    def types(self) -> list[str]:
        return [message["type"] for _, message in self.published]


class FakeDeadLetterInbox:
    """The dead-letter queue as the operator's desk sees it: held messages can be deleted or released."""

    def __init__(self) -> None:
        self.waiting: dict[str, HeldMessage] = {}
        self.held: set[str] = set()
        self.deleted: list[str] = []

    def put(
        self, message_id: str, body: dict[str, Any] | str, sent_at: str = "2026-11-30T12:00:00.000Z"
    ) -> None:
        text = body if isinstance(body, str) else json.dumps(body)
        self.waiting[message_id] = HeldMessage(message_id, f"receipt-{message_id}", text, sent_at)

    def take(self, limit: int | None, hold_seconds: int) -> list[HeldMessage]:
        visible = [message for message_id, message in self.waiting.items() if message_id not in self.held]
        taken = visible if limit is None else visible[:limit]
        self.held.update(message.message_id for message in taken)
        return taken

    def delete(self, message: HeldMessage) -> None:
        del self.waiting[message.message_id]
        self.held.discard(message.message_id)
        self.deleted.append(message.message_id)

    def release(self, messages: list[HeldMessage]) -> None:
        self.held.difference_update(message.message_id for message in messages)
