"""An in-memory job table with DynamoDB's conditions: the ``JobStore`` of the API, the
``DeliveryStore`` of the workers, the ``Schedules`` of scheduled sends and the ``JobEvents`` of the
inbound webhooks over the same jobs, and the tenants' ``Counters``.

Every method applies the same condition as its DynamoDB adapter (``herald.adapters.store``); name a
method in ``unavailable`` to make it raise ``DependencyError`` as the adapter does when DynamoDB
cannot be reached. ``calls`` lists the round trips made, in order.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from msgspec.structs import replace

from herald.adapters.store.conversions import fingerprint, request_from_document
from herald.domain.account import Usage
from herald.domain.activity import DayCounts, StatusChange
from herald.domain.clock import iso
from herald.domain.errors import DependencyError
from herald.domain.job_records import (
    Claim,
    DeliveryLog,
    JobEvent,
    JobMessage,
    JobPage,
    JobState,
    JobView,
    NewJob,
)
from herald.domain.jobs import FINAL_STATUSES, Channel, JobStatus
from herald.domain.notifications import NotificationRequest
from herald.domain.plans import Quota, channel_counter
from herald.domain.scheduling import DueJob
from herald.domain.search import JobSearch, Listed
from herald.services.activity import DayCountTally
from herald.services.outcomes import DuplicateRequest, QuotaExhausted, RateLimited
from herald.services.ports.tenants import ActivityCounters
from tests.fakes.common import CREATED_AT


class _Job:
    """A job's request and its status item (from the first claim on); every write of the status item
    is reported to ``stream``, as the table's stream reports it."""

    def __init__(self, request: NewJob, stream: list[StatusChange]) -> None:
        self.request = request
        self._stream = stream
        self._state: JobState | None = None
        # Delivery events by (provider, the provider's event id), as their items are keyed.
        self.events: dict[tuple[str, str], tuple[JobEvent, int]] = {}

    @property
    def state(self) -> JobState | None:
        return self._state

    @state.setter
    def state(self, new: JobState) -> None:
        old, self._state = self._state, new
        self._stream.append(
            StatusChange(
                str(len(self._stream)),
                new.tenant_id,
                new.created_at,
                new.channel,
                None if old is None else old.status,
                new.status,
            )
        )


class Recorder:
    """Lists the round trips made; a method named in ``unavailable`` raises ``DependencyError``."""

    def __init__(self) -> None:
        self.unavailable: set[str] = set()
        self.calls: list[str] = []

    def _called(self, method: str) -> None:
        self.calls.append(method)
        if method in self.unavailable:
            raise DependencyError(f"table unavailable in {method}")


class FakeJobTable(Recorder):
    def __init__(self, max_attempts: int = 3) -> None:
        super().__init__()
        self._jobs: dict[tuple[str, str], _Job] = {}
        self._max_attempts = max_attempts
        self.sweep_mark: datetime | None = None
        # The status items' writes, in order (the table's stream), and how many are tallied.
        self.stream: list[StatusChange] = []
        self._tallied = 0

    def tally(self, counters: ActivityCounters) -> int:
        """What TallyFunction does with the stream's changes not yet tallied: adds them to the day
        counts (a batch that raises stays on the stream)."""
        written = DayCountTally(counters).add(self.stream[self._tallied :])
        self._tallied = len(self.stream)
        return written

    # -------------------------------------------------- test set-up and inspection

    def add_job(
        self,
        tenant_id: str,
        job_id: str,
        payload: dict[str, Any],
        *,
        channel: Channel = Channel.EMAIL,
        priority: int = 5,
        max_attempts: int = 3,
        expires_at: int = 0,
        created_at: str = CREATED_AT,
    ) -> None:
        """A job as the API leaves it: accepted, never claimed (``payload``: the request's document)."""
        request = request_from_document(channel, copy.deepcopy(payload))
        job = NewJob(job_id, tenant_id, request, priority, max_attempts, created_at, expires_at)
        self._jobs[(tenant_id, job_id)] = _Job(job, self.stream)

    def state(self, tenant_id: str, job_id: str) -> JobState:
        """The job's current state, read without counting as a call of the code under test."""
        state = self._state(tenant_id, job_id)
        assert state is not None, f"no job {job_id}"
        return state

    def set_state(self, tenant_id: str, job_id: str, **changes: Any) -> None:
        """Put the job into a situation a test needs (a crashed attempt, a stale counter)."""
        job = self._jobs[(tenant_id, job_id)]
        job.state = replace(self.state(tenant_id, job_id), **changes)

    @property
    def jobs(self) -> dict[str, NewJob]:
        return {job_id: job.request for (_, job_id), job in self._jobs.items()}

    # -------------------------------------------------- JobStore

    def insert(self, job: NewJob) -> None:
        self._called("insert")
        existing = self._jobs.get((job.tenant_id, job.job_id))
        if existing is not None:
            raise DuplicateRequest(job.job_id, _fingerprint(existing.request) == _fingerprint(job))
        self._jobs[(job.tenant_id, job.job_id)] = _Job(copy.deepcopy(job), self.stream)

    def get(self, tenant_id: str, job_id: str) -> JobView | None:
        self._called("get")
        job = self._jobs.get((tenant_id, job_id))
        if job is None:
            return None
        events = sorted((event for event, _ in job.events.values()), key=lambda event: event.occurred_at)
        return JobView(self.state(tenant_id, job_id), job.request.request, tuple(events))

    def stored_events(self, tenant_id: str, job_id: str) -> dict[tuple[str, str], tuple[JobEvent, int]]:
        """The job's event items with their expiry, read without counting as a call."""
        return dict(self._jobs[(tenant_id, job_id)].events)

    def listing(
        self,
        tenant_id: str,
        *,
        page: int,
        limit: int,
        channel: Channel | None,
        status: JobStatus | None,
        cursor: str | None,
        day: date | None = None,
    ) -> JobPage:
        self._called("listing")
        if cursor is not None:
            raise ValueError("the fake hands out no cursors")
        states = sorted(
            (self.state(t, j) for (t, j) in self._jobs if t == tenant_id),
            key=lambda state: (state.created_at, state.job_id),
            reverse=True,
        )
        matching = [
            s
            for s in states
            if (channel is None or s.channel is channel)
            and (status is None or s.status is status)
            and (day is None or s.created_at.startswith(day.isoformat()))
        ]
        start = (page - 1) * limit
        # Like the adapter, only a scan for in-flight statuses counts the matches.
        total = None if status is None or status in FINAL_STATUSES else len(matching)
        return JobPage(tuple(matching[start : start + limit]), total, None)

    def search(self, tenant_id: str, search: JobSearch, *, limit: int, cursor: str | None) -> JobPage:
        """Every match at once (the fake reads no index); the cursor is ``createdAt#jobId``."""
        self._called("search")
        if cursor is not None and "#" not in cursor:
            raise ValueError("not a cursor")
        upper = min(filter(None, (cursor, search.until)), default="~")
        found = sorted(
            (
                state
                for (t, j), job in self._jobs.items()
                if t == tenant_id
                and (search.term is None or Listed.of(job.request.request.notification).term == search.term)
                and (search.since or "") <= f"{(state := self.state(t, j)).created_at}#{j}" < upper
                and search.keeps(state)
            ),
            key=lambda state: (state.created_at, state.job_id),
            reverse=True,
        )[:limit]
        last = found[-1] if len(found) == limit else None
        return JobPage(tuple(found), None, f"{last.created_at}#{last.job_id}" if last else None)

    def failed_between(
        self,
        tenant_id: str,
        created_from: str,
        created_until: str,
        *,
        channel: Channel | None,
        cursor: str | None,
        limit: int,
    ) -> JobPage:
        """The cursor is the last job's ``createdAt#jobId``, as the index's sort key."""
        self._called("failed_between")
        upper = cursor or f"{created_until}#"
        if cursor is not None and "#" not in cursor:
            raise ValueError("not a cursor")
        matching = sorted(
            (
                state
                for (t, j) in self._jobs
                if t == tenant_id
                and (state := self.state(t, j)).status is JobStatus.FAILED
                and (channel is None or state.channel is channel)
                and created_from <= f"{state.created_at}#{state.job_id}" < upper
            ),
            key=lambda state: (state.created_at, state.job_id),
            reverse=True,
        )[:limit]
        last = matching[-1] if len(matching) == limit else None
        return JobPage(tuple(matching), None, f"{last.created_at}#{last.job_id}" if last else None)

    def mark_enqueue_failed(self, message: JobMessage, reason: str, failed_at: str) -> None:
        self._called("mark_enqueue_failed")
        job = self._jobs[(message.tenant_id, message.job_id)]
        current = self.state(message.tenant_id, message.job_id)
        if job.state is not None and job.state.status is not JobStatus.PENDING:
            raise DependencyError("job table write failed: ConditionalCheckFailedException")
        job.state = replace(
            current,
            status=JobStatus.FAILED,
            error_message=reason,
            completed_at=failed_at,
            ordering_key=current.ordering_key or message.ordering_key,
        )

    def reopen_failed(
        self, tenant_id: str, job_id: str, extra_attempts: int, reopened_at: str
    ) -> JobState | None:
        self._called("reopen_failed")
        job = self._jobs.get((tenant_id, job_id))
        if job is None or job.state is None or job.state.status is not JobStatus.FAILED:
            return None
        job.state = replace(
            job.state,
            status=JobStatus.PENDING,
            max_attempts=job.state.attempts + extra_attempts,
            error_message=None,
            completed_at=None,
            lease_until=None,
            skip_providers=(),
            requeued_at=reopened_at,
            sweeps=0,
        )
        return job.state

    def owner(self, job_id: str, tenant_ids: Iterable[str]) -> str | None:
        self._called("owner")
        return next((tenant for tenant in tenant_ids if (tenant, job_id) in self._jobs), None)

    # -------------------------------------------------- Schedules

    def schedule(self, job: NewJob, send_at: str) -> None:
        self._called("schedule")
        stored = self._jobs[(job.tenant_id, job.job_id)]
        if stored.state is not None:
            raise DependencyError("job table write failed: ConditionalCheckFailedException")
        stored.state = replace(
            self.state(job.tenant_id, job.job_id),
            status=JobStatus.SCHEDULED,
            send_at=send_at,
            ordering_key=job.request.ordering_key,
        )

    def due(self, until: str) -> Iterator[DueJob]:
        self._called("due")
        waiting = sorted(
            (job.state.send_at or "", job.state)
            for job in self._jobs.values()
            if job.state is not None and job.state.status is JobStatus.SCHEDULED
        )
        for send_at, state in waiting:
            if send_at <= until:
                key = self._jobs[(state.tenant_id, state.job_id)].request.request.ordering_key
                yield DueJob(
                    state.tenant_id,
                    state.job_id,
                    state.channel,
                    state.priority,
                    send_at,
                    state.created_at,
                    key,
                )

    def start_dispatch(self, job: DueJob, at: str) -> bool:
        self._called("start_dispatch")
        return self._move(
            job.tenant_id, job.job_id, JobStatus.SCHEDULED, status=JobStatus.PENDING, requeued_at=at
        )

    def undo_dispatch(self, job: DueJob) -> bool:
        self._called("undo_dispatch")
        state = self._state(job.tenant_id, job.job_id)
        if state is None or state.attempts != 0:
            return False
        return self._move(
            job.tenant_id, job.job_id, JobStatus.PENDING, status=JobStatus.SCHEDULED, requeued_at=None
        )

    def cancel(self, tenant_id: str, job_id: str, created_at: str, at: str) -> JobState | None:
        self._called("cancel")
        if not self._move(
            tenant_id, job_id, JobStatus.SCHEDULED, status=JobStatus.CANCELLED, completed_at=at
        ):
            return None
        return self.state(tenant_id, job_id)

    def _move(self, tenant_id: str, job_id: str, expected: JobStatus, **changes: Any) -> bool:
        job = self._jobs.get((tenant_id, job_id))
        if job is None or job.state is None or job.state.status is not expected:
            return False
        job.state = replace(job.state, **changes)
        return True

    # -------------------------------------------------- SweepStore

    def last_sweep(self) -> datetime | None:
        self._called("last_sweep")
        return self.sweep_mark

    def swept(self, at: datetime) -> None:
        self._called("swept")
        self.sweep_mark = at

    def active_tenants(self, since: datetime) -> Iterator[str]:
        self._called("active_tenants")
        tenants = {tenant for (tenant, _), job in self._jobs.items() if job.request.created_at >= iso(since)}
        yield from sorted(tenants)

    def unfinished(self, tenant_id: str, created_from: str, created_until: str) -> list[JobState]:
        self._called("unfinished")
        states = [
            self.state(tenant, job_id)
            for (tenant, job_id), job in self._jobs.items()
            if tenant == tenant_id and created_from <= job.request.created_at < created_until
        ]
        return [state for state in states if state.status not in FINAL_STATUSES]

    def mark_requeued(self, state: JobState, at: str, expires_at: int) -> bool:
        self._called("mark_requeued")
        if not self._unchanged(state):
            return False
        self._jobs[(state.tenant_id, state.job_id)].state = replace(
            state, requeued_at=at, sweeps=state.sweeps + 1
        )
        return True

    def fail(self, state: JobState, reason: str, at: str) -> bool:
        self._called("fail")
        if not self._unchanged(state):
            return False
        self._jobs[(state.tenant_id, state.job_id)].state = replace(
            state, status=JobStatus.FAILED, error_message=reason, completed_at=at, lease_until=None
        )
        return True

    # -------------------------------------------------- DeliveryStore

    def claim(
        self,
        message: JobMessage,
        *,
        now: int,
        lease_seconds: int,
        started_at: str,
        max_attempts: int,
        expires_at: int,
    ) -> Claim | None:
        self._called("claim")
        job = self._jobs.get((message.tenant_id, message.job_id))
        if job is None:
            return None
        state = self.state(message.tenant_id, message.job_id)
        fresh = (job.state is None and message.seen_attempts == 0) or (
            state.status is JobStatus.PENDING
            and (state.attempts == message.seen_attempts or message.ordering_key is not None)
            and job.state is not None
        )
        abandoned = (
            state.status is JobStatus.PROCESSING and state.lease_until is not None and state.lease_until < now
        )
        if not ((fresh or abandoned) and state.attempts < state.max_attempts):
            return None
        claimed = replace(
            state,
            status=JobStatus.PROCESSING,
            attempts=state.attempts + 1,
            lease_until=now + lease_seconds,
            started_at=state.started_at or started_at,
            ordering_key=state.ordering_key or message.ordering_key,
        )
        job.state = claimed
        return Claim(claimed.attempts, claimed.max_attempts, claimed.skip_providers)

    def current(self, tenant_id: str, job_id: str) -> JobState | None:
        self._called("current")
        return self._state(tenant_id, job_id)

    def request(self, tenant_id: str, job_id: str) -> NotificationRequest:
        self._called("request")
        job = self._jobs.get((tenant_id, job_id))
        if job is None:
            raise DependencyError("job payload read failed: DoesNotExist")
        return job.request.request

    def finish(self, message: JobMessage, log: DeliveryLog, status: JobStatus, reason: str | None) -> bool:
        self._called("finish")
        assert status in FINAL_STATUSES
        return self._record(message, log, status=status, completed_at=log.created_at, error_message=reason)

    def release_for_retry(
        self, message: JobMessage, log: DeliveryLog, reason: str, skip_providers: Sequence[str], due_at: str
    ) -> bool:
        self._called("release_for_retry")
        changes: dict[str, Any] = {
            "status": JobStatus.PENDING,
            "error_message": reason,
            "requeued_at": due_at,
        }
        if skip_providers:
            changes["skip_providers"] = tuple(skip_providers)
        return self._record(message, log, **changes)

    def release_deferred(self, message: JobMessage, attempt: int, due_at: str) -> bool:
        self._called("release_deferred")
        job = self._jobs.get((message.tenant_id, message.job_id))
        state = None if job is None else job.state
        if (
            job is None
            or state is None
            or state.status is not JobStatus.PROCESSING
            or state.attempts != attempt
        ):
            return False
        job.state = replace(
            state,
            status=JobStatus.PENDING,
            attempts=attempt - 1,
            lease_until=None,
            requeued_at=due_at,
        )
        return True

    # -------------------------------------------------- JobEvents

    def expiry(self, tenant_id: str, job_id: str) -> int | None:
        self._called("expiry")
        job = self._jobs.get((tenant_id, job_id))
        # Only a claimed job (status item written with its expiry) was handed to a provider.
        return None if job is None or job.state is None else job.request.expires_at

    def add(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent, expires_at: int) -> bool:
        self._called("add")
        events = self._jobs[(tenant_id, job_id)].events
        key = (event.provider or "", event_id)
        if key in events:
            return False
        events[key] = (event, expires_at)
        return True

    def remove(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent) -> None:
        self._called("remove")
        self._jobs[(tenant_id, job_id)].events.pop((event.provider or "", event_id), None)

    # -------------------------------------------------- internals

    def _record(self, message: JobMessage, log: DeliveryLog, **changes: Any) -> bool:
        """The ownership condition of the adapter: still PROCESSING, still this attempt."""
        job = self._jobs.get((message.tenant_id, message.job_id))
        state = None if job is None else job.state
        if (
            job is None
            or state is None
            or state.status is not JobStatus.PROCESSING
            or state.attempts != log.attempt
        ):
            return False
        if log.used_provider:
            changes["used_provider"] = log.used_provider
        job.state = replace(state, delivery_logs=(*state.delivery_logs, log), lease_until=None, **changes)
        return True

    def _unchanged(self, state: JobState) -> bool:
        """The sweeper's condition: the job's status, attempts and last re-queue are as it read them."""
        now = self.state(state.tenant_id, state.job_id)
        return (now.status, now.attempts, now.requeued_at) == (
            state.status,
            state.attempts,
            state.requeued_at,
        )

    def _state(self, tenant_id: str, job_id: str) -> JobState | None:
        job = self._jobs.get((tenant_id, job_id))
        if job is None:
            return None
        if job.state is not None:
            return job.state
        accepted = job.request
        return JobState(
            accepted.job_id,
            accepted.tenant_id,
            accepted.request.channel,
            JobStatus.PENDING,
            accepted.priority,
            0,
            accepted.max_attempts,
            accepted.created_at,
        )


@dataclass
class FakeCounters(Recorder):
    """Counters keyed like the adapter's item: (tenant, period) holds the period's jobs and the
    current minute's requests; (tenant, day) the day's accepted jobs and outcomes (the adapter's
    ``ActivityCounters`` too)."""

    jobs: dict[tuple[str, str, str], int] = field(default_factory=dict)
    requests: dict[tuple[str, str], int] = field(default_factory=dict)
    day_counts: dict[tuple[str, date], Counter[str]] = field(default_factory=dict)
    outcome_tokens: dict[str, dict[tuple[str, date], dict[str, int]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__()

    def charge(
        self,
        tenant_id: str,
        period: str,
        minute: str,
        channel: Channel,
        *,
        rate_limit: int,
        quota: Quota | None,
        jobs: int = 1,
    ) -> None:
        self._called("charge")
        if quota is not None:
            used = self.jobs.get((tenant_id, period, quota.counter), 0)
            if used + jobs > quota.limit:
                raise QuotaExhausted(used)
        if self.requests.get((tenant_id, minute), 0) >= rate_limit:
            raise RateLimited
        self.requests[(tenant_id, minute)] = self.requests.get((tenant_id, minute), 0) + 1
        self._add(tenant_id, period, channel, jobs)
        self._day(tenant_id, minute)[f"accepted_{channel.value}"] += jobs

    def refund(
        self, tenant_id: str, period: str, channel: Channel, minute: str | None, jobs: int = 1
    ) -> None:
        self._called("refund")
        self._add(tenant_id, period, channel, -jobs)
        if minute is not None:
            self._day(tenant_id, minute)[f"accepted_{channel.value}"] -= jobs

    def _day(self, tenant_id: str, minute: str) -> Counter[str]:
        day = date(int(minute[:4]), int(minute[4:6]), int(minute[6:8]))
        return self.day_counts.setdefault((tenant_id, day), Counter())

    def add_outcomes(self, changes: Mapping[tuple[str, date], Mapping[str, int]], token: str) -> None:
        """Applied once per token, as DynamoDB applies a transaction's request token; the same token
        with other changes is the caller's error (DynamoDB's IdempotentParameterMismatch)."""
        self._called("add_outcomes")
        given = {tenant_day: dict(deltas) for tenant_day, deltas in changes.items()}
        if token in self.outcome_tokens:
            assert self.outcome_tokens[token] == given, f"token {token} repeated with other changes"
            return
        self.outcome_tokens[token] = given
        for tenant_day, deltas in given.items():
            self.day_counts.setdefault(tenant_day, Counter()).update(deltas)

    def days(self, tenant_id: str, first: date, last: date) -> list[DayCounts]:
        self._called("days")
        return [
            DayCounts(
                day,
                *(
                    {channel: counts[f"{kind}_{channel.value}"] for channel in Channel}
                    for kind in ("accepted", "completed", "failed")
                ),
            )
            for (tenant, day), counts in sorted(self.day_counts.items())
            if tenant == tenant_id and first <= day <= last
        ]

    def usage(self, tenant_id: str, period: str) -> Usage:
        self._called("usage")
        return Usage(
            self.jobs.get((tenant_id, period, "emails"), 0), self.jobs.get((tenant_id, period, "webhooks"), 0)
        )

    def _add(self, tenant_id: str, period: str, channel: Channel, amount: int) -> None:
        for counter in ("total", channel_counter(channel)):
            self.jobs[(tenant_id, period, counter)] = self.jobs.get((tenant_id, period, counter), 0) + amount


def _fingerprint(job: NewJob) -> str | None:
    """What the table keeps of a keyed job to tell a repeat of its key from a reuse."""
    return fingerprint(job.keyed_request) if job.keyed_request is not None else None
