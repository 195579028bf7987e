"""The one Logger and Metrics of every function (Powertools); nobody creates a second.

The Tracer (and with it the X-Ray SDK) is only imported when tracing is on, to keep cold starts small.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics()


@lru_cache(maxsize=1)
def tracer() -> Any | None:
    """The Powertools Tracer when the template turned tracing on, else None (no X-Ray import)."""
    if os.environ.get("POWERTOOLS_TRACE_DISABLED", "true").lower() in {"1", "true"}:
        return None
    from aws_lambda_powertools import Tracer

    return Tracer()
