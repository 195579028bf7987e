"""The figures of docs/load.md, from the last ``make load`` (docs/load-results.json).

``python -m bench.load_page`` rewrites the part of the page between its two markers; the rest of the
page is prose. A unit test renders the results again and compares, so the page cannot drift from them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from herald_local.config import project_root

RESULTS = project_root() / "docs" / "load-results.json"
PAGE = project_root() / "docs" / "load.md"
BEGIN = "<!-- figures: written by python -m bench.load_page from docs/load-results.json -->"
END = "<!-- end of figures -->"


def _percentiles(cuts: Mapping[str, float]) -> str:
    return " / ".join(f"{cuts[name]:,.0f}" for name in ("p50", "p95", "p99"))


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in sorted(counts.items()))


def render(report: Mapping[str, Any]) -> str:
    run, mix = report["run"], report["run"]["mix"]
    rows = [
        ("notifications accepted", f"{report['answers'].get('202', 0):,} of {report['jobs']:,}"),
        ("clients, tenants", f"{report['clients']}, {report['tenants']}"),
        (
            "mix",
            f"{mix['failingRecipients']:.1%} failing recipients, {mix['fallbackRecipients']:.1%} needing "
            f"the fallback provider, {mix['timeoutRecipients']:.1%} timing out at the first provider, "
            f"{mix['repeatedKeys']:.0%} sent again with the same idempotency key",
        ),
        ("answers (HTTP status: count)", _counts(report["answers"])),
        ("outcomes", _counts(report["outcomes"])),
        ("lost (never completed or failed)", f"{report['lost']:,}"),
        ("sent twice (sandbox's received count per job)", f"{report['sentTwice']:,}"),
        ("ended otherwise than the recipient says", f"{report['unexpectedOutcomes']:,}"),
        ("failed without a reason", f"{report['failedWithoutReason']:,}"),
        ("repeated key not answered 409 with the first job", f"{report['duplicateAnswersWrong']:,}"),
        ("status reads not answered 200 (HTTP status: count)", _counts(report["readErrors"]) or "none"),
        ("wall time, start to last job ended", f"{report['seconds']:,.0f} s"),
        ("jobs ended per second", f"{report['completionsPerSecond']:,.1f}"),
        ("accept latency ms p50 / p95 / p99", _percentiles(report["acceptMs"])),
        ("accept → completed or failed, ms p50 / p95 / p99", _percentiles(report["acceptToFinalMs"])),
        ("peak resident memory of the whole stack", f"{report['peakMemoryMB']:,} MB"),
    ]
    machine = run["machine"]
    lines = [
        BEGIN,
        f"Run started {run['started']} on commit `{run['code']['commit'][:10]}`, Python {machine['python']}, "
        f"{machine['cpus']} CPUs, moto {machine['moto']}.",
        "",
        "| measured | value |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in rows),
        END,
    ]
    return "\n".join(lines)


def rewritten(page: str, report: Mapping[str, Any]) -> str:
    before, rest = page.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    return before + render(report) + after


def main() -> None:
    PAGE.write_text(rewritten(PAGE.read_text(), json.loads(RESULTS.read_text())))


if __name__ == "__main__":
    main()
