"""The one Logger and Metrics of every function (Powertools); nobody creates a second.

The Tracer (and with it the X-Ray SDK) is only imported when the template turns tracing on
(``POWERTOOLS_TRACE_DISABLED`` false), to keep cold starts small.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

logger = Logger()
metrics = Metrics()

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["MetricUnit", "correlation_id", "count", "logger", "metrics", "traced"]


def correlation_id() -> str | None:
    """The id the current invocation's log lines carry (the API request's, a queue message's, ...)."""
    value = logger.get_correlation_id()
    return None if value is None else str(value)


def tracing_enabled() -> bool:
    return os.environ.get("POWERTOOLS_TRACE_DISABLED", "true").strip().lower() not in {"1", "true"}


@lru_cache(maxsize=1)
def _tracer() -> Any:
    from aws_lambda_powertools import Tracer

    return Tracer()


def traced(handler: F) -> F:
    """Wrap a Lambda handler in the Powertools Tracer when tracing is on; otherwise return it as is."""
    if not tracing_enabled():
        return handler
    wrapped: F = _tracer().capture_lambda_handler(handler)
    return wrapped


def count(
    name: str,
    dimensions: Mapping[str, str] | None = None,
    *,
    value: float = 1,
    unit: MetricUnit = MetricUnit.Count,
) -> None:
    """A business metric with its own dimensions (channel, priority, ...), flushed with the others.
    Never a tenant id as a dimension: it would create a metric per tenant."""
    if not dimensions:
        metrics.add_metric(name=name, unit=unit, value=value)
        return
    with single_metric(name=name, unit=unit, value=value, namespace=metrics.namespace) as metric:
        for key, dimension in dimensions.items():
            metric.add_dimension(name=key, value=dimension)
