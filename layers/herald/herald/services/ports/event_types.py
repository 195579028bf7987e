"""Ports of the event type catalog: its storage (every change with its audit entry) and the schema
engine that checks a schema and validates payloads against it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.event_types import EventTypeVersion, PayloadProblem
    from herald.domain.events import EventType


class EventTypeStore(Protocol):
    def list(self, tenant_id: str) -> tuple[EventType, ...]:
        """Every event type of the tenant, archived ones too, by name."""

    def get(self, tenant_id: str, name: str) -> EventType | None:
        """One event type in one strongly consistent read."""

    def version(self, tenant_id: str, name: str, version: int) -> EventTypeVersion | None: ...

    def create(self, tenant_id: str, event_type: EventType, audit: AuditEntry) -> None:
        """The event type and its version 1; ``EventTypeChanged`` when the name is taken."""

    def update(
        self,
        tenant_id: str,
        before: EventType,
        after: EventType,
        dropped: int | None,
        audit: AuditEntry,
    ) -> None:
        """``after`` in place of ``before`` (a new version kept when their versions differ, version
        ``dropped`` no longer kept); ``EventTypeChanged`` when another change came first."""


class SchemaEngine(Protocol):
    def check(self, schema: Mapping[str, Any]) -> None:
        """``SchemaFault`` naming why ``schema`` is not one Herald stores."""

    def problems(self, schema: Mapping[str, Any], payload: Mapping[str, Any]) -> list[PayloadProblem]:
        """How ``payload`` breaks ``schema`` (empty: it does not); ``SchemaFault`` when the schema
        cannot be applied within its budget."""
