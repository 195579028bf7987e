"""docs/performance.png's cost panel: the dollar amounts read as written, never as mathematics."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.cbook import is_math_text

from bench.chart import _costs


def shown(text: str) -> str:
    """What matplotlib draws for a text that is not mathematics: escaped dollars as dollars."""
    assert not is_math_text(text), text
    return text.replace("\\$", "$")


def test_the_totals_the_lines_and_the_off_scale_alternatives_show_their_dollar_signs() -> None:
    costs = {
        "notifications": {
            "email": {"usd_by_service": {"DynamoDB": 3.5, "SQS": 0.7}},
            "webhook": {"usd_by_service": {"DynamoDB": 3.2, "SQS": 0.7}},
        },
        "alternatives": {
            "svix": {"service": "Svix", "usd_per_million": 100.0},
            "hookdeck": {"service": "Hookdeck", "usd_per_million": 10.0},
            "sns": {"service": "Amazon SNS", "usd_per_million": 1.1},
        },
    }
    figure, axes = plt.subplots()
    try:
        _costs(axes, costs, 4.5)
        totals = [shown(text.get_text()) for text in axes.texts]
        drawn_legend = axes.get_legend()
        assert drawn_legend is not None
        legend = [shown(entry.get_text()) for entry in drawn_legend.get_texts()]
        title = shown(axes.get_title())
    finally:
        plt.close(figure)

    assert totals == ["$4.20", "$3.90"]
    assert legend[:2] == ["design floor, 1 KB webhook $4.50", "Amazon SNS $1.10"]
    assert title == "Cost per million (USD); off scale: Svix $100, Hookdeck $10"
