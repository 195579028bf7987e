"""The delivery engine: claim a job, run one attempt on its channel, record it, and retry, finish or
dead-letter.

At-least-once in, at-most-once out: SQS may deliver a message twice, but only the worker whose
conditional claim succeeds sends. A retry is a delayed re-send of the message (SQS DelaySeconds),
so the queue's receive count only grows when a worker crashes and the redrive policy stays the
safety net for poison messages. DynamoDB per delivered message: 2 small writes (claim, outcome).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

import msgspec
from msgspec.structs import replace

from herald.domain.alerts import JobAlert
from herald.domain.attempts import AttemptOutcome
from herald.domain.backoff import retry_delay
from herald.domain.clock import iso, parse_iso
from herald.domain.dead_letters import FailedJobCopy
from herald.domain.errors import DependencyError
from herald.domain.job_records import Claim, DeliveryLog, JobMessage, JobState
from herald.domain.jobs import JobStatus, queue_priority
from herald.domain.notifications import NotificationRequest
from herald.domain.scheduling import delay_seconds
from herald.observability import MetricUnit, count, logger
from herald.services.pacing import Pacer
from herald.services.ports.jobs import DeadLetters, DeliveryStore, JobQueue
from herald.services.ports.platform import Alerts

# A claim outlives the worker's own timeout, and ends before SQS makes the message visible again
# (visibility timeout = 6 x the worker timeout), so a crashed attempt is picked up by the redelivery.
LEASE_SECONDS = 120


class ChannelAttempt(Protocol):
    """One attempt of a claimed job on its channel: a pass over the email providers, or one webhook."""

    def run(self, message: JobMessage, request: NotificationRequest, claim: Claim, /) -> AttemptOutcome: ...


class AttemptNotReleased(Exception):
    """A re-send arrived before the attempt that sent it was released: SQS must deliver it again."""


# The result of a keyed job's message that must stay in flight (``Handled.delay_seconds`` more).
HOLDING = "holding"


class Handled(msgspec.Struct, frozen=True):
    """What happened to one message (for logs, metrics and tests)."""

    job_id: str
    # "completed", "retrying", "deferred", "failed", "duplicate", "lost-lease", "early", "paced", or
    # "holding": a keyed job's message is to stay in flight for ``delay_seconds`` (its retry, or the
    # rest of its wait).
    result: str
    attempt: int | None = None
    delay_seconds: int | None = None


class DeliveryPolicy(msgspec.Struct, frozen=True):
    max_attempts: int
    retry_base_delay_seconds: int


class DeliveryEngine:
    def __init__(
        self,
        policy: DeliveryPolicy,
        *,
        store: DeliveryStore,
        queue: JobQueue,
        dead_letters: DeadLetters,
        alerts: Alerts,
        attempt: ChannelAttempt,
        pacer: Pacer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._policy = policy
        self._store = store
        self._queue = queue
        self._dead_letters = dead_letters
        self._alerts = alerts
        self._attempt = attempt
        self._pacer = pacer
        self._clock = clock

    def handle(self, message: JobMessage) -> Handled:
        waiting = self._waiting(message)
        if waiting is not None:
            return waiting
        claim = self._store.claim(
            message,
            now=int(self._clock()),
            lease_seconds=LEASE_SECONDS,
            started_at=self._now(),
            max_attempts=self._policy.max_attempts,
            expires_at=message.expires_at(self._moment()),
        )
        if claim is None:
            return self._not_claimed(message)
        request = message.request or self._store.request(message.tenant_id, message.job_id)
        outcome = self._run(message, request, claim)
        if outcome.defer_seconds is not None:
            return self._defer(message, claim, outcome.defer_seconds)
        log = DeliveryLog(
            log_id=str(uuid.uuid4()),
            attempt=claim.attempt,
            succeeded=outcome.delivered,
            created_at=self._now(),
            used_provider=outcome.used_provider,
            error_message=outcome.error_message,
            tried=tuple(outcome.tried),
            response_status=outcome.response_status,
            latency_ms=outcome.latency_ms,
            exchange=outcome.exchange,
            retryable=outcome.retryable,
        )
        if outcome.delivered:
            return self._complete(message, log, outcome)
        if outcome.final or claim.attempt >= claim.max_attempts:
            if outcome.receiver_outage:
                # The tenant's receiver was down for every attempt: its to fix, not the operator's.
                count("ReceiverOutage", metric_dimensions(message))
            return self._fail(
                message, request, log, claim.max_attempts, outcome.caused_by_tenant or outcome.receiver_outage
            )
        return self._retry(message, claim, log, outcome)

    def _waiting(self, message: JobMessage) -> Handled | None:
        """A message that is not to be claimed yet: before its sendAt, or before its rate's slot
        (back to its queue before any claim: a wait spends no attempt)."""
        if message.send_at is not None and (wait := delay_seconds(message.send_at, self._moment())) > 0:
            return self._too_early(message, wait)
        if self._pacer is not None and (paced := self._pacer.pace(message)) is not None:
            self._queue.enqueue(paced.message, queue_priority(message.priority), paced.delay_seconds)
            return Handled(message.job_id, "paced", delay_seconds=paced.delay_seconds)
        return None

    def _moment(self) -> datetime:
        return datetime.fromtimestamp(self._clock(), UTC)

    def _now(self) -> str:
        return iso(self._moment())

    def _run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
        """The attempt's outcome; a fault of Herald's in it is a failed attempt that says so. Left
        to crash the batch, it would come back as a lease run out, attempt after attempt, and end
        with "the worker stopped" instead of the reason."""
        try:
            return self._attempt.run(message, request, claim)
        except DependencyError:
            raise  # the table or KMS did not answer: the message comes back later, as designed
        except Exception as exc:  # noqa: BLE001 - one record's fault, recorded as what it is
            logger.exception("delivery attempt failed inside Herald", extra={"job_id": message.job_id})
            return AttemptOutcome(
                delivered=False, error_message=f"Herald failed during the attempt ({type(exc).__name__})"
            )

    def _complete(self, message: JobMessage, log: DeliveryLog, outcome: AttemptOutcome) -> Handled:
        if not self._store.finish(message, log, JobStatus.COMPLETED, None):
            return self._lost_lease(message, log)
        dimensions = metric_dimensions(message)
        count("Delivered", dimensions)
        count("AttemptsPerJob", dimensions, value=log.attempt)
        if len(outcome.tried) > 1:
            count("FallbackUsed", dimensions)
        if message.created_at:
            latency = (self._moment() - parse_iso(message.created_at)).total_seconds() * 1000
            count("AcceptToDeliveredLatency", dimensions, value=latency, unit=MetricUnit.Milliseconds)
        return Handled(message.job_id, "completed", log.attempt)

    def _retry(self, message: JobMessage, claim: Claim, log: DeliveryLog, outcome: AttemptOutcome) -> Handled:
        delay = retry_delay(log.attempt, self._policy.retry_base_delay_seconds, outcome.retry_after_seconds)
        skip = sorted({*claim.skip_providers, *outcome.skip_providers})
        reason = outcome.error_message or "delivery failed"
        due_at = iso(self._moment() + timedelta(seconds=delay))
        if message.ordering_key is not None:
            # The same message comes back after the delay, still first in its key's group: a new
            # one would queue behind the key's later jobs. Released first: if holding the message
            # fails, it comes back after the visibility timeout instead, later but in order.
            if not self._store.release_for_retry(message, log, reason, skip, due_at):
                return self._lost_lease(message, log)
            count("RetryScheduled", metric_dimensions(message))
            return Handled(message.job_id, HOLDING, log.attempt, delay)
        # Re-send first: if it fails, this message is redelivered after the visibility timeout
        # and re-claims the job through its expired lease, so the retry is never lost.
        self._queue.enqueue(
            replace(message, seen_attempts=log.attempt, rate_slot=None),
            queue_priority(message.priority),
            delay,
        )
        if not self._store.release_for_retry(message, log, reason, skip, due_at):
            return self._lost_lease(message, log)
        count("RetryScheduled", metric_dimensions(message))
        return Handled(message.job_id, "retrying", log.attempt, delay)

    def _defer(self, message: JobMessage, claim: Claim, delay: int) -> Handled:
        """Nothing was sent (the endpoint's breaker is open): the claim is handed back with its
        attempt unspent, and the job comes back after ``delay``. A keyed job's message stays in
        flight for the delay, as a keyed retry's does: a new message would be dropped by the FIFO
        queue's deduplication (same job, same attempt) and the key's later jobs would overtake it.
        Released first: a re-send that overtook the release would find the job claimed and be
        dropped as a duplicate; a re-send that fails leaves a PENDING job the sweeper re-queues."""
        due_at = iso(self._moment() + timedelta(seconds=delay))
        unspent = claim.attempt - 1
        if not self._store.release_deferred(message, claim.attempt, due_at):
            return Handled(message.job_id, "lost-lease", claim.attempt)
        count("Deferred", metric_dimensions(message))
        if message.ordering_key is not None:
            return Handled(message.job_id, HOLDING, unspent, delay)
        self._queue.enqueue(
            replace(message, seen_attempts=unspent, rate_slot=None), queue_priority(message.priority), delay
        )
        return Handled(message.job_id, "deferred", unspent, delay)

    def _fail(
        self,
        message: JobMessage,
        request: NotificationRequest,
        log: DeliveryLog,
        max_attempts: int,
        caused_by_tenant: bool,
    ) -> Handled:
        reason = log.error_message or "delivery failed"
        if not caused_by_tenant:
            # The operator's copy first: if it cannot be written, the job stays claimed and this
            # message comes back, instead of a FAILED job with no trace in the dead-letter queue.
            copy = FailedJobCopy(message, request, reason, log.attempt, max_attempts, self._now())
            self._dead_letters.send(copy)
            count("DeadLettered", metric_dimensions(message))
        if not self._store.finish(message, log, JobStatus.FAILED, reason):
            return self._lost_lease(message, log)
        count("FailedByTenant" if caused_by_tenant else "Failed", metric_dimensions(message))
        if not caused_by_tenant:
            self._alerts.dead_lettered(JobAlert.of(message, log.attempt, reason))
        return Handled(message.job_id, "failed", log.attempt)

    def _too_early(self, message: JobMessage, wait: int) -> Handled:
        """A scheduled job's message that arrived before its time (a clock ahead, a delay cut short)
        goes back to wait out the rest: a job is never started before its sendAt."""
        if message.ordering_key is not None:
            return Handled(message.job_id, HOLDING, delay_seconds=wait)
        self._queue.enqueue(message, queue_priority(message.priority), wait)
        logger.warning("scheduled job arrived early", extra={"job_id": message.job_id, "wait": wait})
        return Handled(message.job_id, "early", delay_seconds=wait)

    def _not_claimed(self, message: JobMessage) -> Handled:
        """Someone else owns the job or it is finished, unless its last attempt crashed."""
        current = self._store.current(message.tenant_id, message.job_id)
        if current is not None and self._sent_by_running_attempt(message, current):
            raise AttemptNotReleased(message.job_id)
        if current is None or not self._crashed_last_attempt(current):
            logger.info("duplicate or stale message ignored", extra={"job_id": message.job_id})
            return Handled(message.job_id, "duplicate")
        log = DeliveryLog(
            log_id=str(uuid.uuid4()),
            attempt=current.attempts,
            succeeded=False,
            created_at=self._now(),
            error_message="the worker stopped during the last attempt",
        )
        request = message.request or self._store.request(message.tenant_id, message.job_id)
        return self._fail(message, request, log, current.max_attempts, caused_by_tenant=False)

    def _crashed_last_attempt(self, current: JobState) -> bool:
        return (
            current.status is JobStatus.PROCESSING
            and (current.lease_until or 0) < self._clock()
            and current.attempts >= current.max_attempts
        )

    def _sent_by_running_attempt(self, message: JobMessage, current: JobState) -> bool:
        """Only ``_retry`` of attempt N sends ``seen_attempts`` N; while N still holds its lease, the
        re-send overtook the release (a slow write, a short delay). Dropping it would strand the job."""
        return (
            current.status is JobStatus.PROCESSING
            and current.attempts == message.seen_attempts
            and (current.lease_until or 0) >= self._clock()
        )

    def _lost_lease(self, message: JobMessage, log: DeliveryLog) -> Handled:
        logger.warning(
            "job changed while delivering; outcome not recorded",
            extra={"job_id": message.job_id, "attempt": log.attempt},
        )
        return Handled(message.job_id, "lost-lease", log.attempt)


def metric_dimensions(message: JobMessage) -> dict[str, str]:
    """The dimensions of a job's business metrics (never its tenant: that would be a metric each)."""
    return {"channel": message.channel.value, "priority": queue_priority(message.priority).value}
