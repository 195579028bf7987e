"""Data access for a tenant's event type catalog.

An event type is a head item in the tenant's catalog (``EVENTTYPES#<tenantId>``, sorted by name)
holding its current schema, so the events accept path reads it in one GetItem; each schema version
is also kept in a partition of its own (``EVENTTYPE#<tenantId>#<name>``, ``V#000001`` ...). Every
change is one transaction with its audit entry, conditioned on the head it was decided from.
DynamoDB calls: list = 1 Query (at most ``MAX_EVENT_TYPES`` items); get = 1 GetItem; version =
1 GetItem; create and each change = 1 transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import (
    EventTypeItem,
    event_type_version_sk,
    event_type_versions_pk,
    event_types_pk,
)
from herald.adapters.store.table import Table, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.event_types import EventTypeVersion
from herald.domain.events import EventType
from herald.services.outcomes import EventTypeChanged

WHAT = "event type write"
READ = "event type read"


def _changed(codes: list[str | None]) -> Exception | None:
    return EventTypeChanged() if "ConditionalCheckFailed" in codes else None


class DynamoEventTypeStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def list(self, tenant_id: str) -> tuple[EventType, ...]:
        with translated(READ):
            items = list(self._table[EventTypeItem].query(event_types_pk(tenant_id)))
        return tuple(_event_type(item) for item in items)

    def get(self, tenant_id: str, name: str) -> EventType | None:
        with translated(READ):
            try:
                item = self._table[EventTypeItem].get(event_types_pk(tenant_id), name, consistent_read=True)
            except DoesNotExist:
                return None
        return _event_type(item)

    def version(self, tenant_id: str, name: str, version: int) -> EventTypeVersion | None:
        with translated(READ):
            try:
                item = self._table[EventTypeItem].get(
                    event_type_versions_pk(tenant_id, name), event_type_version_sk(version)
                )
            except DoesNotExist:
                return None
        return EventTypeVersion(int(item.version), item.created_at, _schema(item.schema))

    def create(self, tenant_id: str, event_type: EventType, audit: AuditEntry) -> None:
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(self._head(tenant_id, event_type), condition=EventTypeItem.pk.does_not_exist())
            tx.save(self._version(tenant_id, event_type))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def update(
        self,
        tenant_id: str,
        before: EventType,
        after: EventType,
        dropped: int | None,
        audit: AuditEntry,
    ) -> None:
        unchanged = (EventTypeItem.version == before.version) & (
            EventTypeItem.updated_at == before.updated_at
        )
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(self._head(tenant_id, after), condition=unchanged)
            if after.version != before.version:
                tx.save(self._version(tenant_id, after), condition=EventTypeItem.pk.does_not_exist())
            if dropped is not None:
                pk = event_type_versions_pk(tenant_id, after.name)
                tx.delete(self._table[EventTypeItem](pk, event_type_version_sk(dropped)))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def _head(self, tenant_id: str, event_type: EventType) -> EventTypeItem:
        return self._table[EventTypeItem](
            event_types_pk(tenant_id),
            event_type.name,
            description=event_type.description,
            schema=_compact(event_type.schema),
            version=event_type.version,
            deprecated=event_type.deprecated,
            archived=event_type.archived,
            created_at=event_type.created_at,
            updated_at=event_type.updated_at,
        )

    def _version(self, tenant_id: str, event_type: EventType) -> EventTypeItem:
        """The current schema, kept under its version number (written once)."""
        return self._table[EventTypeItem](
            event_type_versions_pk(tenant_id, event_type.name),
            event_type_version_sk(event_type.version),
            schema=_compact(event_type.schema),
            version=event_type.version,
            created_at=event_type.updated_at,
            updated_at=event_type.updated_at,
        )


def _compact(schema: Mapping[str, Any] | None) -> str | None:
    return None if schema is None else json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _schema(stored: str | None) -> Mapping[str, Any] | None:
    return None if stored is None else json.loads(stored)


def _event_type(item: EventTypeItem) -> EventType:
    return EventType(
        name=item.sk,
        created_at=item.created_at,
        updated_at=item.updated_at,
        description=item.description,
        schema=_schema(item.schema),
        version=int(item.version),
        deprecated=bool(item.deprecated),
        archived=bool(item.archived),
    )
