"""A job's life in values: accepted (``NewJob``), queued (``JobMessage``: enough to claim and
deliver it without reading the table), claimed by an attempt (``Claim``), each attempt's
``DeliveryLog``, its current ``JobState``, the events providers report, and the views and pages the
API reads.

Services take and return these; the PynamoDB items behind them never leave ``herald.adapters.store``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from herald.domain.breakers import Breaker
from herald.domain.clock import epoch_seconds, parse_iso
from herald.domain.jobs import DEFAULT_PRIORITY, Channel, JobStatus, queue_priority
from herald.domain.notifications import NotificationRequest
from herald.domain.plans import retention_end
from herald.domain.webhooks import WebhookExchange


class JobMessage(msgspec.Struct, frozen=True):
    """A job on its queue: enough to claim and deliver it without reading the table."""

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
    # A paced delivery's reserved send slot (epoch milliseconds): it waits for it, and takes no other.
    rate_slot: int | None = None

    def expires_at(self, now: datetime) -> int:
        """The end of the job's retention (epoch seconds), counted from its acceptance like its
        other items; from ``now`` when the message does not carry the acceptance time."""
        accepted = parse_iso(self.created_at) if self.created_at else now
        return epoch_seconds(retention_end(self.plan, accepted))


class NewJob(msgspec.Struct, frozen=True):
    """An accepted request, as the accept path stores it (once; the payload is never rewritten)."""

    job_id: str
    tenant_id: str
    request: NotificationRequest
    priority: int
    max_attempts: int
    created_at: str
    expires_at: int
    # With an idempotency key (the job id derives from it): the request as it came, before any
    # sealing; the store tells a repeat of the key from a reuse by this request's fingerprint.
    keyed_request: NotificationRequest | None = None


class DeliveryLog(msgspec.Struct, frozen=True):
    """What one attempt did, appended to the job's delivery log."""

    log_id: str
    attempt: int
    succeeded: bool
    created_at: str
    used_provider: str | None = None
    error_message: str | None = None
    # Every provider tried in this attempt, in order: {provider, outcome, status, code, error,
    # latencyMs, messageId}.
    tried: tuple[Mapping[str, Any], ...] = ()
    response_status: int | None = None
    latency_ms: int | None = None
    # A webhook attempt's headers and answer (docs/performance.md: where they are stored).
    exchange: WebhookExchange | None = None
    # False: the attempt failed in a way no retry changes (``AttemptOutcome.retryable``).
    retryable: bool = True

    @property
    def status(self) -> str:
        return "success" if self.succeeded else "failed"


class JobState(msgspec.Struct, frozen=True):
    """A job's current state: the accepted request's facts joined with its delivery progress."""

    job_id: str
    tenant_id: str
    channel: Channel
    status: JobStatus
    priority: int
    attempts: int
    max_attempts: int
    created_at: str
    error_message: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    used_provider: str | None = None
    lease_until: int | None = None
    # Providers that failed permanently for this job (bad key, suspended): not tried again.
    skip_providers: tuple[str, ...] = ()
    delivery_logs: tuple[DeliveryLog, ...] = ()
    # When it was last queued again by a retry, a redrive or the sweeper, and how often the sweeper did.
    requeued_at: str | None = None
    sweeps: int = 0
    # A scheduled job's time (on its status item from acceptance on).
    send_at: str | None = None
    # A keyed job's ordering key (on its status item from its first claim or schedule on): every
    # later message of the job joins the key's FIFO group, not a priority queue.
    ordering_key: str | None = None
    # What the job list shows of the request (herald.domain.search.Listed): the recipient or URL,
    # an email's subject cut short; None where only the status item was read.
    target: str | None = None
    subject: str | None = None

    @property
    def queue(self) -> str:
        return queue_priority(self.priority).value

    @property
    def retryable(self) -> bool:
        """A failed job a retry may deliver: not one whose last attempt no retry can change."""
        last = self.delivery_logs[-1] if self.delivery_logs else None
        return self.status is JobStatus.FAILED and (last is None or last.retryable)

    def next_message(self, plan: str, correlation_id: str | None) -> JobMessage:
        """The message that queues the job again for its next attempt (the worker reads its request)."""
        return JobMessage(
            self.job_id,
            self.tenant_id,
            self.channel,
            plan,
            self.attempts,
            None,
            self.priority,
            self.created_at,
            correlation_id,
            ordering_key=self.ordering_key,
        )


class JobEvent(msgspec.Struct, frozen=True):
    """A delivery event a provider reported for the job (``herald.domain.inbound``)."""

    type: str
    # When the provider says it happened: its claim, which may be any time.
    occurred_at: str
    provider: str | None = None
    # The provider's short description: bounce reason, SMTP answer, clicked link.
    reason: str | None = None
    # When Herald received the report: what a job's events are ordered by (None: stored before
    # Herald kept it; ordered by ``occurred_at`` then).
    received_at: str | None = None

    @property
    def order_key(self) -> str:
        return self.received_at or self.occurred_at


class JobView(msgspec.Struct, frozen=True):
    state: JobState
    # The accepted request, until its retention ends.
    request: NotificationRequest | None
    events: tuple[JobEvent, ...] = msgspec.field(default_factory=tuple)
    # A waiting webhook's endpoint breaker, as read with the job (what it may be waiting for).
    breaker: Breaker | None = None


class JobPage(msgspec.Struct, frozen=True):
    items: tuple[JobState, ...]
    # None when the store did not count the matches (the day counters give the total).
    total: int | None
    next_cursor: str | None
    # False when a status filter that no index serves stopped at its scan budget.
    total_exact: bool = True


class Claim(msgspec.Struct, frozen=True):
    """A job taken by one delivery attempt."""

    attempt: int
    max_attempts: int
    skip_providers: tuple[str, ...] = ()
