"""A rate-limited subscription's next free send slot: one small item per subscription, updated by
each delivery with a conditional write (``herald.domain.pacing``).

Per reservation, 1 conditional UpdateItem; 2 when the worker guessed the subscription's state wrong
(idle vs. busy: it remembers what it saw last), the first failing its condition. The item expires two
days after its last reservation.
"""

from __future__ import annotations

from cachetools import LRUCache
from pynamodb.expressions.update import Action

from herald.adapters.store.models import RATE_SK, RateSlotItem, rate_pk
from herald.adapters.store.table import ConditionFailed, Table, conditional
from herald.domain.errors import DependencyError

# Kept well past any slot a burst reserves (TTL deletes it later; only storage is saved).
_KEPT_SECONDS = 2 * 24 * 3600
_TRIES = 3


class DynamoRateSlots:
    def __init__(self, table: Table) -> None:
        self._table = table
        # The next slot this worker last saw per subscription: which condition to try first.
        self._seen: LRUCache[tuple[str, str], int] = LRUCache(maxsize=10_000)

    def reserve(self, tenant_id: str, subscription_id: str, interval_ms: int, now_ms: int) -> int:
        """The slot (epoch ms) reserved for one delivery: now if the subscription is idle, else the
        next free one."""
        key = (tenant_id, subscription_id)
        busy = self._seen.get(key, 0) > now_ms
        for _ in range(_TRIES):
            slot = self._queued(key, interval_ms, now_ms) if busy else self._now(key, interval_ms, now_ms)
            if slot is not None:
                return slot
            busy = not busy
        raise DependencyError("rate slot write failed: too much contention")

    def _now(self, key: tuple[str, str], interval_ms: int, now_ms: int) -> int | None:
        item = self._item(key)
        try:
            with conditional("rate slot write"):
                item.update(
                    actions=[RateSlotItem.next_at.set(now_ms + interval_ms), _expiry(now_ms)],
                    condition=RateSlotItem.next_at.does_not_exist() | (RateSlotItem.next_at <= now_ms),
                )
        except ConditionFailed:
            return None
        self._seen[key] = now_ms + interval_ms
        return now_ms

    def _queued(self, key: tuple[str, str], interval_ms: int, now_ms: int) -> int | None:
        item = self._item(key)
        try:
            with conditional("rate slot write"):
                item.update(
                    actions=[RateSlotItem.next_at.add(interval_ms), _expiry(now_ms)],
                    condition=RateSlotItem.next_at > now_ms,
                )
        except ConditionFailed:
            return None
        following = int(item.next_at)
        self._seen[key] = following
        return following - interval_ms

    def _item(self, key: tuple[str, str]) -> RateSlotItem:
        return self._table[RateSlotItem](rate_pk(*key), RATE_SK)


def _expiry(now_ms: int) -> Action:
    return RateSlotItem.expires_at.set(now_ms // 1000 + _KEPT_SECONDS)
