"""A short-lived, bounded, thread-safe cache of values per tenant (``cachetools.TTLCache``).

Warm containers use it to spare DynamoDB reads; the services that change a tenant's data call
``forget`` so the container that made a change applies it at once. Other warm containers see the
change within ``ttl_seconds``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from cachetools import TTLCache

K = TypeVar("K")
V = TypeVar("V")

TTL_SECONDS = 60.0
MAX_ENTRIES = 4096


class TenantCache(Generic[K, V]):
    def __init__(
        self,
        tenant_of: Callable[[V], str],
        *,
        ttl_seconds: float = TTL_SECONDS,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: TTLCache[K, tuple[float, V]] = TTLCache(max_entries, ttl_seconds, timer=clock)
        self._tenant_of = tenant_of
        self._clock = clock
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or entry[0] <= self._clock():
            return None
        return entry[1]

    def put(self, key: K, value: V, *, max_seconds: float | None = None) -> None:
        """Keep ``value`` for the cache's TTL, or for ``max_seconds`` when that is shorter."""
        seconds = self._entries.ttl if max_seconds is None else min(self._entries.ttl, max(max_seconds, 0.0))
        with self._lock:
            self._entries[key] = (self._clock() + seconds, value)

    def forget(self, tenant_id: str) -> None:
        with self._lock:
            for key in [
                key for key, (_, value) in self._entries.items() if self._tenant_of(value) == tenant_id
            ]:
                del self._entries[key]
