"""The upgrade to named keys, for tenants created before them: the account's one key (and its
earlier keys still in grace) becomes its first named key, "Default key" with the ``full`` scope,
and the profile's address its owner. Run once after deploying (``herald migrate keys``); running it
again changes nothing.

Per tenant, one transaction writes the named key, its owner if it has none, the key lookups with
their key id, the audit entry, and removes the old attributes from the profile, on the condition
that they are still the ones read. Until a tenant is migrated its old key is refused (the lookup
has no key id), so the command runs right after the deploy.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from herald.adapters.store.access_items import key_item, key_lookup_item, member_item, membership_item
from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import (
    PROFILE_SK,
    MemberItem,
    NamedKeyItem,
    TenantItem,
    tenant_pk,
)
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.access import FIRST_KEY_NAME, Actor, ApiKey, Member, MemberStatus, Role, Scope, generate_id
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso
from herald.domain.signin import normalized_email


def migrate_keys(table: Table, tenant_ids: Iterator[str], actor: Actor, now: datetime) -> Iterator[str]:
    """Migrate every tenant that still has an old key; yields the ids of those migrated."""
    for tenant_id in tenant_ids:
        if _migrate(table, tenant_id, actor, now):
            yield tenant_id


def _migrate(table: Table, tenant_id: str, actor: Actor, now: datetime) -> bool:
    with translated("tenant table read"):
        items = list(table.item.query(tenant_pk(tenant_id), consistent_read=True))
    profile = next((item for item in items if isinstance(item, TenantItem)), None)
    if profile is None or profile.api_key_hash is None:
        return False
    grace = {
        str(k): str(v) for k, v in (profile.grace_keys.attribute_values if profile.grace_keys else {}).items()
    }
    key = ApiKey(
        key_id=generate_id("key"),
        name=FIRST_KEY_NAME,
        scopes=(Scope.FULL,),
        key_hash=profile.api_key_hash,
        # Never stored before named keys: the preview of a migrated key shows no last four.
        last_four="",
        created_at=profile.created_at,
        created_by="migration",
        previous={key_hash: until for key_hash, until in grace.items() if until > iso(now)},
    )
    has_owner = any(isinstance(item, MemberItem) and item.role == Role.OWNER for item in items)
    owner = Member(
        generate_id("mem"),
        normalized_email(profile.email),
        Role.OWNER,
        MemberStatus.ACTIVE,
        profile.created_at,
        "migration",
        joined_at=profile.created_at,
    )
    audit = entry(tenant_id, iso(now), actor, AuditAction.KEY_MIGRATED, key.key_id, name=key.name)
    with transaction(table.connection, "key migration") as tx:
        tx.save(key_item(table, tenant_id, key), condition=NamedKeyItem.pk.does_not_exist())
        for key_hash in {key.key_hash, *key.previous}:
            tx.save(key_lookup_item(table, tenant_id, key.key_id, key_hash, profile.created_at))
        if not has_owner:
            tx.save(member_item(table, tenant_id, owner))
            tx.save(membership_item(table, tenant_id, profile.name, owner))
        tx.update(
            table[TenantItem](tenant_pk(tenant_id), PROFILE_SK),
            actions=[TenantItem.api_key_hash.remove(), TenantItem.grace_keys.remove()],
            condition=TenantItem.api_key_hash == profile.api_key_hash,
        )
        tx.save(audit_item(table, audit), condition=AUDIT_ONCE)
    return True
