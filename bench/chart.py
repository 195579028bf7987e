"""docs/performance.png: latency percentiles through the local stack, and cost per million
notifications by service beside the design floor and managed alternatives."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

RANKS = ("p50", "p95", "p99")
BAR_WIDTH = 0.38


def _latencies(axes: Axes, throughput: Mapping[str, Any] | None) -> None:
    axes.set_title("Local stack: latency percentiles (ms, log scale)")
    if not throughput:
        axes.text(0.5, 0.5, "not measured in this run", ha="center", transform=axes.transAxes)
        return
    series = {
        "accept (client round trip)": throughput["accept_ms"],
        "accept → completed": throughput["accept_to_completed_ms"],
    }
    for offset, (label, values) in enumerate(series.items()):
        positions = [index + (offset - 0.5) * BAR_WIDTH for index in range(len(RANKS))]
        bars = axes.bar(positions, [values[rank] for rank in RANKS], BAR_WIDTH, label=label)
        axes.bar_label(bars, fmt="%.0f", fontsize=8)
    axes.set_xticks(range(len(RANKS)), RANKS)
    axes.set_yscale("log")
    axes.legend(fontsize=8, loc="upper left")


def _costs(axes: Axes, costs: Mapping[str, Any], floor: float) -> None:
    notifications = costs["notifications"]
    names = list(notifications)
    bottoms = [0.0] * len(names)
    for service in next(iter(notifications.values()))["usd_by_service"]:
        values = [notifications[name]["usd_by_service"][service] for name in names]
        axes.bar(names, values, bottom=bottoms, label=service)
        bottoms = [bottom + value for bottom, value in zip(bottoms, values, strict=True)]
    # Two dollar signs in one text would be read as mathematics: each is escaped.
    for index, total in enumerate(bottoms):
        axes.text(index, total, f"\\${total:.2f}", ha="center", va="bottom", fontsize=8)
    lines = {"design floor, 1 KB webhook": floor}
    lines |= {alt["service"]: alt["usd_per_million"] for alt in costs["alternatives"].values()}
    top = max(bottoms) * 1.35
    for color, (label, usd) in zip(
        ("black", "tab:gray", "tab:olive", "tab:cyan"), lines.items(), strict=False
    ):
        if usd <= top:
            axes.axhline(usd, linestyle="--", color=color, linewidth=1, label=f"{label} \\${usd:.2f}")
    hidden = [f"{label} \\${usd:.0f}" for label, usd in lines.items() if usd > top]
    axes.set_title(
        "Cost per million (USD)" + (f"; off scale: {', '.join(hidden)}" if hidden else ""), fontsize=10
    )
    axes.set_ylim(0, top)
    axes.legend(fontsize=7, loc="upper left", ncols=2)


def draw(results: Mapping[str, Any], path: Path, floor: float) -> None:
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    _latencies(left, results.get("throughput"))
    _costs(right, results["cost_per_million"], floor)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
