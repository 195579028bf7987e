"""A tenant's counters, one small item per billing period: the jobs accepted in the period (quota)
and the requests of the current minute (rate limit), charged together by one conditional UpdateItem.

The minute lives in the item: a request in the same minute adds to ``requests``; the first request
of a new minute resets it. Which of the two updates to try first is remembered per tenant in this
process, so the usual case is one call; a refusal costs one more read to say why.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from pynamodb.attributes import NumberAttribute
from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from herald.adapters.store.models import CounterItem, active_gsi_pk, period_sk, tenant_id_of_usage, usage_pk
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.account import Usage
from herald.domain.errors import DependencyError
from herald.domain.jobs import Channel
from herald.domain.plans import Quota, channel_counter
from herald.services.outcomes import QuotaExhausted, RateLimited

# Counters stay readable (usage history) for about a year after their period.
COUNTER_TTL_SECONDS = 400 * 24 * 3600
# Same-minute and new-minute races between containers settle within a few tries.
MAX_TRIES = 4


class DynamoCounters:
    def __init__(self, table: Table, clock: Callable[[], float] = time.time) -> None:
        self._table = table
        self._clock = clock
        self._minutes: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def charge(
        self,
        tenant_id: str,
        period: str,
        minute: str,
        channel: Channel,
        *,
        rate_limit: int,
        quota: Quota | None,
        jobs: int = 1,
    ) -> None:
        if rate_limit < 1:
            raise RateLimited
        key = (usage_pk(tenant_id), period_sk(period))
        with self._lock:
            same_minute = self._minutes.get(key) == minute
        for _ in range(MAX_TRIES):
            try:
                self._update(key, minute, channel, rate_limit, quota, same_minute=same_minute, jobs=jobs)
            except ConditionFailed:
                item = self._read(key)
                _raise_refusal(item, minute, rate_limit, quota, jobs)
                # Not refused: the other update fits (a new minute began, or another container began it).
                same_minute = item is not None and item.minute is not None and item.minute >= minute
                minute = item.minute if same_minute and item is not None and item.minute else minute
                continue
            with self._lock:
                self._minutes[key] = minute
            return
        raise DependencyError("counter write failed: too much contention")

    def _update(
        self,
        key: tuple[str, str],
        minute: str,
        channel: Channel,
        rate_limit: int,
        quota: Quota | None,
        *,
        same_minute: bool,
        jobs: int,
    ) -> None:
        counted = getattr(CounterItem, channel_counter(channel))
        # The day's count rides on this write (no call or write unit of its own).
        today = accepted_on(minute, channel)
        actions: list[Any] = [
            CounterItem.total.set((CounterItem.total | 0) + jobs),
            counted.set((counted | 0) + jobs),
            today.set((today | 0) + jobs),
        ]
        condition: Condition
        if same_minute:
            actions.append(CounterItem.requests.set(CounterItem.requests + 1))
            condition = (CounterItem.minute == minute) & (CounterItem.requests < rate_limit)
        else:
            actions += [
                CounterItem.minute.set(minute),
                CounterItem.requests.set(1),
                CounterItem.expires_at.set(int(self._clock()) + COUNTER_TTL_SECONDS),
                # The sweeper's list of active tenants: the index entry moves once an hour (an
                # unchanged key costs no index write).
                CounterItem.kind.set(CounterItem.kind | CounterItem),
                CounterItem.gsi1pk.set(active_gsi_pk(minute[:10])),
                CounterItem.gsi1sk.set(tenant_id_of_usage(key[0])),
            ]
            condition = CounterItem.minute.does_not_exist() | (CounterItem.minute < minute)
        if quota is not None:
            limited = getattr(CounterItem, quota.counter)
            # Room for all ``jobs``: used + jobs <= limit (a condition cannot add, so the limit moves).
            condition = condition & (limited.does_not_exist() | (limited <= quota.limit - jobs))
        with conditional("counter write"):
            self._table[CounterItem](*key).update(actions=actions, condition=condition)

    def _read(self, key: tuple[str, str]) -> CounterItem | None:
        with translated("counter read"):
            try:
                item: CounterItem = self._table[CounterItem].get(*key, consistent_read=True)
            except DoesNotExist:
                return None
        return item

    def refund(
        self, tenant_id: str, period: str, channel: Channel, minute: str | None, jobs: int = 1
    ) -> None:
        counted = getattr(CounterItem, channel_counter(channel))
        actions = [CounterItem.total.add(-jobs), counted.add(-jobs)]
        if minute is not None:
            actions.append(accepted_on(minute, channel).add(-jobs))
        with translated("counter write"):
            self._table[CounterItem](usage_pk(tenant_id), period_sk(period)).update(
                actions=actions, condition=CounterItem.pk.exists()
            )

    def usage(self, tenant_id: str, period: str) -> Usage:
        item = self._read((usage_pk(tenant_id), period_sk(period)))
        if item is None:
            return Usage()
        return Usage(emails=int(item.emails or 0), webhooks=int(item.webhooks or 0))


def accepted_on(minute: str, channel: Channel) -> NumberAttribute:
    """The counter of one day's accepted jobs of one channel in a period's item: ``ae1130`` for the
    emails of 30 November (a period is at most a month long, so month and day name the day)."""
    return NumberAttribute(attr_name=accepted_attribute(minute[4:8], channel))


def accepted_attribute(month_day: str, channel: Channel) -> str:
    return f"a{channel.value[0]}{month_day}"


def _raise_refusal(
    item: CounterItem | None, minute: str, rate_limit: int, quota: Quota | None, jobs: int
) -> None:
    if quota is not None:
        used = int(getattr(item, quota.counter) or 0) if item is not None else 0
        if used + jobs > quota.limit:
            raise QuotaExhausted(used)
    if item is not None and item.minute == minute and int(item.requests) >= rate_limit:
        raise RateLimited
