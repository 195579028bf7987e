"""Shared test set-up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from herald.observability import metrics


@pytest.fixture(autouse=True)
def _fresh_metrics() -> Iterator[None]:
    """Powertools keeps metrics per process (and refuses a 101st value of one metric): start clean."""
    metrics.clear_metrics()
    yield
    metrics.clear_metrics()
