"""Pacing a subscription's deliveries to its ``rateLimitPerSecond``: each delivery reserves the next
free send slot, one interval (1000 ms / rate) after the one before, and is not sent before it. The
slots are a token bucket of one token, refilled every interval, whose queue is explicit: a burst of
deliveries spreads out over time instead of being refused or retried.

Each delivery reserves one slot (one conditional write); one that must wait long goes back to its
queue holding its slot (the message carries it), and one that must wait less than
``SLEEP_LIMIT_MS`` waits in the worker, because SQS delays are whole seconds. A slot is good for one
interval: a delivery that comes back later than that takes a new one. So each delivery starts inside
its own slot's interval and no two slots' intervals overlap: at most one start per interval, which
is at most the rate in any second that begins at a slot (and one more in a second that straddles two
intervals' edges).
"""

from __future__ import annotations

import math

# Waits shorter than this are slept in the worker; longer ones go back to the queue.
SLEEP_LIMIT_MS = 1000
# SQS's longest message delay: a slot further ahead is waited for in several stretches.
MAX_QUEUE_DELAY_SECONDS = 900


def interval_ms(rate_per_second: int) -> int:
    """The time between two slots (at least 1 ms: 1000 per second at most)."""
    return max(1, 1000 // rate_per_second)


def queue_delay_seconds(wait_ms: int) -> int:
    """How long a delivery that must wait ``wait_ms`` goes back to its queue for."""
    return min(math.ceil(wait_ms / 1000), MAX_QUEUE_DELAY_SECONDS)
