"""Day counts: accepted jobs counted by the accept path's counter write, outcomes added once per
tenant and day per worker batch, and the totals job listings take from them."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from herald.domain.activity import DayCounts, OutcomeTally, merge_days, series
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.domain.records import TenantContext
from herald.services.activity import ActivityService
from tests.fakes.jobs import FakeCounters

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TENANT = TenantContext("tenant-a", "indie", "active", "hash", NOW)


def counters_with_history() -> FakeCounters:
    counters = FakeCounters()
    for minute, channel in [
        ("202611291000", Channel.EMAIL),
        ("202611300800", Channel.EMAIL),
        ("202611300900", Channel.WEBHOOK),
    ]:
        counters.charge("tenant-a", "p", minute, channel, rate_limit=100, quota=None)
    counters.add_outcomes("tenant-a", date(2026, 11, 30), {"completed_email": 1, "failed_webhook": 1})
    counters.add_outcomes("tenant-a", date(2026, 11, 29), {"completed_email": 1})
    return counters


def test_the_activity_of_a_range_has_every_day_oldest_first_with_totals_and_success_rate() -> None:
    activity = ActivityService(counters_with_history(), clock=lambda: NOW).activity(TENANT, 7)
    assert [entry.day for entry in activity.days][0] == date(2026, 11, 24)
    assert len(activity.days) == 7
    assert activity.days[-1].count(None, None) == 2
    assert (activity.total(None), activity.total(JobStatus.COMPLETED), activity.total(JobStatus.FAILED)) == (
        3,
        2,
        1,
    )
    assert activity.success_rate == pytest.approx(2 / 3)


def test_only_the_offered_ranges_are_accepted() -> None:
    with pytest.raises(HeraldError) as caught:
        ActivityService(FakeCounters(), clock=lambda: NOW).activity(TENANT, 365)
    assert caught.value.code is ErrorCode.VALIDATION_ERROR


def test_listing_totals_come_from_the_counters_by_day_type_and_outcome() -> None:
    service = ActivityService(counters_with_history(), clock=lambda: NOW)
    assert service.total(TENANT, None, None, None) == 3
    assert service.total(TENANT, Channel.EMAIL, None, None) == 2
    assert service.total(TENANT, None, JobStatus.FAILED, None) == 1
    assert service.total(TENANT, Channel.EMAIL, JobStatus.COMPLETED, date(2026, 11, 29)) == 1
    assert service.total(TENANT, Channel.WEBHOOK, None, date(2026, 11, 29)) == 0


def test_a_batch_costs_one_counter_write_per_tenant_and_day_whatever_its_size() -> None:
    counters = FakeCounters()
    tally = OutcomeTally()
    for _ in range(5):
        tally.add("tenant-a", "2026-11-30T08:00:00.000Z", Channel.EMAIL, JobStatus.COMPLETED)
    tally.add("tenant-a", "2026-11-29T23:59:59.999Z", Channel.EMAIL, JobStatus.FAILED)
    tally.add("tenant-b", "2026-11-30T08:00:00.000Z", Channel.WEBHOOK, JobStatus.COMPLETED)
    tally.add("tenant-b", "2026-11-30T08:00:00.000Z", Channel.WEBHOOK, JobStatus.PENDING)
    ActivityService(counters).record(tally)
    assert counters.calls == ["add_outcomes"] * 3
    assert counters.day_counts[("tenant-a", date(2026, 11, 30))]["completed_email"] == 5


def test_a_retried_failure_leaves_the_failed_count() -> None:
    counters = counters_with_history()
    service = ActivityService(counters, clock=lambda: NOW)
    service.reopened("tenant-a", "2026-11-30T09:00:00.000Z", Channel.WEBHOOK)
    assert service.total(TENANT, None, JobStatus.FAILED, None) == 0


def test_counter_items_of_the_same_day_add_up_and_missing_days_count_zero() -> None:
    day = date(2026, 11, 30)
    merged = merge_days(
        [DayCounts(day, accepted={Channel.EMAIL: 2}), DayCounts(day, completed={Channel.EMAIL: 1})]
    )
    assert merged[day].count(None, Channel.EMAIL) == 2
    assert merged[day].count(JobStatus.COMPLETED, None) == 1
    filled = series(merged, date(2026, 11, 28), day)
    assert [entry.count(None, None) for entry in filled] == [0, 0, 2]
