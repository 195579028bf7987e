"""Port of the account's audit log: reading it, and the entries of actions that change no single
configuration item (each configuration store writes its entries in its own transactions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditAction, AuditEntry, AuditPage


class AuditLog(Protocol):
    def page(
        self,
        tenant_id: str,
        *,
        action: AuditAction | None,
        actor: str | None,
        limit: int,
        cursor: str | None,
    ) -> AuditPage:
        """The tenant's entries newest first, after ``cursor``, reading at most ``limit`` entries
        (filters may keep fewer); ValueError for a cursor the log did not hand out."""

    def record(self, audit: AuditEntry) -> None:
        """Write the entry of an action already done (a manual retry, a recovery of failed jobs)."""
