"""Data access for jobs: the accept transaction, reads for the API, and status transitions.

DynamoDB calls per operation (the budgets of design.md, measured by the benchmark):
- accept: 1 TransactWriteItems (job state + payload + idempotency + rate + usage), retried only
  on a transaction conflict between concurrent duplicates;
- get: 1 Query (state, payload and events share a partition);
- list: 1 Query per page of the index, plus 1 COUNT Query for ``pagination.total``;
- enqueue failure / retry: 1 conditional UpdateItem.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.transactions import TransactWrite

from herald.adapters.store.models import (
    HeraldItem,
    IdempotencyRecord,
    JobEvent,
    JobPayload,
    JobState,
    RateCounter,
    UsageCounter,
    job_pk,
    jobs_gsi_pk,
)
from herald.adapters.store.table import cancellation_codes, connection
from herald.domain.errors import DependencyError
from herald.domain.jobs import JobStatus

IDEMPOTENCY_TTL_SECONDS = 48 * 3600  # the contract promises at least 24 h
RATE_TTL_SECONDS = 180
USAGE_TTL_SECONDS = 400 * 24 * 3600
# Concurrent identical requests collide in DynamoDB transactions; a few quick retries let the
# winner commit so the others see its idempotency record.
CONFLICT_RETRIES = 6


@dataclass(frozen=True)
class NewJob:
    job_id: str
    tenant_id: str
    type: str
    priority: int
    queue: str
    max_attempts: int
    created_at: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class IdempotencyClaim:
    key: str
    body_hash: str


@dataclass(frozen=True)
class RateGuard:
    minute: str
    limit: int


@dataclass(frozen=True)
class UsageGuard:
    period: str
    channel_attr: str  # "emails" or "webhooks"
    # (attribute counted against, limit) or None when unmetered.
    limit: tuple[str, int] | None


class DuplicateRequest(Exception):
    def __init__(self, job_id: str, same_body: bool) -> None:
        super().__init__("duplicate request")
        self.job_id = job_id
        self.same_body = same_body


class RateLimited(Exception):
    pass


class QuotaExhausted(Exception):
    pass


@dataclass(frozen=True)
class JobView:
    state: JobState
    payload: dict[str, Any] | None
    events: list[JobEvent]


@dataclass(frozen=True)
class JobPage:
    items: list[JobState]
    total: int
    next_cursor: str | None


class JobStore:
    """Jobs in the single table (see herald.adapters.store.models for the key layout)."""

    def insert_accepted(
        self,
        job: NewJob,
        idempotency: IdempotencyClaim | None,
        rate: RateGuard,
        usage: UsageGuard,
    ) -> None:
        """Write the job (PENDING) with its guards in one transaction, or raise why not."""
        for attempt in range(CONFLICT_RETRIES):
            try:
                self._accept_transaction(job, idempotency, rate, usage)
                return
            except TransactWriteError as exc:
                reasons = cancellation_codes(exc)
                if "ConditionalCheckFailed" in reasons:
                    self._raise_for_conditions(exc, reasons, idempotency)
                if "TransactionConflict" not in reasons or attempt == CONFLICT_RETRIES - 1:
                    raise DependencyError(f"job table write failed: {exc.cause_response_code}") from exc
                time.sleep(0.02 * 2**attempt)
            except PynamoDBException as exc:
                raise DependencyError(f"job table write failed: {exc.cause_response_code}") from exc

    def _accept_transaction(
        self, job: NewJob, idempotency: IdempotencyClaim | None, rate: RateGuard, usage: UsageGuard
    ) -> None:
        now = int(time.time())
        pk = job_pk(job.tenant_id, job.job_id)
        with TransactWrite(connection=connection()) as tx:
            if idempotency is not None:
                record = IdempotencyRecord(
                    f"IDEM#{job.tenant_id}#{idempotency.key}",
                    "IDEM",
                    job_id=job.job_id,
                    body_hash=idempotency.body_hash,
                    created_at=job.created_at,
                    expires_at=now + IDEMPOTENCY_TTL_SECONDS,
                )
                tx.save(record, condition=IdempotencyRecord.pk.does_not_exist(), return_values="ALL_OLD")
            counter = RateCounter(f"RATE#{job.tenant_id}#{rate.minute}", "RATE")
            tx.update(
                counter,
                actions=[RateCounter.requests.add(1), RateCounter.expires_at.set(now + RATE_TTL_SECONDS)],
                condition=RateCounter.requests.does_not_exist() | (RateCounter.requests < rate.limit),
            )
            tx.update(
                UsageCounter(f"USAGE#{job.tenant_id}#{usage.period}", "USAGE"), **_usage_update(usage, now)
            )
            tx.save(
                JobState(
                    pk,
                    "STATE",
                    job_id=job.job_id,
                    tenant_id=job.tenant_id,
                    type=job.type,
                    status=JobStatus.PENDING.value,
                    priority=job.priority,
                    queue=job.queue,
                    attempts=0,
                    max_attempts=job.max_attempts,
                    created_at=job.created_at,
                    gsi1pk=jobs_gsi_pk(job.tenant_id),
                    gsi1sk=f"{job.created_at}#{job.job_id}",
                ),
                condition=JobState.pk.does_not_exist(),
            )
            tx.save(JobPayload(pk, "PAYLOAD", payload=job.payload), condition=JobPayload.pk.does_not_exist())

    @staticmethod
    def _raise_for_conditions(
        exc: TransactWriteError, reasons: list[str | None], idempotency: IdempotencyClaim | None
    ) -> None:
        # PynamoDB sends puts before updates: [idempotency?, state, payload, rate, usage].
        puts = 3 if idempotency is not None else 2
        if idempotency is not None and reasons[0] == "ConditionalCheckFailed":
            old = exc.cancellation_reasons[0]
            raw = (old.raw_item if old else None) or {}
            job_id = raw.get("jobId", {}).get("S", "")
            same = raw.get("bodyHash", {}).get("S") == idempotency.body_hash
            raise DuplicateRequest(job_id, same) from exc
        if reasons[puts] == "ConditionalCheckFailed":
            raise RateLimited from exc
        if reasons[puts + 1] == "ConditionalCheckFailed":
            raise QuotaExhausted from exc

    # ------------------------------------------------------------ reads

    def get(self, tenant_id: str, job_id: str) -> JobView | None:
        state: JobState | None = None
        payload: dict[str, Any] | None = None
        events: list[JobEvent] = []
        try:
            for item in HeraldItem.query(job_pk(tenant_id, job_id)):
                if isinstance(item, JobState):
                    state = item
                elif isinstance(item, JobPayload):
                    payload = item.payload
                elif isinstance(item, JobEvent):
                    events.append(item)
        except PynamoDBException as exc:
            raise DependencyError(f"job table read failed: {exc.cause_response_code}") from exc
        if state is None:
            return None
        return JobView(state, payload, sorted(events, key=lambda event: event.occurred_at))

    def list(
        self,
        tenant_id: str,
        *,
        page: int,
        limit: int,
        type_: str | None,
        status: str | None,
        cursor: str | None,
    ) -> JobPage:
        condition = _filters(type_, status)
        range_condition = HeraldItem.gsi1sk < _decode_cursor(cursor) if cursor else None
        try:
            results = HeraldItem.by_tenant.query(
                jobs_gsi_pk(tenant_id),
                range_key_condition=range_condition,
                filter_condition=condition,
                scan_index_forward=False,
            )
            skip = 0 if cursor else (page - 1) * limit
            items = _take(results, skip, limit)
            total = HeraldItem.by_tenant.count(jobs_gsi_pk(tenant_id), filter_condition=condition)
        except PynamoDBException as exc:
            raise DependencyError(f"job index read failed: {exc.cause_response_code}") from exc
        next_cursor = _encode_cursor(items[-1].gsi1sk) if len(items) == limit and items[-1].gsi1sk else None
        return JobPage(items, total, next_cursor)

    # ------------------------------------------------------------ transitions

    def mark_enqueue_failed(self, tenant_id: str, job_id: str, reason: str, failed_at: str) -> None:
        """The queue refused the job: it ends FAILED with the reason and can be retried."""
        state = JobState(job_pk(tenant_id, job_id), "STATE")
        try:
            state.update(
                actions=[
                    JobState.status.set(JobStatus.FAILED.value),
                    JobState.error_message.set(reason),
                    JobState.completed_at.set(failed_at),
                ],
                condition=JobState.status == JobStatus.PENDING.value,
            )
        except PynamoDBException as exc:
            raise DependencyError(f"job table write failed: {exc.cause_response_code}") from exc

    def reopen_failed(self, tenant_id: str, job_id: str, extra_attempts: int) -> JobState | None:
        """FAILED -> PENDING with a fresh attempt budget; None when the job is not failed."""
        state = JobState(job_pk(tenant_id, job_id), "STATE")
        try:
            state.update(
                actions=[
                    JobState.status.set(JobStatus.PENDING.value),
                    JobState.max_attempts.set(JobState.attempts + extra_attempts),
                    JobState.error_message.remove(),
                    JobState.completed_at.remove(),
                    JobState.lease_until.remove(),
                    # A manual retry usually follows a fixed key: every provider gets a new chance.
                    JobState.skip_providers.remove(),
                ],
                condition=JobState.status == JobStatus.FAILED.value,
            )
        except PynamoDBException as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return None
            raise DependencyError(f"job table write failed: {exc.cause_response_code}") from exc
        return state


def _usage_update(usage: UsageGuard, now: int) -> dict[str, Any]:
    attr = getattr(UsageCounter, usage.channel_attr)
    actions = [attr.add(1), UsageCounter.total.add(1), UsageCounter.expires_at.set(now + USAGE_TTL_SECONDS)]
    condition: Condition | None = None
    if usage.limit is not None:
        limited = getattr(UsageCounter, usage.limit[0])
        condition = limited.does_not_exist() | (limited < usage.limit[1])
    return {"actions": actions, "condition": condition}


def _filters(type_: str | None, status: str | None) -> Condition | None:
    condition: Condition | None = None
    if type_ is not None:
        condition = JobState.type == type_
    if status is not None:
        by_status = JobState.status == status
        condition = by_status if condition is None else condition & by_status
    return condition


def _take(results: Iterator[HeraldItem], skip: int, limit: int) -> list[JobState]:
    items: list[JobState] = []
    for index, item in enumerate(results):
        if index < skip or not isinstance(item, JobState):
            continue
        items.append(item)
        if len(items) == limit:
            break
    return items


def _encode_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    padded = cursor + "=" * (-len(cursor) % 4)
    return base64.urlsafe_b64decode(padded.encode()).decode()
