"""The port of a tenant's unsubscribes (``herald.domain.unsubscribes``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.unsubscribes import Unsubscribe, UnsubscribePage


class Unsubscribes(Protocol):
    def blocking(self, tenant_id: str, address: str, topic: str) -> Unsubscribe | None:
        """The unsubscribe that stops mail of ``topic`` to ``address`` (its own or every topic's)."""

    def record(self, tenant_id: str, unsubscribe: Unsubscribe) -> bool:
        """False when it was recorded already (a replay changes nothing)."""

    def remove(self, tenant_id: str, address: str, topic: str, audit: AuditEntry | None = None) -> bool:
        """False when there was no such unsubscribe; ``audit`` is written with the removal."""

    def page(
        self, tenant_id: str, *, topic: str | None, address: str | None, limit: int, cursor: str | None
    ) -> UnsubscribePage:
        """``ValueError`` for a cursor the store did not hand out."""
