"""The bench's page generator and cold-start probes: figures come from the results, calls from the code."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bench.cold_start import (
    AFTER_LIBRARIES,
    LIBRARIES_ONLY,
    LIBRARY_FLOOR,
    BuildLayouts,
    Import,
    after_libraries,
    composition_calls,
    measure_import,
)
from bench.report import _api_floor, _capacity, _snapstart, _write_floor, _write_units_by_phase
from herald_local.config import project_root


def cold_start(boto3_ms: float, api_ratio: float, floor_ratios: tuple[float, ...]) -> dict[str, Any]:
    """Probes whose pauses for garbage collection are a tenth of their CPU; ApiFunction's make one
    full collection and an extra 0.2× of pauses."""
    collector = {"gc_ms": 0.1 * boto3_ms, "full_collections": 0}
    floor = {
        LIBRARIES_ONLY + label: {
            "cpu_ms": boto3_ms * ratio,
            "ratio_to_boto3": ratio,
            "ratio_to_boto3_without_gc": ratio - 0.1,
            **collector,
        }
        for (label, _), ratio in zip(LIBRARY_FLOOR, floor_ratios, strict=True)
    }
    api = {
        "ratio_to_boto3": api_ratio,
        "ratio_to_boto3_without_gc": api_ratio - 0.3,
        "gc_ms": 0.3 * boto3_ms,
        "full_collections": 1,
    }
    # In one process: Herald's 0.5× of boto3, 0.2× of it pauses; it adds a fifth of the objects.
    after = {
        "cpu_ms": 0.5 * boto3_ms,
        "gc_ms": 0.2 * boto3_ms,
        "full_collections": 1,
        "objects": 50_000,
        "objects_added": 10_000,
    }
    return {
        "cold_start": {
            "runs": 5,
            "baseline": "import boto3",
            "layouts": {
                "bytecode": {
                    "import boto3": {"cpu_ms": boto3_ms, "gc_ms": 0.0},
                    "ApiFunction": api,
                    "ApiFunction" + AFTER_LIBRARIES: after,
                    **floor,
                }
            },
        }
    }


def test_the_api_floor_is_the_libraries_alone_measured_in_the_same_run() -> None:
    text = _api_floor(cold_start(180.0, 2.31, (1.13, 1.61, 1.82)))

    assert "2.31× a bare `import boto3` (180 ms" in text
    assert "| Powertools HTTP resolver with request validation | 203 | 1.13× |" in text
    assert "| + PynamoDB, Logger and Metrics | 328 | 1.82× |" in text
    assert "the libraries alone come to 1.82×, above the 1.5× target before any of Herald's own" in text
    assert (
        "cannot be met with request validation kept. Herald's own modules and their wiring add 0.49×." in text
    )
    assert (
        "pauses: 54 ms in ApiFunction's import (1 full collection), 18 ms in the libraries' (0 full" in text
    )
    assert "Herald's modules and wiring add 0.29×." in text


PRICES = {
    "dynamodb_write_unit": {"usd": 0.625, "per": 1_000_000},
    "dynamodb_read_unit": {"usd": 0.125, "per": 1_000_000},
    "dynamodb_wcu_hour": {"usd": 0.00065, "per": 1},
    "dynamodb_rcu_hour": {"usd": 0.00013, "per": 1},
    "lambda_snapstart_cache_gb_second": {"usd": 0.0000015046, "per": 1},
    "lambda_snapstart_restore_gb": {"usd": 0.0001397998, "per": 1},
    "lambda_gb_second_arm64": {"usd": 0.0000133334, "per": 1},
}


def test_the_snapstart_section_prices_each_request_path_function_of_the_template() -> None:
    compiled = {
        name: {"cpu_ms": 400.0} for name in ("ApiFunction", "EmailWorkerFunction", "WebhookWorkerFunction")
    }
    text = _snapstart({"prices": {"prices": PRICES}, "cold_start": {"layouts": {"bytecode": compiled}}})

    assert "| ApiFunction | 512 | 400 | $1.98 | $70 | $2.67 |" in text
    assert "| WebhookWorkerFunction | 512 |" in text
    assert "comes to $5.93 a month" in text
    assert "`SnapStart=None`" in text


def test_the_capacity_section_prices_the_measured_units_of_a_webhook() -> None:
    measured = {
        "accept_webhook": {"write_units": {"total": 3.0}, "read_units": {"total": 1.0}},
        "deliver_webhook": {"write_units": {"total": 2.2}, "read_units": {"total": 1.0}},
    }
    text = _capacity({"prices": {"prices": PRICES}, "write_units_per_notification": measured})

    assert "For a 1 KB webhook (5.2 write and 2 read units" in text
    assert "| on-demand | $3.50 |" in text
    assert "Provisioned capacity costs 41% of on-demand on steady traffic" in text
    assert "used less than 29% of the time" in text


def test_herald_after_its_libraries_is_measured_in_one_process_and_shares_the_pauses_by_objects() -> None:
    text = _api_floor(cold_start(200.0, 2.31, (1.13, 1.61, 1.82)))

    assert (
        "Measured in one process instead (its libraries imported first, untimed, then ApiFunction's"
        " handler; median of 5): Herald's modules and wiring take 100 ms, 0.50× `import boto3`, of"
        " which the collector's pauses 40 ms (1 full collection); without them 60 ms, 0.30×." in text
    )
    # 60 ms of its own plus a fifth of 40 ms of pauses, over 200 ms.
    assert "They add 10,000 of the process's 50,000 tracked objects (20%); with that part of the" in text
    assert "collector's pauses, 0.34×." in text


def test_the_probe_after_the_libraries_imports_them_untimed_and_counts_the_objects_it_adds(
    tmp_path: Path,
) -> None:
    (tmp_path / "small.py").write_text("VALUES = [[n] for n in range(3000)]\n")
    function = Import("ApiFunction", "small", (str(tmp_path),), str(tmp_path), {"PATH": "/usr/bin:/bin"})
    probe = after_libraries(function)
    heavy = dataclasses.replace(probe, first="import sys\nsys.loaded = [[n] for n in range(40000)]")

    measured = measure_import(heavy)

    assert probe.label == "ApiFunction after its libraries"
    assert all(code in probe.first for _, code in LIBRARY_FLOOR)
    # The module's 3 001 lists and the import's own bookkeeping are added; the 40 000 lists built
    # first are on the heap but not added.
    assert 3_001 <= measured["objects_added"] < 4_000
    assert measured["objects"] > 43_000


def test_a_floor_below_the_target_leaves_the_rest_to_herald() -> None:
    text = _api_floor(cold_start(200.0, 1.9, (0.9, 1.1, 1.3)))

    assert "come to 1.30×, below the 1.5× target: the rest is Herald's own." in text
    assert "cannot be met" not in text


def test_the_floor_probes_import_each_step_on_top_of_the_last_without_herald(tmp_path: Path) -> None:
    layouts = BuildLayouts([], tmp_path)
    layouts.lay_out()
    api = Import("ApiFunction", "app", ("/fn", "/layer-a", "/layer-b"), "/runtime", {"A": "1"})

    probes = list(layouts._library_floor(api, tmp_path / "bytecode"))

    assert [probe.label for probe in probes] == [LIBRARIES_ONLY + label for label, _ in LIBRARY_FLOOR]
    assert all(
        probe.paths == (str(tmp_path / "bytecode" / "floor"), "/layer-a", "/layer-b") for probe in probes
    )
    last = (tmp_path / "bytecode" / "floor" / f"{probes[-1].module}.py").read_text()
    assert all(code in last for _, code in LIBRARY_FLOOR)
    assert "herald" not in last


@pytest.mark.parametrize(
    ("function", "calls"),
    [
        ("api", ("public_origin()", "api()")),
        ("email_worker", ("email_worker()",)),
        ("provider_webhook", ("provider_webhooks()",)),
        ("polar_webhook", ("payment_webhooks(Processor.POLAR)",)),
    ],
)
def test_a_functions_services_are_built_by_its_handlers_calls_to_the_composition_package(
    function: str, calls: tuple[str, ...]
) -> None:
    source = (project_root() / "functions" / function / "app.py").read_text()

    assert composition_calls(source) == calls


def test_the_write_floor_names_each_item_a_webhook_writes_and_what_the_day_counts_add() -> None:
    def row(item: str, table: float, index: float = 0.0) -> dict[str, Any]:
        return {"item": item, "table_units": table, "index_units": index}

    units = {
        "accept_webhook": {
            "notifications": 5,
            "write_units": {"total": 3.0, "by_item": [row("USAGE#* PERIOD#*", 1), row("JOB#*#* JOB", 1, 1)]},
        },
        "deliver_webhook": {
            "notifications": 5,
            "write_units": {"total": 2.0, "by_item": [row("JOB#*#* STATUS", 1), row("JOB#*#* STATUS", 1)]},
        },
        "deliver_webhook_five_tenants": {"notifications": 5, "write_units": {"total": 2.0, "by_item": []}},
        "tally_one_tenant": {"notifications": 100, "write_units": {"total": 0.01, "by_item": []}},
        "tally_five_tenants": {"notifications": 100, "write_units": {"total": 0.05, "by_item": []}},
    }

    text = _write_floor({"write_units_per_notification": units})

    assert "accepting it 3 (`USAGE#* PERIOD#*` 1, `JOB#*#* JOB` 1 + its index entries 1)" in text
    assert "its search entry (gsi4, by recipient or webhook host" in text
    assert "delivering it 2 (`JOB#*#* STATUS` 1, `JOB#*#* STATUS` 1)" in text
    assert "(delivery costs 2 also when a batch mixes tenants)" in text
    assert (
        "0.01 unit per job for one tenant's 100 jobs of a batching window and 0.05 for five tenants'" in text
    )


def test_a_share_that_rounds_to_zero_from_below_reads_zero() -> None:
    results = cold_start(200.0, 2.0, (1.2, 1.5, 1.7))
    results["cold_start"]["layouts"]["bytecode"]["ApiFunction"]["ratio_to_boto3_without_gc"] = 1.599

    assert "Herald's modules and wiring add 0.00×." in _api_floor(results)


def test_write_units_are_given_for_accept_plus_delivery_apart_from_the_day_counts() -> None:
    def step(total: float) -> dict[str, Any]:
        return {"write_units": {"total": total}}

    results = {
        "write_units_per_notification": {
            "accept_email": step(3.0),
            "deliver_email": step(2.0),
            "accept_webhook_keyed": step(4.0),
            "deliver_webhook": step(3.0),
            "tally_one_tenant": step(0.01),
        },
        "cost_per_million": {
            "notifications": {
                "email": {
                    "steps": ["accept_email", "deliver_email", "tally_one_tenant"],
                    "per_notification": {"write_units": 5.01},
                },
                "1 KB webhook, keyed": {
                    "steps": ["accept_webhook_keyed", "deliver_webhook", "tally_one_tenant"],
                    "per_notification": {"write_units": 7.01},
                },
            }
        },
    }

    lines = _write_units_by_phase(results).splitlines()

    assert lines[0] == "| write units | accept | delivery | accept plus delivery | day counts | all in |"
    assert lines[2] == "| email | 3 | 2 | **5** | 0.01 | 5.01 |"
    assert lines[3] == "| 1 KB webhook, keyed | 4 | 3 | **7** | 0.01 | 7.01 |"
