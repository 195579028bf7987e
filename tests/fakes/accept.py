"""In-memory fakes of the accept path's ports (job store, queue) with DynamoDB's semantics."""

from __future__ import annotations

from dataclasses import dataclass, field

from herald.adapters.store.job_store import (
    DuplicateRequest,
    IdempotencyClaim,
    NewJob,
    QuotaExhausted,
    RateGuard,
    RateLimited,
    UsageGuard,
)
from herald.domain.errors import DependencyError
from herald.domain.jobs import JobMessage
from herald.settings import QueuePriority


@dataclass
class FakeJobStore:
    jobs: dict[str, NewJob] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    idempotency: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    rate: dict[tuple[str, str], int] = field(default_factory=dict)
    usage: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def insert_accepted(
        self, job: NewJob, idempotency: IdempotencyClaim | None, rate: RateGuard, usage: UsageGuard
    ) -> None:
        # All-or-nothing, like the DynamoDB transaction: check every guard before writing.
        if idempotency is not None and (job.tenant_id, idempotency.key) in self.idempotency:
            job_id, body_hash = self.idempotency[(job.tenant_id, idempotency.key)]
            raise DuplicateRequest(job_id, body_hash == idempotency.body_hash)
        if self.rate.get((job.tenant_id, rate.minute), 0) >= rate.limit:
            raise RateLimited
        if usage.limit is not None:
            counted = self.usage.get((job.tenant_id, usage.period, usage.limit[0]), 0)
            if counted >= usage.limit[1]:
                raise QuotaExhausted
        if idempotency is not None:
            self.idempotency[(job.tenant_id, idempotency.key)] = (job.job_id, idempotency.body_hash)
        self.rate[(job.tenant_id, rate.minute)] = self.rate.get((job.tenant_id, rate.minute), 0) + 1
        for attr in (usage.channel_attr, "total"):
            key = (job.tenant_id, usage.period, attr)
            self.usage[key] = self.usage.get(key, 0) + 1
        self.jobs[job.job_id] = job
        self.statuses[job.job_id] = "pending"

    def mark_enqueue_failed(self, tenant_id: str, job_id: str, reason: str, failed_at: str) -> None:
        assert self.jobs[job_id].tenant_id == tenant_id
        self.statuses[job_id] = "failed"
        self.reasons[job_id] = reason


@dataclass
class RecordingQueue:
    sent: list[tuple[JobMessage, QueuePriority, int]] = field(default_factory=list)
    fail: bool = False

    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None:
        if self.fail:
            raise DependencyError("queue email-normal unavailable: simulated outage")
        self.sent.append((message, priority, delay_seconds))
