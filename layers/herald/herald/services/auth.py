"""Authentication: who calls a request, by its API key or else its console session, each read fresh
on every request; an API key to the tenant behind it.

Only the SHA-256 of a key is stored. What a warm container keeps between requests is the one fact
that never changes, which tenant a key hash belongs to (a bounded map, so a known key costs no
lookup of its own). Whether the key is still valid and everything the tenant may do is read from
the tenant's partition on every request, with one strongly consistent Query (1 read unit for a
partition up to 4 KB): a rotated or revoked key, a disabled tenant, a new plan or provider hold from
the next request in every container.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import msgspec
from cachetools import LRUCache

from herald.domain.account import ACTIVE, TenantContext, TenantProfile, TenantRecords, hash_api_key
from herald.domain.clock import parse_iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.observability import logger
from herald.services.outcomes import TenantNotFound

if TYPE_CHECKING:
    from herald.services.ports.tenants import TenantStore

_INVALID = HeraldError("The API key is not valid.", ErrorCode.INVALID_API_KEY)
# Key hashes whose tenant this container knows: at most this many (about 100 bytes each).
MAX_KNOWN_KEYS = 4096


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


def key_is_valid(profile: TenantProfile, key_hash: str, now: datetime) -> bool:
    """The tenant's current key, or an earlier one whose grace period has not ended."""
    if key_hash == profile.api_key_hash:
        return True
    valid_until = profile.grace_keys.get(key_hash)
    return valid_until is not None and parse_iso(valid_until) > now


class Authenticator:
    def __init__(self, store: TenantStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._store = store
        self._now = clock
        self._owners: LRUCache[str, str] = LRUCache(MAX_KNOWN_KEYS)
        self._lock = threading.Lock()

    def authenticate(self, api_key: str) -> TenantContext:
        key_hash = hash_api_key(api_key)
        tenant_id = self._owner(key_hash)
        try:
            records = self._store.load(tenant_id)
        except TenantNotFound as exc:
            raise _INVALID.copy() from exc
        if not key_is_valid(records.profile, key_hash, self._now()):
            raise _INVALID.copy()
        # Every later line of the request names the tenant (its correlation id is the request's).
        logger.append_keys(tenant_id=tenant_id)
        if records.profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        return tenant_context(records, key_hash)

    def _owner(self, key_hash: str) -> str:
        with self._lock:
            known = self._owners.get(key_hash)
        if known is not None:
            return known
        record = self._store.find_api_key(key_hash)
        if record is None:
            raise _INVALID.copy()
        with self._lock:
            self._owners[key_hash] = record.tenant_id
        return record.tenant_id


class Credentials(msgspec.Struct, frozen=True):
    """What a request presents to say who calls: an API key, or else a console session's token
    (the HTTP edge has checked that a state change by session comes from the console's origin)."""

    api_key: str | None = None
    session_token: str | None = None


class Sessions(Protocol):
    """The console's sessions (``herald.services.sessions``), which stand on this module."""

    def authenticate(self, token: str) -> TenantContext: ...


class Callers:
    """The caller of a request, by its API key or its console session. ``sessions`` gives the
    session authenticator when the first request without a key needs it: API clients never do."""

    def __init__(self, keys: Authenticator, sessions: Callable[[], Sessions]) -> None:
        self._keys = keys
        self._sessions = sessions

    def authenticate(self, credentials: Credentials) -> TenantContext:
        if credentials.api_key is not None:
            return self._keys.authenticate(credentials.api_key)
        if credentials.session_token is None:
            raise HeraldError("An API key is required (X-API-Key header).", ErrorCode.MISSING_API_KEY)
        return self._sessions().authenticate(credentials.session_token)
