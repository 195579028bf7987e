"""A tenant's activity by day (the console's chart) and the totals of job listings, from counters.

Accepted jobs are counted by the accept path's counter write; outcomes by ``DayCountTally`` from
the table's stream of status changes (TallyFunction), once per tenant and day for a whole stream
batch, so the cost per notification is a small fraction of a write unit and no delivery, sweep,
cancel or retry writes a counter itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
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
    from herald.domain.records import TenantContext
    from herald.services.ports import ActivityCounters


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
    write per tenant-day of a batch. A batch that fails is retried whole by its event source; the
    changes already added (``applied``, by stream sequence number, kept for this container's life
    of a retry) are not added twice."""

    def __init__(self, counters: ActivityCounters, applied: MutableMapping[str, bool]) -> None:
        self._counters = counters
        self._applied = applied

    def add(self, changes: Iterable[StatusChange]) -> int:
        """Counter writes made; raises ``DependencyError`` after trying every tenant-day if any
        write failed (those changes stay unapplied)."""
        tally = OutcomeTally()
        sequences: dict[tuple[str, date], list[str]] = {}
        for change in changes:
            if change.sequence not in self._applied:
                tally.change(change)
                sequences.setdefault((change.tenant_id, day_of(change.created_at)), []).append(
                    change.sequence
                )
        written = [
            self._write(tenant_day, tally.changes.get(tenant_day, {}), applied)
            for tenant_day, applied in sequences.items()
        ]
        if None in written:
            raise DependencyError(f"{written.count(None)} of {len(sequences)} day count writes failed")
        return sum(filter(None, written))

    def _write(
        self, tenant_day: tuple[str, date], changes: Mapping[str, int], applied: list[str]
    ) -> int | None:
        """Writes made for one tenant-day (0: its changes cancel out); None when the write failed."""
        tenant_id, day = tenant_day
        counted = {name: delta for name, delta in changes.items() if delta}
        try:
            if counted:
                self._counters.add_outcomes(tenant_id, day, counted)
        except DependencyError as exc:
            logger.error(
                "day counts not added; the batch is retried",
                extra={
                    "tenant_id": tenant_id,
                    "day": day.isoformat(),
                    "changes": counted,
                    "reason": str(exc),
                },
            )
            return None
        self._applied.update((sequence, True) for sequence in applied)
        return 1 if counted else 0
