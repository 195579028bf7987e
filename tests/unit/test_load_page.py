"""docs/load.md's figures: rendered from a load report, and the committed page matches its results."""

from __future__ import annotations

import json
from typing import Any

from bench.load_page import BEGIN, END, PAGE, RESULTS, render, rewritten

REPORT: dict[str, Any] = {
    "jobs": 10000,
    "clients": 8,
    "tenants": 4,
    "answers": {"202": 10000, "409": 500},
    "outcomes": {"completed": 9487, "failed": 513},
    "lost": 0,
    "sentTwice": 0,
    "failedWithoutReason": 0,
    "unexpectedOutcomes": 0,
    "duplicateAnswersWrong": 0,
    "readErrors": {},
    "seconds": 2712.4,
    "completionsPerSecond": 3.69,
    "acceptMs": {"p50": 101.2, "p95": 380.7, "p99": 1290.0},
    "acceptToFinalMs": {"p50": 5012.0, "p95": 96123.5, "p99": 101000.0},
    "peakMemoryMB": 2210,
    "run": {
        "started": "2026-12-01T02:40:00Z",
        "code": {"commit": "0123456789abcdef"},
        "machine": {"python": "3.11.7", "cpus": 2, "moto": "5.2.5"},
        "mix": {
            "failingRecipients": 0.05,
            "fallbackRecipients": 0.03,
            "timeoutRecipients": 0.005,
            "repeatedKeys": 0.05,
        },
    },
}


def test_the_figures_name_each_check_and_measurement_with_its_value() -> None:
    page = render(REPORT)

    assert "Run started 2026-12-01T02:40:00Z on commit `0123456789`, Python 3.11.7, 2 CPUs" in page
    assert "| notifications accepted | 10,000 of 10,000 |" in page
    assert "| answers (HTTP status: count) | 202 10,000, 409 500 |" in page
    assert "| outcomes | completed 9,487, failed 513 |" in page
    assert "| lost (never completed or failed) | 0 |" in page
    assert "| status reads not answered 200 (HTTP status: count) | none |" in page
    assert "| accept latency ms p50 / p95 / p99 | 101 / 381 / 1,290 |" in page
    assert "| accept → completed or failed, ms p50 / p95 / p99 | 5,012 / 96,124 / 101,000 |" in page
    assert "| peak resident memory of the whole stack | 2,210 MB |" in page
    assert "5.0% failing recipients, 3.0% needing the fallback provider, 0.5% timing out" in page
    assert "5% sent again with the same idempotency key" in page


def test_rewriting_replaces_only_what_lies_between_the_markers() -> None:
    page = f"# Title\n\nprose\n\n{BEGIN}\nold figures\n{END}\n\nmore prose\n"

    new = rewritten(page, REPORT)

    assert new.startswith("# Title\n\nprose\n\n" + BEGIN)
    assert new.endswith(END + "\n\nmore prose\n")
    assert "old figures" not in new
    assert rewritten(new, REPORT) == new


def test_the_committed_page_shows_the_committed_results() -> None:
    page = PAGE.read_text()

    assert rewritten(page, json.loads(RESULTS.read_text())) == page
