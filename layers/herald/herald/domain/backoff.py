"""Retry delays: exponential with ±20 % jitter, honouring a provider's Retry-After within bounds."""

from __future__ import annotations

import random

JITTER = 0.2
# SQS delays a message at most 15 minutes; a longer Retry-After is capped to it.
MAX_DELAY_SECONDS = 900


def retry_delay(
    attempt: int,
    base_seconds: int,
    retry_after: float | None = None,
    rand: random.Random | None = None,
) -> int:
    """Seconds to wait after failed ``attempt`` (1-based): base, 2x base, 4x base, ..."""
    source = rand or random
    nominal = base_seconds * 2 ** max(attempt - 1, 0)
    delay = nominal * (1 + source.uniform(-JITTER, JITTER))
    if retry_after is not None and retry_after > delay:
        delay = retry_after
    return max(1, min(int(delay + 0.5), MAX_DELAY_SECONDS))
