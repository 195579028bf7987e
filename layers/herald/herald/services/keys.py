"""A tenant's named API keys: list, create with scopes and sending domains, revoke, rotate with a
grace period. Shared by the account routes (a key or a member calls) and the operator CLI.

A caller never hands out more than it holds: a key created or rotated by a caller has only scopes
whose abilities the caller has itself (a ``send`` key cannot mint a ``full`` one; a developer
cannot rotate the owner's ``full`` key to learn its new secret). Revoking only takes power away and
needs only the ``keys`` ability. Every change is written with its audit entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta

import msgspec

from herald.domain.access import (
    MAX_KEY_DOMAINS,
    MAX_KEYS,
    ApiKey,
    Grant,
    Scope,
    generate_id,
    scopes_abilities,
)
from herald.domain.account import MAX_GRACE_SECONDS, TenantRecords, generate_api_key, hash_api_key
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.secrets import last_four
from herald.services.outcomes import KeyChanged, TenantNotFound
from herald.services.ports.tenants import KeyStore, TenantStore

MAX_NAME_LENGTH = 100


class IssuedNamedKey(msgspec.Struct, frozen=True):
    """A key and its secret in clear text: shown once, in the response that creates it."""

    key: ApiKey
    secret: str
    # Until when the key's previous secret keeps working (None: it stopped at once).
    previous_valid_until: str | None = None


def new_key(
    name: str,
    scopes: Sequence[Scope],
    created_by: str,
    now: datetime,
    *,
    domains: tuple[str, ...] = (),
    expires_at: str | None = None,
) -> tuple[ApiKey, str]:
    """A key and its secret (the secret is never stored)."""
    secret = generate_api_key()
    key = ApiKey(
        key_id=generate_id("key"),
        name=name,
        scopes=tuple(scopes),
        key_hash=hash_api_key(secret),
        last_four=last_four(secret),
        created_at=iso(now),
        created_by=created_by,
        domains=domains,
        expires_at=expires_at,
    )
    return key, secret


class KeyService:
    def __init__(self, tenants: TenantStore, keys: KeyStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._tenants = tenants
        self._keys = keys
        self._clock = clock

    def list(self, tenant_id: str) -> tuple[ApiKey, ...]:
        return self._records(tenant_id).keys

    def create(
        self,
        tenant_id: str,
        grant: Grant,
        name: str,
        scopes: Iterable[Scope],
        *,
        domains: Iterable[str] = (),
        expires_at: datetime | None = None,
    ) -> IssuedNamedKey:
        records, now = self._records(tenant_id), self._clock()
        chosen = _scopes(scopes)
        _within(grant, chosen)
        if len(records.keys) >= MAX_KEYS:
            raise HeraldError(
                f"This account has {MAX_KEYS} keys, the most it may have; revoke one first.",
                ErrorCode.KEY_LIMIT_REACHED,
            )
        key, secret = new_key(
            _name(name),
            chosen,
            grant.actor.name,
            now,
            domains=_domains(records, domains),
            expires_at=_expiry(expires_at, now),
        )
        audit = entry(
            tenant_id,
            key.created_at,
            grant.actor,
            AuditAction.KEY_CREATED,
            key.key_id,
            name=key.name,
            scopes=",".join(key.scopes),
            domains=",".join(key.domains),
        )
        self._keys.add(tenant_id, key, audit)
        return IssuedNamedKey(key, secret)

    def revoke(self, tenant_id: str, grant: Grant, key_id: str) -> ApiKey:
        key = self._key(self._records(tenant_id), key_id)
        audit = entry(
            tenant_id, iso(self._clock()), grant.actor, AuditAction.KEY_REVOKED, key.key_id, name=key.name
        )
        try:
            self._keys.revoke(tenant_id, key, audit)
        except KeyChanged as exc:
            raise _changed() from exc
        return key

    def rotate(
        self, tenant_id: str, grant: Grant, key_id: str, grace_seconds: int, *, end_sessions: bool = False
    ) -> IssuedNamedKey:
        """A new secret for the key now. With a grace period its current secret keeps working that
        long; without one, it and every secret still in an earlier grace stop at once (and, with
        ``end_sessions``, the account's console sessions end too)."""
        if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
            raise HeraldError(
                f"graceSeconds must be between 0 and {MAX_GRACE_SECONDS}.", ErrorCode.VALIDATION_ERROR
            )
        old, now = self._key(self._records(tenant_id), key_id), self._clock()
        _within(grant, old.scopes)
        if grant.rotated_out and grant.actor.id == key_id:
            raise HeraldError("This key was rotated already; use its newest secret.", ErrorCode.KEY_ROTATED)
        secret = generate_api_key()
        until = iso(now + timedelta(seconds=grace_seconds)) if grace_seconds else None
        live = {hash_: end for hash_, end in old.previous.items() if parse_iso(end) > now}
        rotated = msgspec.structs.replace(
            old,
            key_hash=hash_api_key(secret),
            last_four=last_four(secret),
            previous={**live, old.key_hash: until} if until else {},
        )
        audit = entry(
            tenant_id,
            iso(now),
            grant.actor,
            AuditAction.KEY_ROTATED,
            old.key_id,
            name=old.name,
            graceSeconds=str(grace_seconds),
        )
        try:
            self._keys.rotate(
                tenant_id,
                old,
                rotated,
                audit,
                sessions_end_at=iso(now) if end_sessions and not until else None,
            )
        except KeyChanged as exc:
            raise _changed() from exc
        return IssuedNamedKey(rotated, secret, until)

    def _records(self, tenant_id: str) -> TenantRecords:
        try:
            return self._tenants.load(tenant_id)
        except TenantNotFound as exc:
            raise HeraldError(f"No tenant {tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc

    @staticmethod
    def _key(records: TenantRecords, key_id: str) -> ApiKey:
        key = records.key(key_id)
        if key is None:
            raise HeraldError(f"This account has no key {key_id}.", ErrorCode.KEY_NOT_FOUND)
        return key


def _changed() -> HeraldError:
    return HeraldError(
        "The key was rotated or revoked concurrently; list the keys again.", ErrorCode.KEY_ROTATED
    )


def _scopes(scopes: Iterable[Scope]) -> tuple[Scope, ...]:
    chosen = tuple(dict.fromkeys(scopes))
    if not chosen:
        raise HeraldError(
            "A key needs at least one scope: send, read, manage or full.", ErrorCode.VALIDATION_ERROR
        )
    return chosen


def _within(grant: Grant, scopes: Iterable[Scope]) -> None:
    beyond = scopes_abilities(scopes) - grant.abilities
    if beyond:
        raise HeraldError(
            "You cannot hand out more than you may do yourself: this key's scopes "
            f"({', '.join(scopes)}) allow {', '.join(sorted(beyond))}, which you lack.",
            ErrorCode.INSUFFICIENT_SCOPE,
        )


def _name(name: str) -> str:
    cleaned = name.strip()
    if not 1 <= len(cleaned) <= MAX_NAME_LENGTH or not cleaned.isprintable():
        raise HeraldError(
            f"A key's name is 1-{MAX_NAME_LENGTH} printable characters.", ErrorCode.VALIDATION_ERROR
        )
    return cleaned


def _domains(records: TenantRecords, domains: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(sorted({domain.strip().lower() for domain in domains}))
    if len(chosen) > MAX_KEY_DOMAINS:
        raise HeraldError(f"A key may name at most {MAX_KEY_DOMAINS} domains.", ErrorCode.VALIDATION_ERROR)
    known = {domain.domain for domain in records.domains}
    unknown = [domain for domain in chosen if domain not in known]
    if unknown:
        raise HeraldError(
            f"{', '.join(unknown)} is not a sending domain of this account; add it first.",
            ErrorCode.VALIDATION_ERROR,
        )
    return chosen


def _expiry(expires_at: datetime | None, now: datetime) -> str | None:
    if expires_at is None:
        return None
    if expires_at <= now:
        raise HeraldError("expiresAt must be in the future.", ErrorCode.VALIDATION_ERROR)
    return iso(expires_at)
