"""Composition root of the TallyFunction: the day counts from the table's stream."""

from __future__ import annotations

from cachetools import TTLCache

from herald.adapters.store.activity_store import DynamoActivity
from herald.composition.common import foundation
from herald.composition.process import once
from herald.services.activity import DayCountTally

# Changes already added, by stream sequence number: enough for the retries of a few full batches.
_APPLIED_MAX = 20_000
_APPLIED_SECONDS = 3_600


def _tally() -> DayCountTally:
    return DayCountTally(DynamoActivity(foundation().table), TTLCache(_APPLIED_MAX, _APPLIED_SECONDS))


def tally() -> DayCountTally:
    return once(_tally)
