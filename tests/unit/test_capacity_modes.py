"""The arithmetic of docs/performance.md's capacity and SnapStart sections, on round numbers."""

from __future__ import annotations

import pytest

from bench.capacity_modes import compare_capacity, snapstart_costs

PRICES = {
    "dynamodb_write_unit": 0.625e-6,
    "dynamodb_read_unit": 0.125e-6,
    "dynamodb_wcu_hour": 0.00065,
    "dynamodb_rcu_hour": 0.00013,
    "lambda_snapstart_cache_gb_second": 0.0000015046,
    "lambda_snapstart_restore_gb": 0.0001397998,
    "lambda_gb_second_arm64": 0.0000133334,
}
DEFAULTS = {"TableTargetUtilization": 70, "TableMinWriteCapacity": 5, "TableMinReadCapacity": 5}


def test_provisioned_capacity_at_the_target_costs_about_two_fifths_of_on_demand_writes() -> None:
    compared = compare_capacity(5, 0, PRICES, DEFAULTS, indexes=2)
    # 0.00065 / 3600 / 0.7 per write against 0.625 per million.
    assert compared.steady_ratio == pytest.approx(0.00065 / 3600 / 0.7 / 0.625e-6)
    assert compared.on_demand_usd_per_million == pytest.approx(3.125)
    assert compared.break_even_utilisation == pytest.approx(0.2889, abs=1e-4)


def test_the_minimums_of_the_table_and_each_index_set_the_break_even_volume() -> None:
    compared = compare_capacity(5, 1, PRICES, DEFAULTS, indexes=2)
    minimum = 3 * 730 * (5 * 0.00065 + 5 * 0.00013)
    assert compared.minimum_usd_per_month == pytest.approx(minimum)
    assert compared.break_even_notifications_per_month == pytest.approx(minimum / (5 * 0.625e-6 + 0.125e-6))
    assert compared.notifications_per_second_at_minimum == pytest.approx(0.7)


def test_a_restore_costs_more_than_the_initialisation_it_replaces() -> None:
    [api] = snapstart_costs({"ApiFunction": (512, 600.0)}, PRICES)
    assert api.restore_usd == pytest.approx(0.5 * 0.0001397998)
    assert api.init_usd == pytest.approx(0.5 * 0.6 * 0.0000133334)
    assert api.cache_usd_per_month == pytest.approx(0.5 * 730 * 3600 * 0.0000015046)
    assert api.restore_usd > 10 * api.init_usd
