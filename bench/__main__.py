"""python -m bench: what Herald costs and how fast it is, measured (bench/README.md says how).

1. scenarios  - AWS calls, DynamoDB write and read units and handler time per notification, step by
                step, from the real handlers against moto resources built from template.yaml
2. costs      - cost per million emails and 1 KB webhooks at the dated prices of bench/prices.yaml
3. cold start - every function's import in fresh processes, without and with compiled bytecode,
                as a ratio to a bare `import boto3`
4. throughput - N notifications through the local stack, and moto's raw rate for the same calls

Writes bench/results.json (keeping its baseline block) and docs/performance.md with its chart.
"""

from __future__ import annotations

import os

# Lambda sets these before any import; herald.observability builds its Metrics at import time.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "HeraldBench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")

import argparse
import dataclasses
import json
import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench import report
from bench.cold_start import cold_start_steps, measure_cold_starts
from bench.costs import Platform, PriceList, cost_per_million
from bench.fanout import fanout_costs
from bench.fanout_timing import measure_fanout_timing, timing_steps
from bench.rig import Rig, table_schemas
from bench.scenarios import (
    NOTIFICATIONS,
    Recorded,
    chosen,
    record_notification,
    run_scenarios,
)
from bench.throughput import REPLAYED, measure_throughput
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import REGION, herald_in_moto
from herald_harness.patches import patched
from herald_local.cloudformation.template import load_template
from herald_local.cloudformation.topology import FunctionSpec, Topology
from herald_local.config import project_root
from herald_local.sandbox import SandboxServer

ROUTES = ("email", "webhook")


@dataclasses.dataclass
class InProcess:
    """What the in-process phase measured, and the topology the later phases need."""

    scenarios: dict[str, Any]
    recorded: list[Recorded]
    topology: Topology
    batch_size: int


class Bar:
    """One progress bar per phase (rich), advanced by the phases through small callbacks."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    @contextmanager
    def phase(self, name: str, total: int) -> Iterator[Callable[[str], None]]:
        task = self._progress.add_task(name, total=total, step="")
        yield lambda step: self._progress.update(task, advance=1, step=step)
        self._progress.update(task, completed=total, step="done")

    @contextmanager
    def counters(self, names: dict[str, int]) -> Iterator[Callable[[str, int], None]]:
        tasks = {name: self._progress.add_task(name, total=total, step="") for name, total in names.items()}
        yield lambda name, count: self._progress.update(tasks[name], advance=count)


def in_process(bar: Bar, only: tuple[str, ...] = ()) -> InProcess:
    template = load_template(project_root() / "template.yaml")
    with (
        patched() as patches,
        herald_in_moto(patches) as herald,
        SandboxServer() as sandbox,
    ):
        resolve_publicly(patches)
        rig = Rig(herald, sandbox, table_schemas(template))
        routes = () if only else ROUTES
        with bar.phase("scenarios (in-process, moto)", len(chosen(only)) + len(routes)) as advance:
            scenarios = run_scenarios(rig, advance, only)
            recorded = []
            for route in routes:
                advance(f"record one {route} for the replay")
                recorded.append(record_notification(rig, route))
        return InProcess(scenarios, recorded, herald.topology, rig.batch_size)


def summarise(measured: InProcess) -> dict[str, Any]:
    template = load_template(project_root() / "template.yaml")
    prices = PriceList.load()
    platform = Platform.of(template, measured.topology)
    steps = measured.scenarios
    return {
        "calls_per_notification": {
            key: {name: step[name] for name in ("calls", "lambda", "fair_queues") if name in step}
            for key, step in steps.items()
        },
        "write_units_per_notification": {
            key: {
                name: step[name] for name in ("title", "note", "notifications", "write_units", "read_units")
            }
            for key, step in steps.items()
        },
        "cost_per_million": cost_per_million(steps, NOTIFICATIONS, platform, prices),
        "fanout_cost_per_million": fanout_costs(steps, platform, prices),
        "prices": dataclasses.asdict(prices),
    }


def remeasure(bar: Bar, only: tuple[str, ...]) -> None:
    """Some scenarios again, over the figures results.json holds (costs follow from the steps)."""
    previous = json.loads(report.RESULTS.read_text())
    steps = {
        key: {**step, **previous["calls_per_notification"][key]}
        for key, step in previous["write_units_per_notification"].items()
    }
    # A notification's own steps are measured again too: its costs need all they recorded.
    measured = in_process(bar, only + tuple(key for keys in NOTIFICATIONS.values() for key in keys))
    measured.scenarios = {**steps, **measured.scenarios}
    kept = {key: previous[key] for key in ("cold_start", "throughput", "fanout_timing") if key in previous}
    report.write(report.assemble({**summarise(measured), **kept}, record_baseline=False))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--notifications", type=int, default=2000, help="through the local stack (default 2000)"
    )
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--skip-throughput", action="store_true", help="no throughput run (local stack)")
    parser.add_argument(
        "--skip-fanout-timing", action="store_true", help="no fan-out timing run (local stack, 1/10/1000)"
    )
    parser.add_argument(
        "--record-baseline", action="store_true", help="store this run as results.json's baseline block"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="KEY_PREFIX",
        help="measure only the scenarios whose keys start so (e.g. search_ accept_), keep every other"
        " figure of results.json, and write the page again",
    )
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the sandbox's request lines
    # Powertools warns on every invocation that emits no business metric (most API routes).
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[step]}"),
    )
    if args.only:
        with Progress(*columns) as progress:
            remeasure(Bar(progress), tuple(args.only))
        return
    with Progress(*columns) as progress:
        bar = Bar(progress)
        measured = in_process(bar)
        results = summarise(measured)
        functions: list[FunctionSpec] = list(measured.topology.functions.values())
        with bar.phase("cold start (fresh processes)", cold_start_steps(functions)) as advance:
            results["cold_start"] = measure_cold_starts(functions, REGION, advance)
        if not args.skip_fanout_timing:
            with bar.phase("fan-out timing (local stack)", timing_steps()) as advance:
                results["fanout_timing"] = measure_fanout_timing(advance)
        if not args.skip_throughput:
            totals = {
                "sent": args.notifications,
                "completed": args.notifications,
                "replayed": min(args.notifications, REPLAYED),
            }
            with bar.counters(totals) as count:
                results["throughput"] = measure_throughput(
                    args.notifications, args.concurrency, measured.recorded, measured.batch_size, count
                )
    report.write(report.assemble(results, args.record_baseline))
    print(f"wrote {report.RESULTS.relative_to(report.ROOT)} and {report.PAGE.relative_to(report.ROOT)}")


if __name__ == "__main__":
    main()
