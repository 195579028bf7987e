"""A tenant's activity by day: jobs accepted, completed and failed per UTC day and channel.

The counts come from counters, never from reading a tenant's jobs, so a chart of 90 days or the
total of a job listing costs a bounded read whatever the tenant's volume. A job is counted on the
day it was accepted (its ``createdAt``), so a day's completed and failed counts are outcomes of that
day's jobs, and the listing's filters by day and status agree with them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta

import msgspec

from herald.domain.jobs import Channel, JobStatus

# The chart's ranges (the console's 7 / 30 / 90 days).
ACTIVITY_RANGES = (7, 30, 90)
# The outcomes counted per day (the in-flight and scheduled statuses are the difference to the
# accepted count).
COUNTED_OUTCOMES = (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


def day_of(moment: str | datetime) -> date:
    """The UTC day of an ISO-8601 time as Herald writes it (``2026-11-30T08:00:00.000Z``)."""
    if isinstance(moment, datetime):
        return moment.date()
    return date.fromisoformat(moment[:10])


def outcome_field(status: JobStatus, channel: Channel) -> str:
    """The counter of one outcome on one channel: ``completed_email``, ``failed_webhook``, ..."""
    return f"{status.value}_{channel.value}"


class DayCounts(msgspec.Struct, frozen=True):
    """One day of a tenant's jobs, by channel."""

    day: date
    accepted: Mapping[Channel, int] = msgspec.field(default_factory=dict)
    completed: Mapping[Channel, int] = msgspec.field(default_factory=dict)
    failed: Mapping[Channel, int] = msgspec.field(default_factory=dict)
    cancelled: Mapping[Channel, int] = msgspec.field(default_factory=dict)

    def count(self, status: JobStatus | None, channel: Channel | None) -> int:
        """Jobs of this day with ``status`` (None: all accepted) on ``channel`` (None: both)."""
        counts = {
            None: self.accepted,
            JobStatus.COMPLETED: self.completed,
            JobStatus.FAILED: self.failed,
            JobStatus.CANCELLED: self.cancelled,
        }
        by_channel = counts.get(status, {})
        channels = list(Channel) if channel is None else [channel]
        return sum(by_channel.get(each, 0) for each in channels)


def merge_days(days: Iterable[DayCounts]) -> dict[date, DayCounts]:
    """Counts of the same day from several counter items (a billing period that changed mid-day)
    added together."""
    merged: dict[date, DayCounts] = {}
    for entry in days:
        seen = merged.get(entry.day)
        merged[entry.day] = entry if seen is None else _added(seen, entry)
    return merged


def _added(one: DayCounts, other: DayCounts) -> DayCounts:
    def plus(a: Mapping[Channel, int], b: Mapping[Channel, int]) -> dict[Channel, int]:
        return {channel: a.get(channel, 0) + b.get(channel, 0) for channel in {*a, *b}}

    return DayCounts(
        one.day,
        plus(one.accepted, other.accepted),
        plus(one.completed, other.completed),
        plus(one.failed, other.failed),
        plus(one.cancelled, other.cancelled),
    )


def series(days: Mapping[date, DayCounts], first: date, last: date) -> list[DayCounts]:
    """Every day from ``first`` to ``last``, oldest first; days without counters count zero."""
    span = (last - first).days
    return [days.get(first + timedelta(n)) or DayCounts(first + timedelta(n)) for n in range(span + 1)]


class StatusChange(msgspec.Struct, frozen=True):
    """One write of a job's status item, as the table's stream reports it: the status before and
    after (None: the item had none, or was new). ``sequence`` names the change in its stream."""

    sequence: str
    tenant_id: str
    created_at: str
    channel: Channel
    old: JobStatus | None
    new: JobStatus | None


class OutcomeTally(msgspec.Struct):
    """Status changes added up per tenant and day, so each tenant-day costs one counter write
    however many of its jobs changed: a job leaves the count of its old status and joins its new
    one's (a retried failed job leaves the failed count; most writes change nothing counted)."""

    changes: dict[tuple[str, date], Counter[str]] = msgspec.field(default_factory=dict)

    def add(
        self, tenant_id: str, created_at: str, channel: Channel, status: JobStatus, delta: int = 1
    ) -> None:
        if status not in COUNTED_OUTCOMES:
            return
        counter = self.changes.setdefault((tenant_id, day_of(created_at)), Counter())
        counter[outcome_field(status, channel)] += delta

    def change(self, change: StatusChange) -> None:
        if change.old == change.new:
            return
        if change.old is not None:
            self.add(change.tenant_id, change.created_at, change.channel, change.old, -1)
        if change.new is not None:
            self.add(change.tenant_id, change.created_at, change.channel, change.new)
