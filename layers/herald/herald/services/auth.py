"""Authentication: an API key to the tenant behind it, cached per warm container.

Only the SHA-256 of a key is stored. Lookups are cached for at most 60 s (``TenantCache``), so a warm
API container makes no DynamoDB call to authenticate a known key; a change made through another
container (a revoked key, a disabled tenant) reaches this one within that minute.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from herald.domain.api_keys import hash_api_key
from herald.domain.clock import parse_iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.records import ACTIVE, TenantContext, TenantRecords
from herald.observability import logger
from herald.services.ports import TenantNotFound, TenantStore
from herald.services.tenant_cache import TenantCache

_INVALID = HeraldError("The API key is not valid.", ErrorCode.INVALID_API_KEY)


def tenant_context(records: TenantRecords, key_hash: str) -> TenantContext:
    profile = records.profile
    return TenantContext(
        tenant_id=profile.tenant_id,
        plan=profile.plan,
        status=profile.status,
        key_hash=key_hash,
        period_anchor=parse_iso(profile.period_anchor),
        providers=tuple(credential.provider for credential in records.providers),
        verified_domains=frozenset(records.verified_domains()),
        rate_limit=profile.rate_limit,
        quota_limit=profile.quota_limit,
    )


def contexts_cache(clock: Callable[[], float] | None = None) -> TenantCache[str, TenantContext]:
    """The per-container cache of authenticated tenants, keyed by key hash."""
    if clock is None:
        return TenantCache(lambda context: context.tenant_id)
    return TenantCache(lambda context: context.tenant_id, clock=clock)


class Authenticator:
    def __init__(
        self,
        store: TenantStore,
        cache: TenantCache[str, TenantContext],
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._cache = cache
        self._now = clock

    def authenticate(self, api_key: str) -> TenantContext:
        key_hash = hash_api_key(api_key)
        context = self._cache.get(key_hash) or self._load(key_hash)
        # Every later line of the request names the tenant (its correlation id is the request's).
        logger.append_keys(tenant_id=context.tenant_id)
        if context.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        return context

    def _load(self, key_hash: str) -> TenantContext:
        record = self._store.find_api_key(key_hash)
        now = self._now()
        if record is None or (record.valid_until is not None and parse_iso(record.valid_until) <= now):
            raise _INVALID.copy()
        try:
            context = tenant_context(self._store.load(record.tenant_id), key_hash)
        except TenantNotFound as exc:
            raise _INVALID.copy() from exc
        # A key in its grace period must not outlive it through the cache.
        remaining = (parse_iso(record.valid_until) - now).total_seconds() if record.valid_until else None
        self._cache.put(key_hash, context, max_seconds=remaining)
        return context
