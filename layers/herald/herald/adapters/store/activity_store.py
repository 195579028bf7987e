"""A tenant's jobs by day, in the tenant's counter partition (``USAGE#<tenantId>``):

- the billing period's item (``PERIOD#<period>``, written by the accept path's one counter write)
  holds each day's accepted jobs per channel, as ``ae1130`` / ``aw1130`` (emails / webhooks of 30
  November); a period is at most a month long, so month and day name the day;
- one small item per day (``DAY#2026-11-30``) holds the outcomes of that day's jobs, added by
  TallyFunction from the table's stream once per batch and tenant-day (a retry takes a failed job
  back out of the failed count), in transactions whose request tokens make a retried batch count
  once.

Reading any range of days is one Query of that partition: the day items of the range and the period
items (at most ~14: their TTL is about a year), a few read units whatever the tenant's volume.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from pynamodb.attributes import NumberAttribute
from pynamodb.expressions.operand import Path

from herald.adapters.store.counter_store import COUNTER_TTL_SECONDS
from herald.adapters.store.models import DAY_SK_PREFIX, PERIOD_SK_PREFIX, DayCountItem, day_sk, usage_pk
from herald.adapters.store.table import TRANSACTION_ITEMS, Table, transaction, translated
from herald.domain.activity import COUNTED_OUTCOMES, DayCounts, merge_days, outcome_field
from herald.domain.jobs import Channel, JobStatus

# The last sort key of the partition's period items ("PERIOD#" and any period key sort below it).
_LAST_PERIOD_SK = f"{PERIOD_SK_PREFIX}~"
_PERIOD_FORMAT = "%Y%m%dT%H%M%S"
_OUTCOMES = {
    outcome_field(status, channel): (status, channel) for status in COUNTED_OUTCOMES for channel in Channel
}


class DynamoActivity:
    def __init__(self, table: Table) -> None:
        self._table = table

    def add_outcomes(self, changes: Mapping[tuple[str, date], Mapping[str, int]], token: str) -> None:
        """Transactions of up to ``TRANSACTION_ITEMS`` day items, each with its own request token
        (``token`` and its number): DynamoDB applies a token's transaction once in ten minutes, so
        a retry adds only the transactions that failed. Every parameter follows from the changes
        (the expiry from the day, not the clock): a token repeated with other parameters fails."""
        tenant_days = sorted(changes)
        for number, start in enumerate(range(0, len(tenant_days), TRANSACTION_ITEMS)):
            part = tenant_days[start : start + TRANSACTION_ITEMS]
            with transaction(self._table.connection, "day count write", token=f"{token}-{number}") as tx:
                for tenant_id, day in part:
                    item = self._table[DayCountItem](usage_pk(tenant_id), day_sk(day))
                    tx.update(item, actions=_additions(day, changes[(tenant_id, day)]))

    def days(self, tenant_id: str, first: date, last: date) -> list[DayCounts]:
        sort_key = Path("sk")
        items = self._query(
            usage_pk(tenant_id), sort_key.between(f"{DAY_SK_PREFIX}{first.isoformat()}", _LAST_PERIOD_SK)
        )
        found: list[DayCounts] = []
        for item in items:
            key = item["sk"]["S"]
            if key.startswith(DAY_SK_PREFIX):
                found.append(_outcomes(date.fromisoformat(key.removeprefix(DAY_SK_PREFIX)), item))
            else:
                found += _accepted(key.removeprefix(PERIOD_SK_PREFIX), item)
        merged = merge_days(entry for entry in found if first <= entry.day <= last)
        return [merged[day] for day in sorted(merged)]

    def _query(self, partition: str, condition: Any) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        start: dict[str, Any] | None = None
        with translated("activity read"):
            while True:
                # The model's own connection, raw: the day attributes have no class attribute.
                page = self._table.item._get_connection().query(
                    partition, range_key_condition=condition, exclusive_start_key=start
                )
                items += page.get("Items", [])
                start = page.get("LastEvaluatedKey")
                if not start:
                    return items


def _additions(day: date, changes: Mapping[str, int]) -> list[Any]:
    expires_at = int(datetime.combine(day, time.min, UTC).timestamp()) + COUNTER_TTL_SECONDS
    actions: list[Any] = [
        DayCountItem.kind.set(DayCountItem.kind | DayCountItem),
        DayCountItem.expires_at.set(expires_at),
    ]
    return actions + [NumberAttribute(attr_name=name).add(delta) for name, delta in sorted(changes.items())]


def _number(item: Mapping[str, Any], name: str) -> int:
    value = item.get(name)
    return int(value["N"]) if value else 0


def _outcomes(day: date, item: Mapping[str, Any]) -> DayCounts:
    counted: dict[JobStatus, dict[Channel, int]] = {status: {} for status in COUNTED_OUTCOMES}
    for name, (status, channel) in _OUTCOMES.items():
        counted[status][channel] = _number(item, name)
    return DayCounts(
        day,
        completed=counted[JobStatus.COMPLETED],
        failed=counted[JobStatus.FAILED],
        cancelled=counted[JobStatus.CANCELLED],
    )


def _accepted(period: str, item: Mapping[str, Any]) -> list[DayCounts]:
    """The days of a period item: ``a<e|w><MMDD>`` attributes, dated from the period's start."""
    start = datetime.strptime(period, _PERIOD_FORMAT).date()
    by_day: dict[date, dict[Channel, int]] = {}
    for name, value in item.items():
        if len(name) != 6 or name[0] != "a" or not name[2:].isdigit() or "N" not in value:
            continue
        channel = Channel.EMAIL if name[1] == "e" else Channel.WEBHOOK
        day = _dated(start, name[2:])
        if day is not None:
            by_day.setdefault(day, {})[channel] = int(value["N"])
    return [DayCounts(day, accepted=counts) for day, counts in by_day.items()]


def _dated(start: date, month_day: str) -> date | None:
    """The first date on or after ``start`` with this month and day (periods are at most a month)."""
    month, day = int(month_day[:2]), int(month_day[2:])
    for year in (start.year, start.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= start:
            return candidate
    return None
