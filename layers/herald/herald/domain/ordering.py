"""Ordering keys: the tenant's jobs that share a key are delivered one after another, in acceptance
order, through a FIFO queue of their channel with one message group per tenant and key.

SQS hands out a group's next message only once the one before it is deleted (the job ended) or
visible again, so a group is served strictly in order, and other groups, and unkeyed jobs in the
priority queues, go on beside it. A keyed job's retry keeps its message in flight for the retry's
delay instead of sending a new one (which would go to the back of the group): its key's later jobs
wait for it. That is head-of-line blocking by design; ``head_of_line_bound`` says how long it lasts.
"""

from __future__ import annotations

import hashlib

from herald.domain.backoff import JITTER, MAX_DELAY_SECONDS


def ordering_group(tenant_id: str, key: str) -> str:
    """The message group of a tenant's key: a hash, since a group id is at most 128 characters of a
    narrower alphabet than a key's, and the tenant id keeps two tenants' equal keys apart."""
    return hashlib.sha256(f"{tenant_id}\n{key}".encode()).hexdigest()


def head_of_line_bound(max_attempts: int, base_delay_seconds: int, attempt_seconds: int) -> int:
    """The longest a keyed job can hold its key's later jobs: every attempt taking
    ``attempt_seconds`` and every retry delay at its jittered maximum."""
    delays = sum(
        min(int(base_delay_seconds * 2**attempt * (1 + JITTER) + 0.5), MAX_DELAY_SECONDS)
        for attempt in range(max_attempts - 1)
    )
    return max_attempts * attempt_seconds + delays
