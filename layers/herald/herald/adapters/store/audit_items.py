"""Audit entries in their stored form and back.

Every store that changes an account puts ``audit_item(...)`` into the same transaction as the change
(with ``AUDIT_ONCE``, so an entry id is never written twice): the change and its entry are written
together or not at all.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from herald.adapters.store.models import AuditItem, audit_pk, audit_sk
from herald.adapters.store.table import Table
from herald.domain.access import Actor, ActorKind
from herald.domain.audit import AUDIT_RETENTION_DAYS, AuditAction, AuditEntry
from herald.domain.clock import epoch_seconds, parse_iso

AUDIT_ONCE = AuditItem.pk.does_not_exist()


def audit_item(table: Table, entry: AuditEntry) -> AuditItem:
    expires = parse_iso(entry.at) + timedelta(days=AUDIT_RETENTION_DAYS)
    return table[AuditItem](
        audit_pk(entry.tenant_id),
        audit_sk(entry.at, entry.entry_id),
        at=entry.at,
        entry_id=entry.entry_id,
        action=entry.action.value,
        target=entry.target,
        actor_kind=entry.actor.kind.value,
        actor_id=entry.actor.id,
        actor_name=entry.actor.name,
        ip=entry.actor.ip,
        details=dict(entry.details) or None,
        expires_at=epoch_seconds(expires),
    )


def entry_from(item: AuditItem, tenant_id: str) -> AuditEntry:
    details: dict[str, Any] = item.details.attribute_values if item.details else {}
    return AuditEntry(
        entry_id=item.entry_id,
        tenant_id=tenant_id,
        at=item.at,
        actor=Actor(ActorKind(item.actor_kind), item.actor_id, item.actor_name, item.ip),
        action=AuditAction(item.action),
        target=item.target,
        details={str(name): str(value) for name, value in details.items()},
    )
