"""The delivery engine: claim a job, run one attempt, record it, and retry, finish or dead-letter
(design.md rules 2-5).

At-least-once in, at-most-once out: SQS may deliver a message twice, but only the worker whose
conditional claim succeeds sends. A retry is a delayed re-send of the message (SQS DelaySeconds),
so the queue's receive count only grows when a worker crashes and the redrive policy stays the
safety net for poison messages.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from herald.adapters.dead_letters import DeadLetters, redact_payload
from herald.adapters.queueing import JobQueue
from herald.adapters.store.delivery_store import AttemptRecord, DeliveryStore
from herald.adapters.store.models import JobState
from herald.domain.attempts import AttemptOutcome
from herald.domain.backoff import retry_delay
from herald.domain.clock import now_iso
from herald.domain.jobs import JobMessage, JobStatus, queue_priority
from herald.observability import logger, metrics
from herald.settings import Settings

# A claim outlives the worker's own timeout, and ends before SQS makes the message visible again
# (visibility timeout = 6 x the worker timeout), so a crashed attempt is picked up by the redelivery.
LEASE_SECONDS = 120


# Runs one attempt of a claimed job on its channel (email pass over providers, or one webhook POST).
ChannelAttempt = Callable[[JobMessage, dict[str, Any], JobState], AttemptOutcome]


class AttemptNotReleased(Exception):
    """A re-send arrived before the attempt that sent it was released: SQS must deliver it again."""


@dataclass(frozen=True)
class Handled:
    """What happened to one message (for logs, metrics and tests)."""

    job_id: str
    result: str  # "completed", "retrying", "failed", "duplicate", "lost-lease"
    attempt: int | None = None
    delay_seconds: int | None = None


class DeliveryEngine:
    def __init__(
        self,
        settings: Settings,
        *,
        store: DeliveryStore,
        queue: JobQueue,
        dead_letters: DeadLetters,
        attempt: ChannelAttempt,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._settings = settings
        self._store = store
        self._queue = queue
        self._dead_letters = dead_letters
        self._attempt = attempt
        self._clock = clock

    def handle(self, message: JobMessage) -> Handled:
        state = self._store.claim(
            message.tenant_id,
            message.job_id,
            seen_attempts=message.seen_attempts,
            now=int(self._clock()),
            lease_seconds=LEASE_SECONDS,
            started_at=now_iso(),
        )
        if state is None:
            return self._not_claimed(message)
        payload = message.payload or self._store.payload(message.tenant_id, message.job_id)
        attempt = int(state.attempts)
        outcome = self._attempt(message, payload, state)
        record = AttemptRecord(
            log_id=str(uuid.uuid4()),
            attempt=attempt,
            succeeded=outcome.delivered,
            used_provider=outcome.used_provider,
            error_message=outcome.error_message,
            created_at=now_iso(),
            tried=outcome.tried,
            response_status=outcome.response_status,
            response_body=outcome.response_body,
        )
        if outcome.delivered:
            return self._complete(message, record)
        if outcome.final or attempt >= int(state.max_attempts):
            return self._fail(message, state, payload, record)
        return self._retry(message, state, record, outcome)

    def _complete(self, message: JobMessage, record: AttemptRecord) -> Handled:
        if not self._store.complete(message.tenant_id, message.job_id, record):
            return self._lost_lease(message, record)
        metrics.add_metric(name="Delivered", unit="Count", value=1)
        return Handled(message.job_id, "completed", record.attempt)

    def _retry(
        self, message: JobMessage, state: JobState, record: AttemptRecord, outcome: AttemptOutcome
    ) -> Handled:
        delay = retry_delay(
            record.attempt, self._settings.retry_base_delay_seconds, outcome.retry_after_seconds
        )
        skip: list[str] = sorted({*(state.skip_providers or []), *outcome.skip_providers})
        # Re-send first: if it fails, this message is redelivered after the visibility timeout
        # and re-claims the job through its expired lease, so the retry is never lost.
        self._queue.enqueue(
            replace(message, seen_attempts=record.attempt), queue_priority(int(state.priority)), delay
        )
        reason = outcome.error_message or "delivery failed"
        if not self._store.release_for_retry(message.tenant_id, message.job_id, record, reason, skip):
            return self._lost_lease(message, record)
        metrics.add_metric(name="RetryScheduled", unit="Count", value=1)
        return Handled(message.job_id, "retrying", record.attempt, delay)

    def _fail(
        self, message: JobMessage, state: JobState, payload: dict[str, Any], record: AttemptRecord
    ) -> Handled:
        reason = record.error_message or "delivery failed"
        # The operator's copy first: if it cannot be written, the job stays claimed and this
        # message comes back, instead of a FAILED job with no trace in the dead-letter queue.
        self._dead_letter(message, state, payload, reason, record.attempt)
        if not self._store.fail(message.tenant_id, message.job_id, record, reason):
            return self._lost_lease(message, record)
        return Handled(message.job_id, "failed", record.attempt)

    def _not_claimed(self, message: JobMessage) -> Handled:
        """Someone else owns the job or it is finished, unless its last attempt crashed."""
        current = self._store.current(message.tenant_id, message.job_id)
        if current is not None and self._sent_by_running_attempt(message, current):
            raise AttemptNotReleased(message.job_id)
        crashed = (
            current is not None
            and current.status == JobStatus.PROCESSING
            and (current.lease_until or 0) < self._clock()
            and int(current.attempts) >= int(current.max_attempts)
        )
        if current is None or not crashed:
            logger.info("duplicate or stale message ignored", extra={"job_id": message.job_id})
            return Handled(message.job_id, "duplicate")
        record = AttemptRecord(
            log_id=str(uuid.uuid4()),
            attempt=int(current.attempts),
            succeeded=False,
            used_provider=None,
            error_message="the worker stopped during the last attempt",
            created_at=now_iso(),
            tried=[],
        )
        payload = message.payload or self._store.payload(message.tenant_id, message.job_id)
        return self._fail(message, current, payload, record)

    def _sent_by_running_attempt(self, message: JobMessage, current: JobState) -> bool:
        """Only ``_retry`` of attempt N sends ``seen_attempts`` N; while N still holds its lease, the
        re-send overtook the release (a slow write, a short delay). Dropping it would strand the job."""
        return (
            current.status == JobStatus.PROCESSING
            and int(current.attempts) == message.seen_attempts
            and (current.lease_until or 0) >= self._clock()
        )

    def _lost_lease(self, message: JobMessage, record: AttemptRecord) -> Handled:
        logger.warning(
            "job changed while delivering; outcome not recorded",
            extra={"job_id": message.job_id, "attempt": record.attempt},
        )
        return Handled(message.job_id, "lost-lease", record.attempt)

    def _dead_letter(
        self, message: JobMessage, state: JobState, payload: dict[str, Any], reason: str, attempts: int
    ) -> None:
        self._dead_letters.send(
            {
                "jobId": message.job_id,
                "tenantId": message.tenant_id,
                "type": message.channel.value,
                "error": reason,
                "attempts": attempts,
                "maxAttempts": int(state.max_attempts),
                "failedAt": now_iso(),
                "createdAt": state.created_at,
                "payload": redact_payload(payload),
            }
        )
        metrics.add_metric(name="DeadLettered", unit="Count", value=1)
