"""A small in-memory cache of unwrapped data keys, so a warm container makes no KMS call per message.

Entries are keyed by (wrapped key, tenant, purpose): a hit therefore only ever returns a data key that
KMS already released for exactly that encryption context. The TTL is capped at five minutes so a key
revoked in KMS (or a disabled tenant) stops working within minutes even in a long-lived container.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_TTL_SECONDS = 300.0

_CacheKey = tuple[bytes, str, str]


@dataclass(frozen=True)
class _Entry:
    data_key: bytes
    expires_at: float


class DataKeyCache:
    """Bounded (LRU), time-limited and thread-safe map of wrapped data key → plaintext data key."""

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
        self._max_entries = max_entries
        self._ttl = ttl_seconds
        self._clock = clock
        self._entries: OrderedDict[_CacheKey, _Entry] = OrderedDict()
        # Batch workers may open records from several threads; OrderedDict reordering is not atomic.
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def hit_rate(self) -> float:
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, wrapped_key: bytes, tenant_id: str, purpose: str) -> bytes | None:
        """The cached data key, or None (counted as a miss) when absent or expired."""
        key = (wrapped_key, tenant_id, purpose)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.expires_at <= self._clock():
                del self._entries[key]
                entry = None
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.data_key

    def put(self, wrapped_key: bytes, tenant_id: str, purpose: str, data_key: bytes) -> None:
        key = (wrapped_key, tenant_id, purpose)
        with self._lock:
            self._entries[key] = _Entry(data_key, self._clock() + self._ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
