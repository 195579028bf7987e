"""What the template's two cost switches cost, from the measured units and the dated prices of
bench/prices.yaml: DynamoDB's provisioned capacity against on-demand, and Lambda SnapStart's
snapshot cache and restores against the initialisation they replace.

Provisioned capacity bills every unit-hour provisioned, used or not; auto-scaling keeps the
consumed share near the target utilisation, and never goes below each resource's minimum (the
table and every index). So it wins on steady traffic above the volume at which the minimums cost
what on-demand would, and its saving is bounded by the utilisation it keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

HOURS_PER_MONTH = 730
SECONDS_PER_HOUR = 3600
MILLION = 1_000_000


@dataclass(frozen=True)
class CapacityComparison:
    write_units: float
    read_units: float
    on_demand_usd_per_million: float
    provisioned_usd_per_million: float
    # provisioned / on-demand at the target utilisation, for traffic above the minimums.
    steady_ratio: float
    # The utilisation below which provisioned costs more than on-demand.
    break_even_utilisation: float
    minimum_usd_per_month: float
    # Notifications a month whose on-demand bill equals the minimums' bill.
    break_even_notifications_per_month: float
    # The steady rate at which the table's write capacity leaves its minimum.
    notifications_per_second_at_minimum: float


def compare_capacity(
    write_units: float,
    read_units: float,
    prices: Mapping[str, float],
    parameters: Mapping[str, Any],
    indexes: int,
) -> CapacityComparison:
    """``write_units``/``read_units``: per notification, as measured; ``prices``: USD each, by key;
    ``parameters``: the template's defaults (minimum capacities, target utilisation)."""
    wru, rru = prices["dynamodb_write_unit"], prices["dynamodb_read_unit"]
    wcu_hour, rcu_hour = prices["dynamodb_wcu_hour"], prices["dynamodb_rcu_hour"]
    target = float(parameters["TableTargetUtilization"]) / 100
    on_demand = write_units * wru + read_units * rru
    # One unit provisioned for an hour serves 3 600 requests at full use, target × that as scaled.
    per_write, per_read = wcu_hour / SECONDS_PER_HOUR, rcu_hour / SECONDS_PER_HOUR
    provisioned = (write_units * per_write + read_units * per_read) / target
    resources = 1 + indexes
    minimum = (
        resources
        * HOURS_PER_MONTH
        * (
            int(parameters["TableMinWriteCapacity"]) * wcu_hour
            + int(parameters["TableMinReadCapacity"]) * rcu_hour
        )
    )
    return CapacityComparison(
        write_units=write_units,
        read_units=read_units,
        on_demand_usd_per_million=on_demand * MILLION,
        provisioned_usd_per_million=provisioned * MILLION,
        steady_ratio=provisioned / on_demand,
        break_even_utilisation=per_write / wru,
        minimum_usd_per_month=minimum,
        break_even_notifications_per_month=minimum / on_demand,
        notifications_per_second_at_minimum=int(parameters["TableMinWriteCapacity"]) * target / write_units,
    )


@dataclass(frozen=True)
class SnapStartCost:
    function: str
    memory_mb: int
    init_ms: float
    cache_usd_per_month: float
    restore_usd: float
    # What the initialisation a restore replaces would bill (INIT is billed since 2025-08-01).
    init_usd: float


def snapstart_costs(
    functions: Mapping[str, tuple[int, float]], prices: Mapping[str, float]
) -> list[SnapStartCost]:
    """``functions``: memory (MB) and measured initialisation (ms) of each function with SnapStart."""
    costs = []
    for name, (memory_mb, init_ms) in functions.items():
        gigabytes = memory_mb / 1024
        costs.append(
            SnapStartCost(
                function=name,
                memory_mb=memory_mb,
                init_ms=init_ms,
                cache_usd_per_month=gigabytes
                * HOURS_PER_MONTH
                * SECONDS_PER_HOUR
                * prices["lambda_snapstart_cache_gb_second"],
                restore_usd=gigabytes * prices["lambda_snapstart_restore_gb"],
                init_usd=gigabytes * init_ms / 1000 * prices["lambda_gb_second_arm64"],
            )
        )
    return costs
