"""Scheduled sends: when a job with a ``sendAt`` is due, and how far ahead it may be asked for.

SQS delays a message at most 15 minutes, so a job due later waits in the table instead: its status
item carries a due-time index entry (gsi3) that the dispatcher drains every minute, sending each job
that falls due within ``DISPATCH_HORIZON_SECONDS`` with the SQS delay that is left. A job therefore
starts at its ``sendAt`` plus the queue's pick-up time, never before it.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import msgspec

from herald.domain.clock import parse_iso
from herald.domain.jobs import Channel

# A sendAt at most this far ahead is accepted.
MAX_AHEAD = timedelta(days=30)
# A sendAt at most this far in the past means now (the client's clock, or the request's way, was slow).
PAST_GRACE = timedelta(minutes=1)
# The dispatcher runs every minute and sends what falls due before its next run and a run's
# lateness: the SQS delay covers the rest (at most 15 minutes, so this stays well below).
DISPATCH_HORIZON_SECONDS = 120
# The due-time index is spread over this many partitions (one hot partition takes ~1 000 writes/s).
DUE_SHARDS = 4


class SendAtOutOfRange(ValueError):
    """The ``sendAt`` lies more than a minute in the past or more than 30 days ahead."""


def due_time(send_at: str | None, now: datetime) -> datetime | None:
    """When a job asking for ``send_at`` is to be sent; None: now (no sendAt, or one just past)."""
    if send_at is None:
        return None
    moment = parse_iso(send_at)
    if moment < now - PAST_GRACE or moment > now + MAX_AHEAD:
        raise SendAtOutOfRange(send_at)
    return moment if moment > now else None


def delay_seconds(send_at: str, now: datetime) -> int:
    """What is left of the wait, rounded up so that the queue never hands the job out early."""
    return max(0, math.ceil((parse_iso(send_at) - now).total_seconds()))


class DueJob(msgspec.Struct, frozen=True):
    """A scheduled job as the due-time index holds it: enough to queue it without reading its request."""

    tenant_id: str
    job_id: str
    channel: Channel
    priority: int
    send_at: str
    created_at: str
    ordering_key: str | None = None
