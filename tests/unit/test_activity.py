"""Day counts: accepted jobs counted by the accept path's counter write, outcomes added once per
tenant and day per worker batch, and the totals job listings take from them."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime

import pytest

from herald.domain.account import TenantContext
from herald.domain.activity import DayCounts, StatusChange, merge_days, series
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.services.activity import ActivityService, DayCountTally
from tests.fakes.common import full_grant
from tests.fakes.jobs import FakeCounters

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TENANT = TenantContext("tenant-a", "indie", "active", full_grant(), NOW)


def counters_with_history() -> FakeCounters:
    counters = FakeCounters()
    for minute, channel in [
        ("202611291000", Channel.EMAIL),
        ("202611300800", Channel.EMAIL),
        ("202611300900", Channel.WEBHOOK),
    ]:
        counters.charge("tenant-a", "p", minute, channel, rate_limit=100, quota=None)
    counters.add_outcomes(
        {
            ("tenant-a", date(2026, 11, 30)): {"completed_email": 1, "failed_webhook": 1},
            ("tenant-a", date(2026, 11, 29)): {"completed_email": 1},
        },
        "history",
    )
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


def change(
    sequence: int,
    old: JobStatus | None,
    new: JobStatus,
    *,
    tenant_id: str = "tenant-a",
    created_at: str = "2026-11-30T08:00:00.000Z",
    channel: Channel = Channel.EMAIL,
) -> StatusChange:
    return StatusChange(str(sequence), tenant_id, created_at, channel, old, new)


def test_a_stream_batch_costs_one_counter_write_per_tenant_and_day_whatever_its_size() -> None:
    counters = FakeCounters()
    changes = [change(n, JobStatus.PROCESSING, JobStatus.COMPLETED) for n in range(5)]
    changes += [
        change(5, JobStatus.PROCESSING, JobStatus.FAILED, created_at="2026-11-29T23:59:59.999Z"),
        change(6, None, JobStatus.PROCESSING, tenant_id="tenant-b"),
        change(7, JobStatus.PROCESSING, JobStatus.COMPLETED, tenant_id="tenant-b", channel=Channel.WEBHOOK),
    ]
    assert DayCountTally(counters).add(changes) == 3
    assert counters.calls == ["add_outcomes"]
    (written,) = counters.outcome_tokens.values()
    assert written == {
        ("tenant-a", date(2026, 11, 30)): {"completed_email": 5},
        ("tenant-a", date(2026, 11, 29)): {"failed_email": 1},
        ("tenant-b", date(2026, 11, 30)): {"completed_webhook": 1},
    }


def test_writes_that_change_no_counted_status_cost_no_counter_write() -> None:
    counters = FakeCounters()
    changes = [
        change(1, None, JobStatus.PROCESSING),
        change(2, JobStatus.PROCESSING, JobStatus.PENDING),  # a pass that is retried
        change(3, JobStatus.COMPLETED, JobStatus.COMPLETED),  # a provider's event on a finished job
    ]
    assert DayCountTally(counters).add(changes) == 0
    assert counters.calls == []


def test_a_retried_failure_leaves_the_failed_count_and_its_new_outcome_joins_its_own() -> None:
    counters = counters_with_history()
    service = ActivityService(counters, clock=lambda: NOW)
    created = "2026-11-30T09:00:00.000Z"
    DayCountTally(counters).add(
        [
            change(1, JobStatus.FAILED, JobStatus.PENDING, created_at=created, channel=Channel.WEBHOOK),
            change(2, JobStatus.PROCESSING, JobStatus.COMPLETED, created_at=created, channel=Channel.WEBHOOK),
        ]
    )
    assert service.total(TENANT, None, JobStatus.FAILED, None) == 0
    assert service.total(TENANT, Channel.WEBHOOK, JobStatus.COMPLETED, None) == 1


def test_a_batch_retried_in_another_container_is_not_counted_twice() -> None:
    counters = FakeCounters()
    changes = [
        change(1, JobStatus.PROCESSING, JobStatus.COMPLETED),
        change(2, JobStatus.PROCESSING, JobStatus.COMPLETED, tenant_id="tenant-b"),
    ]
    assert DayCountTally(counters).add(changes) == 2
    # The event source retries the batch (the first try's answer was lost) in a fresh container.
    assert DayCountTally(counters).add(list(reversed(changes))) == 2
    assert len(counters.outcome_tokens) == 1
    assert counters.day_counts[("tenant-a", date(2026, 11, 30))]["completed_email"] == 1
    assert counters.day_counts[("tenant-b", date(2026, 11, 30))]["completed_email"] == 1
    # The next batch, with other changes of the same tenant-days, is a write of its own.
    DayCountTally(counters).add([change(3, JobStatus.PROCESSING, JobStatus.COMPLETED)])
    assert counters.day_counts[("tenant-a", date(2026, 11, 30))]["completed_email"] == 2


def test_a_failed_write_fails_the_batch_and_says_so_without_counting_it() -> None:
    class Refusing(FakeCounters):
        def add_outcomes(self, changes: Mapping[tuple[str, date], Mapping[str, int]], token: str) -> None:
            raise DependencyError("day count write failed: ProvisionedThroughputExceededException")

    counters = Refusing()
    with pytest.raises(DependencyError, match="day count write failed: ProvisionedThroughput"):
        DayCountTally(counters).add([change(1, JobStatus.PROCESSING, JobStatus.COMPLETED)])
    assert counters.day_counts == {}


def test_counter_items_of_the_same_day_add_up_and_missing_days_count_zero() -> None:
    day = date(2026, 11, 30)
    merged = merge_days(
        [DayCounts(day, accepted={Channel.EMAIL: 2}), DayCounts(day, completed={Channel.EMAIL: 1})]
    )
    assert merged[day].count(None, Channel.EMAIL) == 2
    assert merged[day].count(JobStatus.COMPLETED, None) == 1
    filled = series(merged, date(2026, 11, 28), day)
    assert [entry.count(None, None) for entry in filled] == [0, 0, 2]
