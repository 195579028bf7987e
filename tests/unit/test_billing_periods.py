"""Billing periods: monthly periods from an anchor, and the daily quota-reset run (roll-over, the
7-day grace of a lapsed subscription, then the free plan) — idempotent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from msgspec.structs import replace

from herald.domain.clock import iso
from herald.domain.plans import add_months, current_period
from herald.services.billing import ADVANCED, IN_GRACE, LAPSED, QuotaReset
from tests.fakes.tenants import FakeTenantTable

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("anchor", "months", "expected"),
    [
        (datetime(2026, 1, 31, 9, tzinfo=UTC), 1, datetime(2026, 2, 28, 9, tzinfo=UTC)),
        (datetime(2024, 1, 31, 9, tzinfo=UTC), 1, datetime(2024, 2, 29, 9, tzinfo=UTC)),
        (datetime(2026, 1, 31, 9, tzinfo=UTC), 2, datetime(2026, 3, 31, 9, tzinfo=UTC)),
        (datetime(2026, 11, 15, tzinfo=UTC), 2, datetime(2027, 1, 15, tzinfo=UTC)),
        (datetime(2026, 3, 31, tzinfo=UTC), -1, datetime(2026, 2, 28, tzinfo=UTC)),
    ],
)
def test_months_are_added_from_the_anchor_clamped_to_the_months_last_day(
    anchor: datetime, months: int, expected: datetime
) -> None:
    assert add_months(anchor, months) == expected


def test_periods_never_drift_through_short_months() -> None:
    anchor = datetime(2026, 1, 31, 9, tzinfo=UTC)
    march = current_period(anchor, datetime(2026, 3, 30, tzinfo=UTC))
    assert (march.start, march.end) == (
        datetime(2026, 2, 28, 9, tzinfo=UTC),
        datetime(2026, 3, 31, 9, tzinfo=UTC),
    )
    assert current_period(anchor, datetime(2026, 3, 31, 9, tzinfo=UTC)).start == datetime(
        2026, 3, 31, 9, tzinfo=UTC
    )


def test_a_period_contains_its_start_and_not_its_end() -> None:
    anchor = datetime(2026, 11, 15, tzinfo=UTC)
    assert current_period(anchor, anchor).start == anchor
    assert current_period(anchor, anchor - timedelta(microseconds=1)).end == anchor


class Rig:
    def __init__(self) -> None:
        self.table = FakeTenantTable()
        self.now = NOW

    def reset(self) -> QuotaReset:
        return QuotaReset(self.table, clock=lambda: self.now)

    def paid(self, tenant_id: str, paid_until: datetime | None) -> None:
        self.table.add_tenant(tenant_id, "startup")
        profile = self.table.profiles[tenant_id]
        self.table.profiles[tenant_id] = replace(
            profile,
            period_anchor=iso(datetime(2026, 10, 20, tzinfo=UTC)),
            paid_until=iso(paid_until) if paid_until else None,
        )


def test_a_run_records_each_free_tenants_period_once() -> None:
    rig = Rig()
    rig.table.add_tenant("free-1", "free")  # anchored 2025-01-01T00:00

    first = rig.reset().run()
    second = rig.reset().run()

    assert first.outcomes == {ADVANCED: 1}
    # Its next period end is a month away: the second run does not even read it.
    assert (second.outcomes, rig.table.reset_reads) == ({}, [])
    assert rig.table.profiles["free-1"].period_end == "2026-12-01T00:00:00.000Z"
    rig.now = datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC)
    assert rig.reset().run().outcomes == {ADVANCED: 1}
    assert rig.table.profiles["free-1"].period_end == "2027-01-01T00:00:00.000Z"


def test_a_paid_tenant_keeps_its_plan_through_the_grace_then_moves_to_free() -> None:
    rig = Rig()
    rig.paid("paid-1", paid_until=NOW - timedelta(days=6, hours=23))
    rig.paid("paid-2", paid_until=NOW - timedelta(days=7))

    summary = rig.reset().run()

    assert summary.outcomes == {IN_GRACE: 1, LAPSED: 1}
    assert rig.table.profiles["paid-1"].plan == "startup"
    lapsed = rig.table.profiles["paid-2"]
    assert (lapsed.plan, lapsed.paid_until, lapsed.period_anchor) == ("free", None, iso(NOW))
    assert lapsed.period_end == "2026-12-30T12:00:00.000Z"


def test_running_twice_or_late_changes_nothing_more() -> None:
    rig = Rig()
    rig.paid("paid-1", paid_until=NOW - timedelta(days=30))
    rig.paid("paid-2", paid_until=NOW + timedelta(days=10))
    rig.table.add_tenant("free-1", "free")

    rig.reset().run()
    after_first = dict(rig.table.profiles)
    second = rig.reset().run()

    assert rig.table.profiles == after_first
    assert (second.tenants, second.outcomes) == (0, {})


def test_a_run_reads_only_the_tenants_it_has_something_to_do_for() -> None:
    rig = Rig()
    for index in range(50):
        rig.table.add_tenant(f"free-{index}", "free")
    rig.reset().run()
    rig.paid("lapsing", paid_until=NOW - timedelta(days=8))

    summary = rig.reset().run()

    assert (summary.tenants, summary.outcomes) == (1, {LAPSED: 1})
    assert [profile.tenant_id for profile in rig.table.reset_reads] == ["lapsing"]


def test_a_paid_plan_set_by_an_operator_never_lapses() -> None:
    rig = Rig()
    rig.paid("operator-set", paid_until=None)

    rig.reset().run()
    rig.now = NOW + timedelta(days=400)
    rig.reset().run()

    assert rig.table.profiles["operator-set"].plan == "startup"
