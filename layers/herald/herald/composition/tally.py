"""Composition root of the TallyFunction: the day counts from the table's stream."""

from __future__ import annotations

from herald.adapters.store.activity_store import DynamoActivity
from herald.composition.common import foundation, once
from herald.services.activity import DayCountTally


def _tally() -> DayCountTally:
    return DayCountTally(DynamoActivity(foundation().table))


def tally() -> DayCountTally:
    return once(_tally)
