"""The sweeper (SweeperFunction, on a schedule): jobs that lost their queue message are re-queued, or
failed with a reason and a dead-letter copy once re-queueing has not helped.

Where it looks: at a few checkpoint ages (``stuck_after``, twice that, ... up to ``window``), the
jobs that reached the age since the last complete run (a mark in the table), of the tenants that
accepted jobs since the oldest range began (never a scan, never every tenant): so each job is read
once per checkpoint in its life, and a run reads what crossed a checkpoint since the last one,
whatever the history, the number of tenants or the schedule's cadence. See ``DynamoSweepStore`` for the read units and docs/operations.md for what falls outside
the window.

Idempotent: every action is a conditional write on the state the sweeper read (a job that moved
meanwhile is left alone), and a re-queued job is quiet again only ``stuck_after`` later. A queue that
still has messages waiting may hold the job's message: its jobs are left for a later run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

import msgspec
from msgspec.structs import asdict, replace

from herald.domain.alerts import JobAlert
from herald.domain.clock import epoch_seconds, iso, parse_iso, utc_now
from herald.domain.dead_letters import FailedJobCopy
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage, JobState
from herald.domain.jobs import Channel, QueuePriority, queue_priority
from herald.domain.plans import retention_end
from herald.domain.sweeping import MAX_REQUEUES, is_stuck, slices, stuck_reason
from herald.observability import correlation_id, count, logger
from herald.services.delivery import metric_dimensions
from herald.services.outcomes import TenantNotFound
from herald.services.ports.jobs import DeadLetters, JobQueue, QueueDepths, SweepStore
from herald.services.ports.platform import Alerts
from herald.services.ports.tenants import TenantStore

# Stop starting tenants with this little time left in the invocation (a tenant takes well under it).
RESERVE_MILLIS = 10_000


class SweepPolicy(msgspec.Struct, frozen=True):
    stuck_after: timedelta
    window: timedelta
    max_requeues: int = MAX_REQUEUES


class SweepReport(msgspec.Struct):
    tenants: int = 0
    examined: int = 0
    requeued: int = 0
    failed: int = 0
    deferred: int = 0
    errors: int = 0
    # False when the invocation ran out of time before the last tenant.
    complete: bool = True

    def as_dict(self) -> dict[str, int | bool]:
        return asdict(self)


class Sweeper:
    def __init__(
        self,
        policy: SweepPolicy,
        *,
        store: SweepStore,
        tenants: TenantStore,
        queue: JobQueue,
        depths: QueueDepths,
        queue_urls: Mapping[tuple[Channel, QueuePriority], str],
        ordered_queue_urls: Mapping[Channel, str],
        dead_letters: DeadLetters,
        alerts: Alerts,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._policy = policy
        self._store = store
        self._tenants = tenants
        self._queue = queue
        self._depths = depths
        self._queue_urls = queue_urls
        self._ordered_queue_urls = ordered_queue_urls
        self._dead_letters = dead_letters
        self._alerts = alerts
        self._clock = clock

    def sweep(self, millis_left: Callable[[], int]) -> SweepReport:
        run = _Run(self._clock())
        # The first run ever reads as if the last one had been one threshold ago.
        since = self._store.last_sweep() or run.now - self._policy.stuck_after
        ranges = slices(since, run.now, self._policy.stuck_after, self._policy.window)
        for tenant_id in self._store.active_tenants(min(start for start, _ in ranges)):
            if millis_left() < RESERVE_MILLIS:
                run.report.complete = False
                break
            self._tenant(run, tenant_id, ranges)
        if run.report.complete and not run.report.errors:
            # A run that missed something leaves the mark: the next one reads its ranges again.
            self._store.swept(run.now)
        count("SweepExamined", value=run.report.examined)
        logger.info("sweep finished", extra=run.report.as_dict())
        return run.report

    def _tenant(self, run: _Run, tenant_id: str, ranges: list[tuple[datetime, datetime]]) -> None:
        run.report.tenants += 1
        try:
            jobs = [
                job
                for created_from, created_until in ranges
                for job in self._store.unfinished(tenant_id, iso(created_from), iso(created_until))
            ]
        except DependencyError as exc:
            run.error(tenant_id, None, exc)
            return
        run.report.examined += len(jobs)
        stuck = [state for state in jobs if is_stuck(state, run.now, self._policy.stuck_after)]
        if not stuck:
            return
        try:
            plan = self._tenants.profile(tenant_id).plan
        except (TenantNotFound, DependencyError) as exc:
            run.error(tenant_id, None, exc)
            return
        for state in stuck:
            try:
                self._act(run, state, plan)
            except DependencyError as exc:
                run.error(tenant_id, state.job_id, exc)

    def _act(self, run: _Run, state: JobState, plan: str) -> None:
        state = self._with_key(state)
        message = state.next_message(plan, correlation_id())
        dimensions = metric_dimensions(message)
        if state.sweeps >= self._policy.max_requeues:
            self._fail(run, state, message, dimensions)
            return
        if self._backlog(run, state) > 0:
            run.report.deferred += 1
            count("SweepDeferred", dimensions)
            return
        if not self._store.mark_requeued(state, iso(run.now), _expires_at(state, plan)):
            return  # it moved since it was read: not stuck after all
        self._queue.enqueue(message, queue_priority(state.priority))
        run.report.requeued += 1
        count("SweptRequeued", dimensions)
        logger.warning(
            "stuck job re-queued",
            extra={"job_id": state.job_id, "tenant_id": state.tenant_id, "status": state.status.value},
        )

    def _fail(self, run: _Run, state: JobState, message: JobMessage, dimensions: dict[str, str]) -> None:
        reason = stuck_reason(state.sweeps)
        request = self._store.request(state.tenant_id, state.job_id)
        # The operator's copy first, as the delivery engine does: a failed send leaves the job as it is.
        self._dead_letters.send(
            FailedJobCopy(message, request, reason, state.attempts, state.max_attempts, iso(run.now))
        )
        if not self._store.fail(state, reason, iso(run.now)):
            return
        run.report.failed += 1
        count("SweptFailed", dimensions)
        count("DeadLettered", dimensions)
        self._alerts.dead_lettered(JobAlert.of(message, state.attempts, reason))
        logger.warning("stuck job failed", extra={"job_id": state.job_id, "tenant_id": state.tenant_id})

    def _with_key(self, state: JobState) -> JobState:
        """A job no worker has claimed has no status item to carry its ordering key yet: its request
        does (one read, for stuck jobs only). Re-queued without it, a keyed job would overtake its
        key's earlier jobs through a priority queue."""
        if state.ordering_key is not None or state.attempts > 0:
            return state
        key = self._store.request(state.tenant_id, state.job_id).ordering_key
        return state if key is None else replace(state, ordering_key=key)

    def _backlog(self, run: _Run, state: JobState) -> int:
        """Messages waiting in the job's queue: while there are some, the job may just be waiting."""
        url = (
            self._queue_urls[(state.channel, queue_priority(state.priority))]
            if state.ordering_key is None
            else self._ordered_queue_urls[state.channel]
        )
        if url not in run.backlogs:
            run.backlogs[url] = self._depths.visible(url)
        return run.backlogs[url]


class _Run(msgspec.Struct):
    """One sweep: when it started, the queue backlogs it read, and what it did."""

    now: datetime
    report: SweepReport = msgspec.field(default_factory=SweepReport)
    backlogs: dict[str, int] = msgspec.field(default_factory=dict)

    def error(self, tenant_id: str, job_id: str | None, exc: Exception) -> None:
        self.report.errors += 1
        count("SweepErrors")
        logger.error(
            "sweep step failed", extra={"tenant_id": tenant_id, "job_id": job_id, "reason": str(exc)}
        )


def _expires_at(state: JobState, plan: str) -> int:
    """The job's retention, counted from its acceptance like its other items."""
    return epoch_seconds(retention_end(plan, parse_iso(state.created_at)))
