"""Authentication and authority: who calls a request, by its API key or else its console session,
each read fresh on every request, and what the caller may do (``Grant``).

Only the SHA-256 of a key is stored. What a warm container keeps between requests is the one fact
that never changes, which tenant and named key a key hash belongs to (a bounded map, so a known key
costs no lookup of its own). Whether the key is still valid, its scopes and domains, and everything
the tenant may do are read from the tenant's partition on every request, with one strongly
consistent Query: a revoked, rotated or narrowed key, a disabled tenant, a new plan or provider hold
from the next request in every container. A key's last use is written at most once per interval.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import msgspec
from cachetools import LRUCache

from herald.domain.access import (
    LAST_USED_INTERVAL_SECONDS,
    Ability,
    Actor,
    ActorKind,
    ApiKey,
    Grant,
    least_role_for,
    scope_for,
)
from herald.domain.account import ACTIVE, TenantContext, TenantRecords, hash_api_key
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.observability import logger
from herald.services.outcomes import TenantNotFound

if TYPE_CHECKING:
    from herald.services.ports.tenants import KeyStore, TenantStore

_INVALID = HeraldError("The API key is not valid.", ErrorCode.INVALID_API_KEY)
# Key hashes whose tenant this container knows: at most this many (about 100 bytes each).
MAX_KNOWN_KEYS = 4096


def tenant_context(records: TenantRecords, grant: Grant) -> TenantContext:
    profile = records.profile
    return TenantContext(
        tenant_id=profile.tenant_id,
        plan=profile.plan,
        status=profile.status,
        grant=grant,
        period_anchor=parse_iso(profile.period_anchor),
        providers=tuple(credential.provider for credential in records.providers),
        verified_domains=frozenset(records.verified_domains()),
        rate_limit=profile.rate_limit,
        quota_limit=profile.quota_limit,
    )


def key_is_valid(key: ApiKey, key_hash: str, now: datetime) -> bool:
    """The key's current secret, or an earlier one whose grace period has not ended; never after
    the key's expiry."""
    if key.expires_at is not None and parse_iso(key.expires_at) <= now:
        return False
    if key_hash == key.key_hash:
        return True
    valid_until = key.previous.get(key_hash)
    return valid_until is not None and parse_iso(valid_until) > now


def key_grant(key: ApiKey, key_hash: str, ip: str | None) -> Grant:
    return Grant(
        actor=Actor(ActorKind.KEY, key.key_id, key.name, ip),
        abilities=key.abilities,
        key_domains=frozenset(key.domains) if key.domains else None,
        rotated_out=key_hash != key.key_hash,
    )


def require(tenant: TenantContext, ability: Ability) -> None:
    """403 ``insufficient_scope`` unless the caller may do ``ability``, naming what would allow it."""
    grant = tenant.grant
    if grant.allows(ability):
        return
    scope = scope_for(ability)
    needed = f"the {scope} scope" if scope is not None else "a person, not an API key"
    if grant.role is not None:
        message = (
            f"This request needs the {least_role_for(ability)} role or higher ({needed}); "
            f"your role is {grant.role}."
        )
    elif scope is None:
        message = "Only the account's owner may do this, signed in to the console; no API key can."
    else:
        message = f'This request needs the {scope} scope, which the API key "{grant.actor.name}" lacks.'
    extra = {"requiredScope": scope.value} if scope is not None else {}
    raise HeraldError(message, ErrorCode.INSUFFICIENT_SCOPE, extra=extra)


class Authenticator:
    def __init__(self, store: TenantStore, keys: KeyStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._store = store
        self._keys = keys
        self._now = clock
        self._owners: LRUCache[str, tuple[str, str]] = LRUCache(MAX_KNOWN_KEYS)
        self._lock = threading.Lock()

    def authenticate(self, api_key: str, ip: str | None = None) -> TenantContext:
        key_hash = hash_api_key(api_key)
        tenant_id, key_id = self._owner(key_hash)
        try:
            records = self._store.load(tenant_id)
        except TenantNotFound as exc:
            raise _INVALID.copy() from exc
        key, now = records.key(key_id), self._now()
        if key is None or not key_is_valid(key, key_hash, now):
            raise _INVALID.copy()
        # Every later line of the request names the tenant (its correlation id is the request's).
        logger.append_keys(tenant_id=tenant_id, key_id=key_id)
        if records.profile.status != ACTIVE:
            raise HeraldError("This tenant is disabled.", ErrorCode.TENANT_DISABLED)
        self._note_use(tenant_id, key, now)
        return tenant_context(records, key_grant(key, key_hash, ip))

    def _note_use(self, tenant_id: str, key: ApiKey, now: datetime) -> None:
        """At most one small write per key per interval; a failure costs the request nothing."""
        if key.last_used_at is not None and (now - parse_iso(key.last_used_at)).total_seconds() < (
            LAST_USED_INTERVAL_SECONDS
        ):
            return
        try:
            self._keys.touch(tenant_id, key.key_id, now)
        except DependencyError as exc:
            logger.warning("key last use not recorded", extra={"reason": str(exc), "at": iso(now)})

    def _owner(self, key_hash: str) -> tuple[str, str]:
        with self._lock:
            known = self._owners.get(key_hash)
        if known is not None:
            return known
        record = self._store.find_api_key(key_hash)
        if record is None:
            raise _INVALID.copy()
        with self._lock:
            self._owners[key_hash] = (record.tenant_id, record.key_id)
        return record.tenant_id, record.key_id


class Credentials(msgspec.Struct, frozen=True):
    """What a request presents to say who calls: an API key, or else a console session's token
    (the HTTP edge has checked that a state change by session comes from the console's origin)."""

    api_key: str | None = None
    session_token: str | None = None
    # The client's address as API Gateway saw it (for the audit log).
    ip: str | None = None


class Sessions(Protocol):
    """The console's sessions (``herald.services.sessions``), which stand on this module."""

    def authenticate(self, token: str, ip: str | None = None) -> TenantContext: ...


class Callers:
    """The caller of a request, by its API key or its console session. ``sessions`` gives the
    session authenticator when the first request without a key needs it: API clients never do."""

    def __init__(self, keys: Authenticator, sessions: Callable[[], Sessions]) -> None:
        self._keys = keys
        self._sessions = sessions

    def authenticate(self, credentials: Credentials, ability: Ability | None) -> TenantContext:
        """The caller, if it may do ``ability`` (else 403 ``insufficient_scope``; None: anyone
        authenticated, for answering a bad request's caller before its body)."""
        tenant = self._caller(credentials)
        if ability is not None:
            require(tenant, ability)
        return tenant

    def _caller(self, credentials: Credentials) -> TenantContext:
        if credentials.api_key is not None:
            return self._keys.authenticate(credentials.api_key, credentials.ip)
        if credentials.session_token is None:
            raise HeraldError("An API key is required (X-API-Key header).", ErrorCode.MISSING_API_KEY)
        return self._sessions().authenticate(credentials.session_token, credentials.ip)
