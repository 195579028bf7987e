"""Data access for a tenant's named API keys.

A key is two items: its record in the tenant's partition (name, scopes, domains, hashes; read by
every request with the rest of the partition) and one lookup item per live hash (hash -> tenant and
key id, read once per container). Every change is one transaction with its audit entry. DynamoDB
calls: add, revoke, rotate = 1 transaction each; touch (last use) = 1 conditional UpdateItem, at most
once per key per ``LAST_USED_INTERVAL_SECONDS``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from herald.adapters.store.access_items import key_item, key_lookup_item
from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import (
    KEY_SK,
    PROFILE_SK,
    ApiKeyItem,
    NamedKeyItem,
    TenantItem,
    api_key_pk,
    named_key_sk,
    tenant_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction
from herald.domain.access import LAST_USED_INTERVAL_SECONDS, ApiKey
from herald.domain.audit import AuditEntry
from herald.domain.clock import iso
from herald.services.outcomes import KeyChanged


def _key_changed(tenant_id: str) -> Callable[[list[str | None]], Exception | None]:
    """A failed condition in a key's transaction: the key was revoked or rotated meanwhile."""

    def refine(codes: list[str | None]) -> Exception | None:
        return KeyChanged(tenant_id) if "ConditionalCheckFailed" in codes else None

    return refine


class DynamoKeyStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def add(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None:
        lookup = key_lookup_item(self._table, tenant_id, key.key_id, key.key_hash, key.created_at)
        with transaction(self._table.connection, "key write") as tx:
            tx.condition_check(
                self._table[TenantItem], tenant_pk(tenant_id), PROFILE_SK, TenantItem.pk.exists()
            )
            tx.save(lookup, condition=ApiKeyItem.pk.does_not_exist())
            tx.save(key_item(self._table, tenant_id, key), condition=NamedKeyItem.pk.does_not_exist())
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def revoke(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None:
        """The record and every lookup of the key's hashes (current and in grace) go at once."""
        with transaction(self._table.connection, "key write", _key_changed(tenant_id)) as tx:
            tx.delete(
                self._table[NamedKeyItem](tenant_pk(tenant_id), named_key_sk(key.key_id)),
                condition=NamedKeyItem.key_hash == key.key_hash,
            )
            for key_hash in {key.key_hash, *key.previous}:
                tx.delete(self._table[ApiKeyItem](api_key_pk(key_hash), KEY_SK))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def rotate(
        self,
        tenant_id: str,
        old: ApiKey,
        new: ApiKey,
        audit: AuditEntry,
        sessions_end_at: str | None = None,
    ) -> None:
        """``new`` replaces ``old`` (the same key id, a new hash, its ``previous`` hashes still in
        grace); the lookups of the hashes ``new`` no longer accepts go. The condition on the old hash
        makes two concurrent rotations of one key end with one winner. ``sessions_end_at`` also ends
        the account's console sessions (the account route's rotation without grace)."""
        dropped = {old.key_hash, *old.previous} - {new.key_hash, *new.previous}
        with transaction(self._table.connection, "key write", _key_changed(tenant_id)) as tx:
            tx.save(key_item(self._table, tenant_id, new), condition=NamedKeyItem.key_hash == old.key_hash)
            tx.save(
                key_lookup_item(self._table, tenant_id, new.key_id, new.key_hash, audit.at),
                condition=ApiKeyItem.pk.does_not_exist(),
            )
            for key_hash in dropped:
                tx.delete(self._table[ApiKeyItem](api_key_pk(key_hash), KEY_SK))
            if sessions_end_at is not None:
                tx.update(
                    self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK),
                    actions=[TenantItem.sessions_valid_from.set(sessions_end_at)],
                )
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def touch(self, tenant_id: str, key_id: str, now: datetime) -> bool:
        """Record a use, unless one was recorded within the interval (by any container). False when
        another container recorded it first or the key is gone."""
        item = self._table[NamedKeyItem](tenant_pk(tenant_id), named_key_sk(key_id))
        recent = iso(now - timedelta(seconds=LAST_USED_INTERVAL_SECONDS))
        condition = NamedKeyItem.pk.exists() & (
            NamedKeyItem.last_used_at.does_not_exist() | (NamedKeyItem.last_used_at < recent)
        )
        try:
            with conditional("key last-use write"):
                item.update(actions=[NamedKeyItem.last_used_at.set(iso(now))], condition=condition)
        except ConditionFailed:
            return False
        return True
