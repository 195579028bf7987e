"""bench/results.json and docs/performance.md (with docs/performance.png) from one bench run.

results.json keeps a ``baseline`` block from run to run: the figures of the code the baseline was
recorded on (``python -m bench --record-baseline``), dated and with its commit, so that a later
change of the write path can be read against it in the same file and on the same page.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import subprocess
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from moto import __version__ as moto_version

from bench.capacity_modes import compare_capacity, snapstart_costs
from bench.chart import draw
from bench.cold_start import AFTER_LIBRARIES, FLOOR_OF, LIBRARIES_ONLY, LIBRARY_FLOOR, SERVICES
from bench.costs import MILLION, PriceList
from bench.fanout import ACCEPT_WIDTHS, FANOUT_WIDTH
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root

ROOT = project_root()
RESULTS = ROOT / "bench" / "results.json"
PAGE = ROOT / "docs" / "performance.md"
# Written by ``python -m bench.health`` (its own, slower run); shown on the page when present.
HEALTH_RESULTS = ROOT / "bench" / "health-results.json"
CHART = ROOT / "docs" / "performance.png"
MEASUREMENTS = (
    "calls_per_notification",
    "write_units_per_notification",
    "cost_per_million",
    "cold_start",
    "throughput",
)
# The code whose costs the bench measures (the bench itself, docs and tests aside).
MEASURED_PATHS = ("layers", "functions", "template.yaml")
# Herald's cost floor for one 1 KB webhook, accept plus delivery, in these prices.
FLOOR_USD_PER_MILLION_WEBHOOKS = 4.50
# Five writes the path cannot do without, and the search entry that finds any message (gsi4).
FLOOR_WRITE_UNITS_PER_WEBHOOK = 6
# ApiFunction's import, as a multiple of a bare `import boto3`, that the cost work aims for.
TARGET_API_RATIO = 1.5
# The notification the capacity comparison prices: a 1 KB webhook, accepted and delivered.
NOTIFICATION_STEPS = ("accept_webhook", "deliver_webhook")
SNAPSTART_SOURCES = (
    "https://docs.aws.amazon.com/lambda/latest/dg/snapstart.html",
    "https://docs.aws.amazon.com/lambda/latest/dg/snapstart-uniqueness.html",
    "https://docs.aws.amazon.com/lambda/latest/dg/snapstart-runtime-hooks-python.html",
)
SNAPSTART_READ = "2026-12-01"


def _git(*arguments: str) -> str:
    return subprocess.run(
        ["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def code_version() -> dict[str, Any]:
    return {
        "commit": _git("rev-parse", "HEAD"),
        "measured_code_commit": _git("log", "-1", "--format=%H", "--", *MEASURED_PATHS),
        "measured_code_modified": bool(_git("status", "--porcelain", "--", *MEASURED_PATHS)),
    }


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(terse=True),
        "moto": moto_version,
    }


def assemble(measured: Mapping[str, Any], record_baseline: bool) -> dict[str, Any]:
    previous = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    results: dict[str, Any] = {"generated": now, "code": code_version(), "machine": machine(), **measured}
    if record_baseline:
        results["baseline"] = {
            "recorded": now,
            "code": results["code"],
            "machine": results["machine"],
            **{key: copy.deepcopy(measured[key]) for key in MEASUREMENTS if key in measured},
        }
    elif "baseline" in previous:
        results["baseline"] = previous["baseline"]
    return results


def write(results: Mapping[str, Any]) -> None:
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    PAGE.parent.mkdir(exist_ok=True)
    draw(results, CHART, FLOOR_USD_PER_MILLION_WEBHOOKS)
    PAGE.write_text(render(results))


# ---------------------------------------------------------------- the page


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _units(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def _against(current: float, base: float | None, show: Callable[[float], str]) -> str:
    return show(current) if base is None or base == current else f"{show(current)} (baseline {show(base)})"


def _baseline(results: Mapping[str, Any], *path: str) -> Any:
    value: Any = results.get("baseline")
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def render(results: Mapping[str, Any]) -> str:
    sections = [
        _header(results),
        _write_units(results),
        _write_breakdown(results),
        _attempt_detail(results),
        _named_keys(results),
        _calls(results),
        _costs(results),
        _cold_start(results),
        _api_floor(results),
        _snapstart(results),
        _capacity(results),
        _throughput(results),
        _events(results),
        _health(),
        _prices(results),
    ]
    return "\n\n".join(section for section in sections if section) + "\n"


def _header(results: Mapping[str, Any]) -> str:
    code, box = results["code"], results["machine"]
    baseline = results.get("baseline")
    recorded = (
        f"Baseline: recorded {baseline['recorded']} on the code of commit `{baseline['code']['measured_code_commit'][:10]}`;"
        " where a figure differs from it, the baseline follows in brackets."
        if baseline
        else "No baseline recorded yet (`python -m bench --record-baseline`)."
    )
    return "\n".join(
        [
            "# Performance",
            "",
            "Generated by `make bench` (`python -m bench`, see `bench/README.md` for what is measured and how)"
            f" on {results['generated']}: commit `{code['commit'][:10]}`, Python {box['python']},"
            f" {box['cpus']} CPUs, moto {box['moto']}. Every figure comes from `bench/results.json`.",
            recorded,
            "",
            "![Latency percentiles and cost per million by service](performance.png)",
        ]
    )


def _write_units(results: Mapping[str, Any]) -> str:
    rows = []
    for key, step in results["write_units_per_notification"].items():
        base = _baseline(results, "write_units_per_notification", key, "write_units", "total")
        rows.append(
            [
                step["title"],
                _against(step["write_units"]["total"], base, _units),
                _units(step["write_units"]["table"]),
                _units(step["write_units"]["index"]),
                _units(step["read_units"]["total"]),
                step["note"],
            ]
        )
    return "## DynamoDB units per notification (inbound steps: per event)\n\n" + _table(
        ["step", "write units", "of which table", "of which index", "read units", "note"], rows
    )


def _write_breakdown(results: Mapping[str, Any]) -> str:
    parts = ["### What each step writes (per notification; item = its key, ids masked)"]
    for step in results["write_units_per_notification"].values():
        if not step["write_units"]["by_item"]:
            continue
        rows = [
            [
                f"`{item['item']}`"
                + (f" (write {item['nth_write_of_item']})" if item["nth_write_of_item"] > 1 else ""),
                f"{item['request']}/{item['action']}" + ("" if item["applied"] else " (condition failed)"),
                _units(item["writes"]),
                f"{item['bytes_before']} → {item['bytes_after']}",
                _units(item["table_units"]),
                _units(item["index_units"]),
            ]
            for item in step["write_units"]["by_item"]
        ]
        reads = [
            f"`{read['item']}` {read['request']} {_units(read['units'])}"
            for read in step["read_units"]["by_item"]
        ]
        parts.append(f"**{step['title']}**" + (f" — reads: {', '.join(reads)}" if reads else ""))
        parts.append(
            _table(["item", "request", "writes", "bytes before → after", "table units", "index units"], rows)
        )
    return "\n\n".join(parts)


def _calls(results: Mapping[str, Any]) -> str:
    rows = []
    for key, step in results["calls_per_notification"].items():
        calls = ", ".join(f"{name} {_units(count)}" for name, count in step["calls"].items()) or "none"
        lambda_ms = ", ".join(f"{name} {use['ms']:.1f} ms" for name, use in step["lambda"].items())
        base = _baseline(results, "calls_per_notification", key, "calls")
        rows.append(
            [
                results["write_units_per_notification"][key]["title"],
                calls,
                lambda_ms,
                "" if base in (None, step["calls"]) else "changed",
            ]
        )
    return "## AWS calls and handler time per notification (inbound steps: per event)\n\n" + _table(
        ["step", "calls made by the handlers", "handler time (warm, this machine)", "vs baseline"], rows
    )


def _costs(results: Mapping[str, Any]) -> str:
    costs = results["cost_per_million"]
    names = list(costs["notifications"])
    services = list(next(iter(costs["notifications"].values()))["usd_by_service"])
    rows = [
        [service, *(_usd(costs["notifications"][name]["usd_by_service"][service]) for name in names)]
        for service in services
    ]
    totals = []
    for name in names:
        base = _baseline(results, "cost_per_million", "notifications", name, "usd_total")
        totals.append(f"**{_against(costs['notifications'][name]['usd_total'], base, _usd)}**")
    rows.append(["**total**", *totals])
    quantities = [
        [quantity, *(_units(costs["notifications"][name]["per_notification"][quantity]) for name in names)]
        for quantity in next(iter(costs["notifications"].values()))["per_notification"]
    ]
    alternatives = [
        [alt["service"], alt["dimension"], _usd(alt["usd_per_million"])]
        for alt in costs["alternatives"].values()
    ]
    return "\n\n".join(
        [
            "## Cost per million notifications (USD, us-east-1 list prices, free tiers not subtracted)",
            _table(["service", *names], rows),
            f"Design floor for a 1 KB webhook, accept plus delivery: ≈ {FLOOR_WRITE_UNITS_PER_WEBHOOK} write units"
            f" and ≈ {_usd(FLOOR_USD_PER_MILLION_WEBHOOKS)} per million.",
            _write_floor(results),
            _write_units_by_phase(results),
            _attachment_costs(),
            "What is billed per notification:",
            _table(["quantity", *names], quantities),
            "Managed alternatives for the same million:",
            _table(["service", "what", "per million"], alternatives),
        ]
    )


def _attachment_costs() -> str:
    """What a file attached to an email adds, at the S3 prices on file (no scenario sends one)."""
    prices = PriceList.load()
    put, get = prices["s3_put_request"] * MILLION, prices["s3_get_request"] * MILLION
    return (
        f"An email's attachment adds, per file, one S3 PUT at accept ({_usd(put)} per million) and one S3 GET"
        f" per delivery pass ({_usd(get)} per million): {_usd(put + get)} per million emails with one file"
        " delivered on the first pass. Its deletion by the bucket's lifecycle rule costs nothing; storage"
        " and the KMS calls S3 makes for SSE-KMS (one per bucket key, not per object) are left out. The job"
        " item carries only each file's reference (name, type, size, SHA-256 and object key: some 250"
        " bytes), which counts in its write units like any other field."
    )


# The steps of a notification's cost, by what their names begin with.
PHASES = (("accept", "accept_"), ("delivery", "deliver_"), ("day counts", "tally_"))


def _write_units_by_phase(results: Mapping[str, Any]) -> str:
    """Each notification's write units: accept plus delivery (the floor's measure), then the day counts."""
    rows = []
    for name, cost in results["cost_per_million"]["notifications"].items():
        by_phase = {
            phase: _units_of(
                results, "write_units", (step for step in cost["steps"] if step.startswith(prefix))
            )
            for phase, prefix in PHASES
        }
        path = by_phase["accept"] + by_phase["delivery"]
        rows.append(
            [
                name,
                *(_units(by_phase[phase]) for phase in ("accept", "delivery")),
                f"**{_units(path)}**",
                _units(by_phase["day counts"]),
                _units(cost["per_notification"]["write_units"]),
            ]
        )
    return _table(["write units", "accept", "delivery", "accept plus delivery", "day counts", "all in"], rows)


def _write_floor(results: Mapping[str, Any]) -> str:
    """Where a 1 KB webhook's write units go, item by item, and what the day counts add."""
    units = results["write_units_per_notification"]

    def spent(step: str) -> str:
        rows = units[step]["write_units"]["by_item"]
        items = ", ".join(
            f"`{row['item']}` {_units(row['table_units'])}"
            + (f" + its index entries {_units(row['index_units'])}" if row["index_units"] else "")
            for row in rows
        )
        return f"{_units(units[step]['write_units']['total'])} ({items})"

    one, five = (units[step]["write_units"]["total"] for step in ("tally_one_tenant", "tally_five_tenants"))
    spread = units["deliver_webhook_five_tenants"]["write_units"]["total"]
    return (
        f"Where a 1 KB webhook's write units go: accepting it {spent('accept_webhook')}; delivering it"
        f" {spent('deliver_webhook')}. Six are one write each of what the path cannot do without: the"
        " usage counter (rate limit and quota), the request written once, its listing entry, its"
        " search entry (gsi4, by recipient or webhook host: finding any message reads a page of its"
        " own entries, whatever the tenant's history), the worker's claim (at most one delivery) and"
        " the outcome. The day counts (the console's chart"
        " and the listings' totals) are not written by the worker (delivery costs"
        f" {_units(spread)} also when a batch mixes tenants): TallyFunction adds the status changes"
        " of the table's stream, one transactional write per tenant-day and batch (billed twice, so"
        " that a retried batch is not counted twice), which is"
        f" {_units(one)} unit per job for one tenant's {units['tally_one_tenant']['notifications']}"
        f" jobs of a batching window and {_units(five)} for five tenants'."
    )


def _cold_start(results: Mapping[str, Any]) -> str:
    cold = results["cold_start"]
    layouts = cold["layouts"]
    rows = []
    for label, source in layouts["source"].items():
        compiled = layouts["bytecode"][label]
        ready = layouts["bytecode"].get(label + SERVICES)
        base = _baseline(results, "cold_start", "layouts", "bytecode", label, "ratio_to_boto3")
        rows.append(
            [
                label,
                _ms(source["cpu_ms"]),
                f"{source['ratio_to_boto3']:.2f}×",
                _ms(compiled["cpu_ms"]),
                _against(compiled["ratio_to_boto3"], base, lambda value: f"{value:.2f}×"),
                "–" if ready is None else f"{ready['ratio_to_boto3']:.2f}×",
                compiled["modules"],
                "yes" if compiled["xray_sdk_loaded"] else "no",
            ]
        )
    profile = cold["api_import_profile"]
    packages = [[entry["name"], _ms(entry["ms"])] for entry in profile["by_package"]]
    direct = [[entry["name"], _ms(entry["ms"])] for entry in profile["direct_imports"]]
    return "\n\n".join(
        [
            f"## Cold start: handler import, median CPU of {cold['runs']} fresh processes",
            _table(
                [
                    "import",
                    "no .pyc: ms",
                    "× boto3",
                    "compiled .pyc: ms",
                    "× boto3",
                    "+ services: × boto3",
                    "modules",
                    "X-Ray SDK",
                ],
                rows,
            ),
            f"ApiFunction's import (`python -X importtime`, compiled): {_ms(profile['total_ms'])} ms in all.",
            _table(["package (own time of its modules)", "ms"], packages),
            _table(["imported directly by the handler (with everything it pulls in first)", "ms"], direct),
        ]
    )


def _api_floor(results: Mapping[str, Any]) -> str:
    cold = results["cold_start"]
    compiled = cold["layouts"]["bytecode"]
    boto3, api = compiled[cold["baseline"]]["cpu_ms"], compiled[FLOOR_OF]["ratio_to_boto3"]
    steps = [(label, compiled[LIBRARIES_ONLY + label]) for label, _ in LIBRARY_FLOOR]
    floor = steps[-1][1]["ratio_to_boto3"]
    verdict = (
        f"above the {TARGET_API_RATIO}× target before any of Herald's own modules, so the target cannot"
        " be met with request validation kept"
        if floor > TARGET_API_RATIO
        else f"below the {TARGET_API_RATIO}× target: the rest is Herald's own"
    )
    measured = (
        f"This run: {FLOOR_OF}'s compiled import is {api:.2f}× a bare `import boto3` ({_ms(boto3)} ms,"
        f" which every function pays). The libraries it is built on, imported from its layer in fresh"
        f" processes without any Herald module (compiled, median of {cold['runs']}, each step adding to"
        " the one before):"
    )
    table = _table(
        ["libraries only", "ms", "× boto3"],
        [[label, _ms(step["cpu_ms"]), f"{step['ratio_to_boto3']:.2f}×"] for label, step in steps],
    )
    conclusion = (
        f"With request validation kept, the libraries alone come to {floor:.2f}×, {verdict}."
        f" Herald's own modules and their wiring add {api - floor:.2f}×."
    )
    return "\n\n".join(
        [
            "### ApiFunction against its libraries' floor",
            measured,
            table,
            conclusion,
            _collector(compiled),
            _after_libraries(compiled, cold["baseline"], cold["runs"]),
        ]
    )


def _after_libraries(compiled: Mapping[str, Any], baseline: str, runs: int) -> str:
    """Herald's part measured in one process, and the collector's pauses in it split by objects."""
    boto3, herald = compiled[baseline], compiled[FLOOR_OF + AFTER_LIBRARIES]
    own_ms = herald["cpu_ms"] - herald["gc_ms"]
    added = herald["objects_added"] / herald["objects"]
    boto3_without_gc = boto3["cpu_ms"] - boto3["gc_ms"]
    return (
        f"Measured in one process instead (its libraries imported first, untimed, then {FLOOR_OF}'s"
        f" handler; median of {runs}): Herald's modules and wiring take {_ms(herald['cpu_ms'])} ms,"
        f" {herald['cpu_ms'] / boto3['cpu_ms']:.2f}× `import boto3`, of which the collector's pauses"
        f" {_ms(herald['gc_ms'])} ms ({_collections(herald)}); without them {_ms(own_ms)} ms,"
        f" {own_ms / boto3_without_gc:.2f}×. They add {herald['objects_added']:,.0f} of the process's"
        f" {herald['objects']:,.0f} tracked objects ({added:.0%}); with that part of the collector's"
        f" pauses, {(own_ms + added * herald['gc_ms']) / boto3['cpu_ms']:.2f}×."
    )


def _collector(compiled: Mapping[str, Any]) -> str:
    """The garbage collector's part: a full collection walks every object of the process, and it
    fires in whichever import takes the process's objects past its threshold."""
    api, floor = compiled[FLOOR_OF], compiled[LIBRARIES_ONLY + LIBRARY_FLOOR[-1][0]]
    # + 0.0: a share that rounds to zero from below reads 0.00, not -0.00.
    share = round(api["ratio_to_boto3_without_gc"] - floor["ratio_to_boto3_without_gc"], 2) + 0.0
    return (
        f"Of that, the cyclic garbage collector's pauses: {_ms(api['gc_ms'])} ms in {FLOOR_OF}'s import"
        f" ({_collections(api)}), {_ms(floor['gc_ms'])} ms in the libraries' ({_collections(floor)})."
        " A full collection walks all of the process's objects, most of them the libraries', and fires"
        " in whichever import takes their number past its threshold. In Lambda, `herald` pauses the"
        " collector from its first module to the end of the handler's import and then freezes what the"
        " import made, so no collection walks those objects again (`herald.composition.startup`)."
        " Each probe less its own pauses,"
        f" over `import boto3` less its own, Herald's modules and wiring add {share:.2f}×."
    )


def _collections(probe: Mapping[str, Any]) -> str:
    full = probe["full_collections"]
    return f"{full:g} full collection{'' if full == 1 else 's'}"


def _price_each(results: Mapping[str, Any]) -> dict[str, float]:
    return {key: entry["usd"] / entry["per"] for key, entry in results["prices"]["prices"].items()}


def _units_of(results: Mapping[str, Any], kind: str, steps: Iterable[str]) -> float:
    measured = results["write_units_per_notification"]
    return sum(float(measured[step][kind]["total"]) for step in steps)


def _snapstart(results: Mapping[str, Any]) -> str:
    template = load_template(ROOT / "template.yaml")
    memory = int(template["Globals"]["Function"]["MemorySize"])
    compiled = results["cold_start"]["layouts"]["bytecode"]
    functions = {
        name: (int(resource["Properties"].get("MemorySize", memory)), float(compiled[name]["cpu_ms"]))
        for name, resource in template["Resources"].items()
        if "SnapStart" in resource.get("Properties", {}) and name in compiled
    }
    costs = snapstart_costs(functions, _price_each(results))
    rows = [
        [
            cost.function,
            cost.memory_mb,
            _ms(cost.init_ms),
            f"${cost.cache_usd_per_month:.2f}",
            f"${cost.restore_usd * 1_000_000:.0f}",
            f"${cost.init_usd * 1_000_000:.2f}",
        ]
        for cost in costs
    ]
    cache = sum(cost.cache_usd_per_month for cost in costs)
    return "\n\n".join(
        [
            "## SnapStart: what it costs and what it saves",
            "The functions on the request path run with SnapStart (template parameter `SnapStart`,"
            " default `PublishedVersions`; `None` turns it off): Lambda initialises a published version"
            " once, snapshots it, and resumes new environments from the snapshot instead of importing"
            " anew. The API, the event source mappings and the schedules invoke the alias `live`. The"
            " runtime hooks (`herald.composition.snapstart`) empty the process registry before the"
            " snapshot and after each restore (no data key, client or connection is ever in a snapshot)"
            " and re-seed `random` after each restore. What the import made is frozen out of the"
            " collector's walks before the snapshot (`herald.composition.startup`): a collection after"
            " a restore does not read every page of it back from the snapshot.",
            _table(
                [
                    "function",
                    "MB",
                    "import it replaces: ms (this run)",
                    "snapshot cache per month",
                    "restores, per million cold starts",
                    "the init it replaces, billed, per million cold starts",
                ],
                rows,
            ),
            f"The snapshot cache of one live version of each comes to ${cache:.2f} a month (a version"
            " bills while it exists, at least 3 hours: delete the versions the alias left behind). A"
            " restore costs more than the initialisation it replaces would be billed (INIT is billed"
            " since 2025-08-01), so SnapStart buys latency, not money: a cold start resumes instead of"
            " paying the import above (and, after a restore, the first request builds the services"
            " and clients, as without SnapStart). Turn it off with `SnapStart=None` where cold starts"
            " are rare or latency does not matter.",
        ]
    )


def _capacity(results: Mapping[str, Any]) -> str:
    template = load_template(ROOT / "template.yaml")
    defaults = {name: spec.get("Default") for name, spec in template["Parameters"].items()}
    table = next(
        resource["Properties"]
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::DynamoDB::Table"
    )
    steps = NOTIFICATION_STEPS
    compared = compare_capacity(
        _units_of(results, "write_units", steps),
        _units_of(results, "read_units", steps),
        _price_each(results),
        defaults,
        indexes=len(table.get("GlobalSecondaryIndexes", [])),
    )
    return "\n\n".join(
        [
            "## On-demand or provisioned capacity",
            f"`TableBillingMode=PROVISIONED` gives the table and each index provisioned capacity between"
            f" `TableMin*Capacity` ({defaults['TableMinWriteCapacity']} write, {defaults['TableMinReadCapacity']}"
            f" read units) and `TableMax*Capacity`, scaled to keep {defaults['TableTargetUtilization']} %"
            f" of it in use. For a 1 KB webhook ({_units(compared.write_units)} write and"
            f" {_units(compared.read_units)} read units, accept plus delivery, as measured above):",
            _table(
                ["", "USD per million notifications (DynamoDB only)"],
                [
                    ["on-demand", _usd(compared.on_demand_usd_per_million)],
                    [
                        f"provisioned, steady traffic at the {defaults['TableTargetUtilization']} % target",
                        _usd(compared.provisioned_usd_per_million),
                    ],
                ],
            ),
            f"Provisioned capacity costs {compared.steady_ratio:.0%} of on-demand on steady traffic, and"
            f" more than on-demand wherever the capacity paid for is used less than"
            f" {compared.break_even_utilisation:.0%} of the time (spiky traffic, and the minutes"
            " auto-scaling takes to follow a rise, which throttles meanwhile). Its minimums alone cost"
            f" ${compared.minimum_usd_per_month:.2f} a month (the table and"
            f" {len(table.get('GlobalSecondaryIndexes', []))} indexes), what on-demand bills for"
            f" {compared.break_even_notifications_per_month / 1e6:.1f} million notifications a month;"
            f" the table's writes leave the minimum above {compared.notifications_per_second_at_minimum:.1f}"
            " notifications a second. So: on-demand below a few million notifications a month or for"
            " bursty senders; provisioned for steady traffic well above that, where it saves up to"
            f" {1 - compared.steady_ratio:.0%} of the DynamoDB bill.",
        ]
    )


def _throughput(results: Mapping[str, Any]) -> str:
    through = results.get("throughput")
    if not through:
        return "## Throughput\n\nNot measured in this run (`--skip-throughput`)."
    rows = [_throughput_row("this run", through)]
    base = _baseline(results, "throughput")
    if base:
        rows.append(_throughput_row("baseline", base))
    return "## Throughput through the local stack\n\n" + _table(
        [
            "run",
            "notifications (tenants, clients)",
            "statuses",
            "accept ms p50 / p95 / p99",
            "accept → completed ms p50 / p95 / p99",
            "completions/s",
            "moto raw notifications/s",
            "stack ÷ moto",
        ],
        rows,
    )


def _throughput_row(label: str, through: Mapping[str, Any]) -> list[str]:
    def trio(values: Mapping[str, float]) -> str:
        return " / ".join(_ms(values.get(rank)) for rank in ("p50", "p95", "p99"))

    return [
        label,
        f"{through['notifications']} ({through['tenants']}, {through['concurrency']})",
        ", ".join(f"{status} {count}" for status, count in through["statuses"].items())
        + "".join(f"; refused {refusal}: {count}" for refusal, count in through.get("refused", {}).items())
        + "".join(
            f"; logged {problem}: {count}" for problem, count in through.get("logged_problems", {}).items()
        ),
        trio(through["accept_ms"]),
        trio(through["accept_to_completed_ms"]),
        f"{through['completions_per_second']:.1f}",
        f"{through['moto_raw']['notifications_per_second']:.1f}",
        f"{through['ceiling_ratio']:.2f}",
    ]


# The steps an attempt's detail (docs/api.md, "Each attempt") changes, and what they cost at commit
# 0fe2cec's parent (1a8aefc), measured with the same scenarios before the detail was kept: write
# units per notification and the status item's size after the attempt's write.
ATTEMPT_DETAIL_STEPS = ("deliver_webhook", "retried_webhook_large_answer", "deliver_email", "retried_pass")
ATTEMPT_DETAIL_BEFORE = {
    "deliver_webhook": (2.0, 445),
    "retried_webhook_large_answer": (3.6, 1253),
    "deliver_email": (2.0, 506),
    "retried_pass": (2.0, 607),
}


def _item_bytes(step: Mapping[str, Any], item: str) -> int | None:
    """The size of ``item`` after its last write in ``step`` (None: the step did not write it)."""
    sizes = [write["bytes_after"] for write in step["write_units"]["by_item"] if write["item"].endswith(item)]
    return sizes[-1] if sizes else None


def _attempt_detail(results: Mapping[str, Any]) -> str:
    steps = results["write_units_per_notification"]
    if any(key not in steps for key in ATTEMPT_DETAIL_STEPS):
        return ""
    rows = []
    for key in ATTEMPT_DETAIL_STEPS:
        step, (units_before, bytes_before) = steps[key], ATTEMPT_DETAIL_BEFORE[key]
        attempt_item = _item_bytes(step, "ATTEMPT#*")
        rows.append(
            [
                step["title"],
                f"{_units(units_before)} → {_units(step['write_units']['total'])}",
                f"{bytes_before} → {_item_bytes(step, 'STATUS')}",
                "–" if attempt_item is None else f"{attempt_item} B, written once",
            ]
        )
    return "\n".join(
        [
            "## What an attempt's detail costs",
            "",
            'Each attempt keeps what a developer debugging it needs (docs/api.md, "Each attempt"): an email\'s'
            " providers their latency (and message id, as before), a webhook its request headers as sent"
            " (credentials masked; the tenant's own header values are not copied: they stay sealed in the"
            " request item and are shown from there), the answer's status, latency, first 20 headers and first"
            " 4 KB. Method, URL and body size are not stored at all: they come from the request item when the"
            " job is read. Before, an attempt kept the answer's first 1 KB and nothing else.",
            "",
            _table(["step", "write units (before → now)", "status item, bytes", "attempt item"], rows),
            "",
            "Where the detail lives decides what it costs, because the status item is rewritten by every"
            " claim and outcome and an UpdateItem is billed on the larger of the item before and after:",
            "",
            "- **The attempt that ends the job** (delivered, or failed for good) carries its exchange inline in"
            " its log entry: nothing rewrites the status item after that write, so it is paid once, and a"
            " 1 KB webhook whose endpoint answers briefly stays within the one unit it already paid (the status"
            " item grows by about 500 bytes, to under 1 KB). An answer with a long body or many headers makes"
            " that one write cost up to 5 units (4 KB excerpt), once.",
            "- **An attempt that is retried** writes its exchange to an item of its own in the job's partition"
            " (`ATTEMPT#<log id>`), with one PutItem, once. Inline, a 4 KB answer would make every later"
            " claim and outcome of the job cost 5 units instead of 1 (with 3 attempts: 4 more writes of"
            " 5 units). Before, the 1 KB excerpt inline cost that way already: 2 units per later write.",
            "- An email's detail is a few bytes per provider (`latencyMs`): no unit more.",
            "- Reading a job reads its attempt items with it (the same Query of its partition).",
            "- A manual retry of a failed job rewrites its status item, with the last attempt's inline"
            " exchange: a job failed on a 4 KB answer costs up to 5 units per write on its way after a retry.",
        ]
    )


# The accepts a named key changes: the account's first key, a scoped key among many, a key's first use.
NAMED_KEY_STEPS = ("accept_webhook", "accept_webhook_scoped_key", "accept_webhook_key_first_use")


def _partition_bytes(step: Mapping[str, Any]) -> int:
    return max(
        (read["bytes"] for read in step["read_units"]["by_item"] if read["item"].startswith("TENANT#")),
        default=0,
    )


def _named_keys(results: Mapping[str, Any]) -> str:
    steps = results["write_units_per_notification"]
    if any(key not in steps for key in NAMED_KEY_STEPS):
        return ""
    rows = [
        [
            steps[key]["title"],
            _units(steps[key]["write_units"]["total"]),
            _units(steps[key]["read_units"]["total"]),
            f"{_partition_bytes(steps[key])} B",
        ]
        for key in NAMED_KEY_STEPS
    ]
    return "\n".join(
        [
            "## What named keys cost an accept",
            "",
            "A request reads its tenant's partition (profile, providers, domains, breakers, named keys,"
            " members) with one strongly consistent Query: 1 read unit per started 4 KB. A named key is"
            " about 270 bytes and a member about 200, so an account with a dozen keys reads 2 units per"
            " request instead of 1 (at most 50 keys and 100 members: about 10 units). A key's last use is"
            " written at most once per five minutes per key, by one conditional UpdateItem of its own small"
            " item (1 write unit, and one AWS call more on that request only).",
            "",
            _table(["step", "write units", "read units", "tenant partition read"], rows),
        ]
    )


def _health() -> str:
    if not HEALTH_RESULTS.exists():
        return ""
    health = json.loads(HEALTH_RESULTS.read_text())
    runs = health["runs"]
    down = runs[0]["providerOutage"]["downProvider"]
    on_off = {True: "on", False: "off"}
    provider = _table(
        [
            "breakers",
            "emails",
            "completed",
            "delivered by",
            "calls to the provider down",
            "attempts",
            "accept → completed ms p50 / p95",
            "breaker writes",
        ],
        (
            [
                on_off[run["breakers"]],
                p["emails"],
                p["completed"],
                ", ".join(p["deliveredBy"]),
                p["downProviderCalls"],
                p["attemptsSpent"],
                f"{p['acceptToCompleted_ms_p50']:,} / {p['acceptToCompleted_ms_p95']:,}",
                p["breakerWrites"],
            ]
            for run in runs
            for p in [run["providerOutage"]]
        ),
    )
    endpoint = _table(
        [
            "breakers",
            "webhooks",
            "failed before recovery",
            "re-queued by recover",
            "delivered",
            "attempts",
            "requests to the endpoint",
            "dead-letter copies",
            "all delivered after s",
            "breaker writes",
        ],
        (
            [
                on_off[run["breakers"]],
                e["webhooks"],
                e["failedBeforeRecovery"],
                e["recovered"],
                e["delivered"],
                e["attemptsSpent"],
                e["requestsToTheEndpoint"],
                e["deadLetterCopies"],
                e["allDeliveredAfter_s"],
                e["breakerWrites"],
            ]
            for run in runs
            for e in [run["endpointOutage"]]
        ),
    )
    return "\n\n".join(
        [
            f"## Circuit breakers under outages (`python -m bench.health`, {health['measuredAt']}, commit `{health['commit']}`)",
            health["setting"],
            f"### {down} down for the whole run (answering 500), tenants whose order starts with {down}",
            provider,
            f"### A webhook endpoint down for {runs[0]['endpointOutage']['outageSeconds']} s, then back",
            endpoint,
        ]
    )


def _prices(results: Mapping[str, Any]) -> str:
    prices = results["prices"]
    rows = [
        [
            entry["service"],
            entry["dimension"],
            f"${entry['usd']} per {entry['per']:,}",
            entry["as_of"],
            entry["source_url"],
            entry["confidence"],
        ]
        for entry in [*prices["prices"].values(), *prices["alternatives"].values()]
    ]
    return f"## Prices used (compiled {prices['compiled']}, `bench/prices.yaml`)\n\n" + _table(
        ["service", "dimension", "price", "as of", "source", "confidence"], rows
    )


# ---------------------------------------------------------------- events and fan-out

EVENT_DELIVERY_STEPS = ("event_fanout_page", "event_deliver", "event_deliver_rate_limited")
TARGET_WRITE_UNITS_PER_DELIVERY = 4


def _event_row(step: Mapping[str, Any], calls: Mapping[str, Any]) -> list[str]:
    return [
        step["title"],
        ", ".join(f"{name} {_units(count)}" for name, count in calls["calls"].items()),
        _units(step["write_units"]["total"]),
        _units(step["read_units"]["total"]),
        ", ".join(f"{name} {use['ms']:.1f} ms" for name, use in calls["lambda"].items()),
    ]


def _events(results: Mapping[str, Any]) -> str:
    steps, calls = results["write_units_per_notification"], results["calls_per_notification"]
    accepts = [f"event_accept_{width}" for width in ACCEPT_WIDTHS]
    if not all(key in steps for key in (*accepts, *EVENT_DELIVERY_STEPS)):
        return ""
    header = ["step", "calls", "write units", "read units", "handler time (warm, this machine)"]
    page, deliver, limited = (steps[key] for key in EVENT_DELIVERY_STEPS)
    per_job = page["write_units"]["total"] + deliver["write_units"]["total"]
    fixed = steps[accepts[-1]]["write_units"]["total"]
    job = next(item for item in page["write_units"]["by_item"] if item["item"].startswith("JOB#"))
    verdict = "within" if per_job <= TARGET_WRITE_UNITS_PER_DELIVERY else "above"
    reads = " / ".join(_units(steps[key]["read_units"]["total"]) for key in accepts)
    summary = (
        f"**Write units per delivered fan-out job: {_units(per_job)}** ({verdict} the target of"
        f" {TARGET_WRITE_UNITS_PER_DELIVERY}): the fan-out page's conditional put of the job"
        f" ({_units(page['write_units']['total'])}: the job item of {job['bytes_after']} bytes, which refers"
        " to the 1 KB event the event item holds once (the queue message carries the body)"
        f"{_over_a_unit(job['bytes_after'])}, {_units(job['table_units'])} table and"
        f" {_units(job['index_units'])} index units) and the"
        f" worker's claim and outcome ({_units(deliver['write_units']['total'])}); plus {_units(fixed)} per"
        " event whatever its width (the usage counter and the event item). A rate-limited subscription's"
        f" delivery writes {_units(limited['write_units']['total'] - deliver['write_units']['total'])} more"
        f" (its send slot). Read units: {reads} per event for {' / '.join(map(str, ACCEPT_WIDTHS))}"
        " subscriptions (the accept reads every subscription item of the tenant to count its audience),"
        f" {_units(page['read_units']['total'])} per delivery at the fan-out (the event and the page's"
        f" subscriptions), {_units(deliver['read_units']['total'])} per delivery in the worker (profile,"
        " subscription and its breaker)."
    )
    return "\n\n".join(
        [
            "## Events and fan-out",
            "A 1 KB event (`bench/samples.py`'s order, checked against a small JSON Schema) sent to a tenant's"
            " subscriptions, which point at the sandbox's hook receiver; measured in-process as the steps above.",
            "Per event (its fixed cost, by fan-out width):",
            _table(header, [_event_row(steps[key], calls[key]) for key in accepts]),
            "Per delivery job (the fan-out page of 100: its calls and reads shared by the page's jobs):",
            _table(header, [_event_row(steps[key], calls[key]) for key in EVENT_DELIVERY_STEPS]),
            summary,
            _fanout_timing(results),
            _fanout_costs(results),
        ]
    )


def _over_a_unit(size: int) -> str:
    """How far an item's size is past a whole write unit (1 KB), when that cost it a unit."""
    over = size % 1024
    return f", {over} bytes past {size // 1024} KB" if size > 1024 and over else ""


def _fanout_timing(results: Mapping[str, Any]) -> str:
    timing = results.get("fanout_timing")
    if not timing:
        return (
            "Accept → last subscription's first attempt: not measured in this run (`--skip-fanout-timing`)."
        )
    rows = [
        [
            _units(width["subscriptions"]),
            f"{width['median_seconds']:.2f}",
            ", ".join(f"{seconds:.2f}" for seconds in width["runs"]),
            f"{width['registration_seconds']:.0f} s, {width['registered_by']}",
            f"{width.get('accept_503s', 0)} / {width.get('fanout_page_timeouts', 0)}",
        ]
        for width in timing.values()
    ]
    return "\n\n".join(
        [
            "### Accept → the last subscription's first attempt, through the local stack",
            "From the 202 (the client's clock) to the last subscription's first arrival at the sandbox's hook"
            " receiver (its `receivedAt`), one tenant per width with its subscriptions in place beforehand"
            " (registration: how, and how long it took); every endpoint answers 200. The local stack runs"
            " at most 4 environments per function against one moto server, on this machine: a large"
            " fan-out here measures that ceiling (the throughput section's moto raw rate), not Lambda's"
            " concurrency.",
            _table(
                [
                    "subscriptions",
                    "median s",
                    "each run s",
                    "registration",
                    "accept 503s retried / fan-out pages timed out (10 s)",
                ],
                rows,
            ),
            "A 503 is the accept's read of every subscription outlasting the API clients' 10 s read"
            " timeout in moto (which serialises each item it answers in a few ms); a page that times out"
            " comes back after the fan-out queue's 60 s visibility timeout and writes only what is missing,"
            " so either adds to the time here, as it would in AWS.",
        ]
    )


def _fanout_costs(results: Mapping[str, Any]) -> str:
    costs = results.get("fanout_cost_per_million")
    if not costs:
        return ""
    names = list(costs)
    services = list(next(iter(costs.values()))["usd_by_service"])
    rows = [
        [service, *(_usd(costs[name]["usd_by_service"][service]) for name in names)] for service in services
    ]
    rows.append(["**total**", *(f"**{_usd(costs[name]['usd_total'])}**" for name in names)])
    svix = results["prices"]["alternatives"]["svix"]
    svix_usd = svix["usd"] / svix["per"] * MILLION
    rows.append(["Svix ÷ Herald", *(f"{svix_usd / costs[name]['usd_total']:.0f}×" for name in names)])
    quantities = list(next(iter(costs.values()))["per_notification"])
    billed = [
        [quantity, *(_units(costs[name]["per_notification"][quantity]) for name in names)]
        for quantity in quantities
    ]
    return "\n\n".join(
        [
            "### Cost per million fan-out deliveries (USD, us-east-1 list prices, free tiers not subtracted)",
            f"Assumptions: one 1 KB event fanned out to {FANOUT_WIDTH} subscriptions (its accept shared by"
            " them), every delivery answered 2xx on its first attempt, the day counts' share of a webhook;"
            " API Gateway for the event's one request, Lambda for the accept, the fan-out page and the worker,"
            " SQS requests (the fan-out page, the delivery messages, the event source mappings' receives and"
            " deletes), DynamoDB units and KMS requests as measured. Each delivery decrypts its subscription's"
            " signing secret (one KMS call) because every subscription is new to the worker here; a warm"
            " worker that delivered to the subscription recently has its data key cached.",
            _table(["service", *names], rows),
            f"Svix's list price as of writing: {_usd(svix_usd)} per million messages, from svix.com/pricing"
            f" (`bench/prices.yaml`: {svix['as_of']}).",
            "What is billed per delivery:",
            _table(["quantity", *names], billed),
        ]
    )
