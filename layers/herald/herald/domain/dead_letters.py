"""What the dead-letter queue holds, as an operator reads it.

Three kinds of message end up there: the enriched copy a worker (or the sweeper) writes when a job
fails for a reason an operator can act on; a job message SQS itself moved there after it crashed
its worker ``maxReceiveCount`` times; and a message no worker could read at all.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import msgspec

from herald.domain.job_records import JobMessage
from herald.domain.notifications import NotificationRequest


class FailedJobCopy(msgspec.Struct, frozen=True):
    """The operator's copy of a job that failed for a reason an operator can act on: enough to
    understand it and to redrive it."""

    message: JobMessage
    request: NotificationRequest | None
    reason: str
    attempts: int
    max_attempts: int
    failed_at: str


class UnreadableMessage(msgspec.Struct, frozen=True):
    """A queue message no worker can read: it goes to the operator instead of looping."""

    message_id: str
    reason: str
    body: str


class LetterKind(StrEnum):
    COPY = "copy"
    REDRIVEN = "redriven"
    # A page of an event's fan-out that failed on every receive (``herald.domain.events.FanoutPage``).
    FANOUT = "fanout"
    UNREADABLE = "unreadable"


class HeldMessage(msgspec.Struct, frozen=True):
    """A dead-letter message received and held invisible until deleted or released."""

    message_id: str
    receipt: str
    body: str
    sent_at: str


class DeadLetter(msgspec.Struct, frozen=True):
    message_id: str
    kind: LetterKind
    job_id: str | None
    tenant_id: str | None
    channel: str | None
    attempts: int | None
    error: str | None
    # When the job failed (a copy), else when SQS received the message.
    at: str
    body: Any
    # A fan-out page's event.
    event_id: str | None = None

    def summary(self) -> dict[str, Any]:
        event = {} if self.event_id is None else {"eventId": self.event_id}
        return {
            **event,
            "messageId": self.message_id,
            "kind": self.kind.value,
            "jobId": self.job_id,
            "tenantId": self.tenant_id,
            "type": self.channel,
            "attempts": self.attempts,
            "error": self.error,
            "at": self.at,
        }

    def document(self) -> dict[str, Any]:
        return {**self.summary(), "body": self.body}

    def matches(self, ident: str) -> bool:
        return ident in (self.job_id, self.message_id, self.event_id)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_dead_letter(held: HeldMessage) -> DeadLetter:
    try:
        body: Any = json.loads(held.body)
    except ValueError:
        body = held.body
    if isinstance(body, dict) and {"event_id", "tenant_id", "last"} <= body.keys():
        return DeadLetter(
            held.message_id,
            LetterKind.FANOUT,
            None,
            str(body["tenant_id"]),
            "fanout",
            None,
            "its fan-out page failed on every delivery of this message",
            held.sent_at,
            body,
            event_id=str(body["event_id"]),
        )
    if not isinstance(body, dict) or "jobId" not in body or "tenantId" not in body:
        error = body.get("error") if isinstance(body, dict) else None
        return DeadLetter(
            held.message_id, LetterKind.UNREADABLE, None, None, None, None, _text(error), held.sent_at, body
        )
    is_copy = "failedAt" in body
    return DeadLetter(
        message_id=held.message_id,
        kind=LetterKind.COPY if is_copy else LetterKind.REDRIVEN,
        job_id=str(body["jobId"]),
        tenant_id=str(body["tenantId"]),
        channel=_text(body.get("type")),
        attempts=_int(body.get("attempts") if is_copy else body.get("seenAttempts")),
        error=_text(body.get("error")) if is_copy else "its worker crashed on every delivery of this message",
        at=str(body["failedAt"]) if is_copy else held.sent_at,
        body=body,
    )
