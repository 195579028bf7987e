"""A tenant's activity by day (the console's chart) and the totals of job listings, from counters.

Accepted jobs are counted by the accept path's counter write; outcomes are added here, once per
tenant and day for a whole worker batch (``OutcomeTally``), so the cost per notification stays a
fraction of a write unit. A failed counter write is logged with what it would have added and
counted as a metric: the jobs themselves are delivered and recorded either way, and the listing
shows them; only the chart and the totals of that day would read low.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from herald.domain.activity import (
    ACTIVITY_RANGES,
    DayCounts,
    OutcomeTally,
    day_of,
    merge_days,
    series,
)
from herald.domain.clock import utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.domain.plans import limits_for
from herald.observability import count, logger

if TYPE_CHECKING:
    from herald.domain.records import TenantContext
    from herald.services.ports import ActivityCounters


@dataclass(frozen=True)
class Activity:
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

    def record(self, tally: OutcomeTally) -> None:
        """One counter write per tenant and day of the tally."""
        for (tenant_id, day), changes in tally.changes.items():
            if not any(changes.values()):
                continue
            try:
                self._counters.add_outcomes(tenant_id, day, dict(changes))
            except DependencyError as exc:
                logger.error(
                    "activity counts not recorded",
                    extra={
                        "tenant_id": tenant_id,
                        "day": day.isoformat(),
                        "changes": dict(changes),
                        "reason": str(exc),
                    },
                )
                count("ActivityCountsLost", value=sum(abs(delta) for delta in changes.values()))

    def reopened(self, tenant_id: str, created_at: str, channel: Channel) -> None:
        """A failed job retried: it leaves the day's failed count (its new outcome is counted anew)."""
        tally = OutcomeTally()
        tally.add(tenant_id, created_at, channel, JobStatus.FAILED, -1)
        self.record(tally)

    def failed(self, tenant_id: str, created_at: str, channel: Channel) -> None:
        """A job failed outside a worker batch (its queue refused it)."""
        self._ended(tenant_id, created_at, channel, JobStatus.FAILED)

    def cancelled(self, tenant_id: str, created_at: str, channel: Channel) -> None:
        self._ended(tenant_id, created_at, channel, JobStatus.CANCELLED)

    def _ended(self, tenant_id: str, created_at: str, channel: Channel, status: JobStatus) -> None:
        tally = OutcomeTally()
        tally.add(tenant_id, created_at, channel, status)
        self.record(tally)
