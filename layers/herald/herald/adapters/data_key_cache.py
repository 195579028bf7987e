"""A small in-memory cache of unwrapped data keys, so a warm container makes no KMS call per message.

Entries are keyed by (wrapped key, tenant, purpose): a hit therefore only ever returns a data key that
KMS already released for exactly that encryption context. The TTL is capped at five minutes so a key
revoked in KMS (or a disabled tenant) stops working within minutes even in a long-lived container.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cachetools import TTLCache

MAX_TTL_SECONDS = 300.0

_CacheKey = tuple[bytes, str, str]


class DataKeyCache:
    """Bounded (least recently used out first), time-limited and thread-safe (``cachetools.TTLCache``)."""

    def __init__(
        self,
        max_entries: int = 256,
        ttl_seconds: float = MAX_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"ttl_seconds must be in (0, {MAX_TTL_SECONDS:g}]")
        self._entries: TTLCache[_CacheKey, bytes] = TTLCache(max_entries, ttl_seconds, timer=clock)
        # Batch workers may open records from several threads; the cache's bookkeeping is not atomic.
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            self._entries.expire()
            return len(self._entries)

    def get(self, wrapped_key: bytes, tenant_id: str, purpose: str) -> bytes | None:
        """The cached data key, or None (counted as a miss) when absent or expired."""
        with self._lock:
            data_key = self._entries.get((wrapped_key, tenant_id, purpose))
            if data_key is None:
                self.misses += 1
            else:
                self.hits += 1
            return data_key

    def put(self, wrapped_key: bytes, tenant_id: str, purpose: str, data_key: bytes) -> None:
        with self._lock:
            self._entries[(wrapped_key, tenant_id, purpose)] = data_key
