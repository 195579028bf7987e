"""Shared test set-up."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

# No timed asserts: on a busy machine one example of a property test may take longer than
# hypothesis's default deadline of 200 ms, which says nothing about the property.
settings.register_profile("herald", deadline=None)
settings.load_profile("herald")

# Lambda sets these before any import; herald.observability builds its Metrics at import time.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "HeraldTests")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "herald-tests")

from herald.observability import metrics  # noqa: E402

pytest_plugins = ["tests.support.least_privilege"]


@pytest.fixture(autouse=True)
def _fresh_metrics() -> Iterator[None]:
    """Powertools keeps metrics per process (and refuses a 101st value of one metric): start clean."""
    metrics.clear_metrics()
    yield
    metrics.clear_metrics()
