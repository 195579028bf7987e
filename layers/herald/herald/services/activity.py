"""A tenant's activity by day (the console's chart) and the totals of job listings, from counters.

Accepted jobs are counted by the accept path's counter write; outcomes by ``DayCountTally`` from
the table's stream of status changes (TallyFunction), once per tenant and day for a whole stream
batch, so the cost per notification is a small fraction of a write unit and no delivery, sweep,
cancel or retry writes a counter itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec

from herald.domain.activity import (
    ACTIVITY_RANGES,
    DayCounts,
    OutcomeTally,
    StatusChange,
    day_of,
    merge_days,
    series,
)
from herald.domain.clock import utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.domain.plans import limits_for
from herald.observability import logger

if TYPE_CHECKING:
    from herald.domain.account import TenantContext
    from herald.services.ports.tenants import ActivityCounters


class Activity(msgspec.Struct, frozen=True):
    """The days of a range, oldest first, with their sums."""

    days: tuple[DayCounts, ...]

    def total(self, status: JobStatus | None) -> int:
        return sum(day.count(status, None) for day in self.days)

    @property
    def success_rate(self) -> float | None:
        """Completed of finished jobs (None before any job finished)."""
        completed, failed = self.total(JobStatus.COMPLETED), self.total(JobStatus.FAILED)
        return completed / (completed + failed) if completed + failed else None


class ActivityService:
    def __init__(self, counters: ActivityCounters, clock: Callable[[], datetime] = utc_now) -> None:
        self._counters = counters
        self._clock = clock

    def activity(self, tenant: TenantContext, days: int) -> Activity:
        if days not in ACTIVITY_RANGES:
            ranges = ", ".join(str(each) for each in ACTIVITY_RANGES)
            raise HeraldError(f"days must be one of {ranges}.", ErrorCode.VALIDATION_ERROR)
        last = day_of(self._clock())
        first = last - timedelta(days=days - 1)
        counted = merge_days(self._counters.days(tenant.tenant_id, first, last))
        return Activity(tuple(series(counted, first, last)))

    def total(
        self, tenant: TenantContext, channel: Channel | None, status: JobStatus | None, day: date | None
    ) -> int:
        """How many of the tenant's jobs a listing with these filters holds: the jobs of ``day``, or
        of every day the plan keeps jobs (older ones have expired)."""
        last = day_of(self._clock())
        first = day or last - timedelta(days=limits_for(tenant.plan).retention_days)
        counted = self._counters.days(tenant.tenant_id, first, day or last)
        return max(sum(entry.count(status, channel) for entry in counted), 0)


class DayCountTally:
    """Adds the status changes of the table's stream to the day counts (TallyFunction): one counter
    write per tenant-day of a batch. A batch that fails is retried whole by its event source, in
    this container or another; its writes carry a token named after the batch's changes, so what an
    earlier try added is not added again."""

    def __init__(self, counters: ActivityCounters) -> None:
        self._counters = counters

    def add(self, changes: Iterable[StatusChange]) -> int:
        """Tenant-days written (changes that cancel out write nothing); raises ``DependencyError``
        if a write failed."""
        batch = list(changes)
        tally = OutcomeTally()
        for change in batch:
            tally.change(change)
        counted = {
            tenant_day: nonzero
            for tenant_day, deltas in tally.changes.items()
            if (nonzero := {name: delta for name, delta in deltas.items() if delta})
        }
        if not counted:
            return 0
        try:
            self._counters.add_outcomes(counted, _token(batch))
        except DependencyError as exc:
            logger.error(
                "day counts not added; the batch is retried",
                extra={"tenant_days": len(counted), "changes": len(batch), "reason": str(exc)},
            )
            raise
        return len(counted)


def _token(batch: list[StatusChange]) -> str:
    """The same for every try of a stream batch (its changes' sequence numbers), 32 characters."""
    sequences = "\n".join(sorted(change.sequence for change in batch))
    return hashlib.sha256(sequences.encode()).hexdigest()[:32]
