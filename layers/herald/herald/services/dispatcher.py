"""The dispatcher (DispatcherFunction, every minute): scheduled jobs whose time comes before the next
run are taken off the due-time index and queued, each with the SQS delay left until its sendAt.

Race-safe against the tenant's cancel: both are conditional writes on the job's status being
``scheduled``, so exactly one wins. The claim comes before the send: if the send fails, the job is
put back to ``scheduled`` for the next run; if the dispatcher dies between the two, the sweeper finds
the job pending without a message once it has been quiet long enough, as for any lost message.

AWS calls per run: 1 Query per due-time shard (``DUE_SHARDS``); per tenant with due jobs 1 GetItem
(its plan, judged at send time like everything else about the tenant); per job 1 conditional
UpdateItem and 1 SQS SendMessage.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import msgspec
from msgspec.structs import asdict

from herald.domain.clock import iso, utc_now
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import queue_priority
from herald.domain.scheduling import DISPATCH_HORIZON_SECONDS, DueJob, delay_seconds
from herald.observability import correlation_id, count, logger
from herald.services.outcomes import TenantNotFound
from herald.services.ports.jobs import JobQueue, Schedules
from herald.services.ports.tenants import TenantStore

# Stop starting jobs with this little time left in the invocation; the next run takes the rest.
RESERVE_MILLIS = 5_000


class DispatchReport(msgspec.Struct):
    dispatched: int = 0
    # Cancelled (or dispatched by an overlapping run) between the index read and the claim.
    taken_meanwhile: int = 0
    errors: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class Dispatcher:
    def __init__(
        self,
        schedules: Schedules,
        queue: JobQueue,
        tenants: TenantStore,
        *,
        horizon_seconds: int = DISPATCH_HORIZON_SECONDS,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._schedules = schedules
        self._queue = queue
        self._tenants = tenants
        self._horizon = timedelta(seconds=horizon_seconds)
        self._clock = clock

    def dispatch(self, remaining_millis: Callable[[], int]) -> DispatchReport:
        report = DispatchReport()
        plans: dict[str, str | None] = {}
        for job in self._schedules.due(iso(self._clock() + self._horizon)):
            if remaining_millis() < RESERVE_MILLIS:
                break
            try:
                self._dispatch(job, plans, report)
            except DependencyError as exc:
                logger.error("dispatch failed", extra={"job_id": job.job_id, "reason": str(exc)})
                report.errors += 1
        count("Dispatched", value=report.dispatched)
        return report

    def _dispatch(self, job: DueJob, plans: dict[str, str | None], report: DispatchReport) -> None:
        plan = self._plan(job.tenant_id, plans)
        if plan is None:
            report.errors += 1
            return
        now = self._clock()
        if job.ordering_key is not None and job.send_at > iso(now):
            # A FIFO queue cannot delay one message: a keyed job is queued once due (a later run).
            return
        # Quiet (for the sweeper) from its due time on, not from when it was accepted days ago.
        if not self._schedules.start_dispatch(job, max(iso(now), job.send_at)):
            report.taken_meanwhile += 1
            return
        message = JobMessage(
            job.job_id,
            job.tenant_id,
            job.channel,
            plan,
            0,
            None,
            job.priority,
            job.created_at,
            correlation_id(),
            send_at=job.send_at,
            ordering_key=job.ordering_key,
        )
        try:
            self._queue.enqueue(message, queue_priority(job.priority), delay_seconds(job.send_at, now))
        except DependencyError:
            self._schedules.undo_dispatch(job)
            raise
        report.dispatched += 1

    def _plan(self, tenant_id: str, plans: dict[str, str | None]) -> str | None:
        """The tenant's plan now, read once per run; None for a tenant that no longer exists."""
        if tenant_id not in plans:
            try:
                plans[tenant_id] = self._tenants.profile(tenant_id).plan
            except TenantNotFound:
                logger.error("scheduled job of an unknown tenant", extra={"tenant_id": tenant_id})
                plans[tenant_id] = None
        return plans[tenant_id]
