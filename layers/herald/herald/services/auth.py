"""API keys: generation, hashing, extraction from a request, and the cached lookup of a tenant.

Only the SHA-256 of a key is stored. Lookups are cached in memory for at most 60 s, so a warm API
container makes no DynamoDB call to authenticate a known key (a revoked key may work that long).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from herald.adapters.store.tenant_store import TenantNotFound, TenantRecords, TenantStore
from herald.domain.clock import now_iso, utc_now
from herald.domain.errors import HeraldError, forbidden, unauthorized

API_KEY_PATTERN = re.compile(r"^hk_[0-9a-f]{64}$")
CACHE_TTL_SECONDS = 60.0
CACHE_MAX_ENTRIES = 4096


def generate_api_key() -> str:
    return "hk_" + secrets.token_hex(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def extract_api_key(headers: Mapping[str, str]) -> str:
    """X-API-Key wins over Authorization: Bearer (api.md, Authentication)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    key = lowered.get("x-api-key")
    if key is None:
        scheme, _, token = lowered.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else None
    if not key:
        raise unauthorized("An API key is required (X-API-Key header).", "missing_api_key")
    if not API_KEY_PATTERN.match(key.strip()):
        raise unauthorized(
            "The API key is malformed; expected hk_ followed by 64 hex digits.", "malformed_api_key"
        )
    return key.strip()


@dataclass(frozen=True)
class TenantContext:
    """Who is calling, and what their account allows: everything the accept path needs."""

    tenant_id: str
    plan: str
    status: str
    key_hash: str
    # Configured providers in priority order, and the domains verified with at least one of them.
    providers: tuple[str, ...]
    verified_domains: frozenset[str]

    @classmethod
    def from_records(cls, records: TenantRecords, key_hash: str) -> TenantContext:
        configured = tuple(credential.provider for credential in records.providers)
        verified = frozenset(records.verified_domains())
        profile = records.profile
        return cls(profile.tenant_id, profile.plan, profile.status, key_hash, configured, verified)


_INVALID = unauthorized("The API key is not valid.", "invalid_api_key")


class Authenticator:
    def __init__(self, store: TenantStore, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._clock = clock
        self._cache: dict[str, tuple[float, TenantContext]] = {}
        self._lock = threading.Lock()

    def authenticate(self, headers: Mapping[str, str]) -> TenantContext:
        key_hash = hash_api_key(extract_api_key(headers))
        context = self._cached(key_hash) or self._load(key_hash)
        if context.status != "active":
            raise forbidden("This tenant is disabled.", "tenant_disabled")
        return context

    def forget(self, tenant_id: str) -> None:
        """Drop a tenant's cached context after its account changed (same container)."""
        with self._lock:
            for key_hash in [h for h, (_, ctx) in self._cache.items() if ctx.tenant_id == tenant_id]:
                del self._cache[key_hash]

    def _cached(self, key_hash: str) -> TenantContext | None:
        with self._lock:
            entry = self._cache.get(key_hash)
            if entry is None or entry[0] <= self._clock():
                return None
            return entry[1]

    def _load(self, key_hash: str) -> TenantContext:
        record = self._store.find_api_key(key_hash)
        # ISO strings of one format compare in time order.
        if record is None or (record.valid_until is not None and record.valid_until <= now_iso()):
            raise _copy(_INVALID)
        try:
            context = TenantContext.from_records(self._store.load(record.tenant_id), key_hash)
        except TenantNotFound as exc:
            raise _copy(_INVALID) from exc
        expires = self._clock() + CACHE_TTL_SECONDS
        if record.valid_until is not None:
            # A key in its grace period must not outlive it through the cache.
            remaining = (_parse_iso(record.valid_until) - utc_now()).total_seconds()
            expires = min(expires, self._clock() + max(remaining, 0.0))
        with self._lock:
            if len(self._cache) >= CACHE_MAX_ENTRIES:
                self._cache.clear()
            self._cache[key_hash] = (expires, context)
        return context


def _copy(error: HeraldError) -> HeraldError:
    return HeraldError(error.message, error.code, error.status)


def _parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
