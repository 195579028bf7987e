"""An in-memory event type store: heads and kept schema versions, each change with its audit entry,
refused like the DynamoDB store when the name is taken or the head it was decided from changed."""

from __future__ import annotations

from herald.domain.audit import AuditEntry
from herald.domain.event_types import EventTypeVersion
from herald.domain.events import EventType
from herald.services.outcomes import EventTypeChanged


class FakeEventTypeStore:
    def __init__(self) -> None:
        self.heads: dict[tuple[str, str], EventType] = {}
        self.versions: dict[tuple[str, str], dict[int, EventTypeVersion]] = {}
        self.audit: list[AuditEntry] = []
        self.reads = 0

    def list(self, tenant_id: str) -> tuple[EventType, ...]:
        return tuple(head for (tenant, _), head in sorted(self.heads.items()) if tenant == tenant_id)

    def get(self, tenant_id: str, name: str) -> EventType | None:
        self.reads += 1
        return self.heads.get((tenant_id, name))

    def version(self, tenant_id: str, name: str, version: int) -> EventTypeVersion | None:
        return self.versions.get((tenant_id, name), {}).get(version)

    def create(self, tenant_id: str, event_type: EventType, audit: AuditEntry) -> None:
        key = (tenant_id, event_type.name)
        if key in self.heads:
            raise EventTypeChanged()
        self.heads[key] = event_type
        self.versions[key] = {1: _kept(event_type)}
        self.audit.append(audit)

    def update(
        self, tenant_id: str, before: EventType, after: EventType, dropped: int | None, audit: AuditEntry
    ) -> None:
        key = (tenant_id, after.name)
        if self.heads.get(key) != before:
            raise EventTypeChanged()
        self.heads[key] = after
        self.versions[key][after.version] = _kept(after)
        if dropped is not None:
            del self.versions[key][dropped]
        self.audit.append(audit)


def _kept(event_type: EventType) -> EventTypeVersion:
    return EventTypeVersion(event_type.version, event_type.updated_at, event_type.schema)
