"""An in-memory audit log over the fake tenant table's entries (``FakeTenantTable.audit``), where the
fake stores append an entry with each change, as the real stores write it in the change's
transaction."""

from __future__ import annotations

from herald.adapters.store.audit_store import decode_audit_cursor, encode_audit_cursor
from herald.domain.audit import AuditAction, AuditEntry, AuditPage
from tests.fakes.tenants import FakeTenantTable


def _sort_key(entry: AuditEntry) -> str:
    return f"{entry.at}#{entry.entry_id}"


class FakeAuditLog:
    def __init__(self, table: FakeTenantTable) -> None:
        self._table = table
        # The limit each page was asked with: what a real page would read at most.
        self.reads: list[int] = []

    def page(
        self,
        tenant_id: str,
        *,
        action: AuditAction | None,
        actor: str | None,
        limit: int,
        cursor: str | None,
    ) -> AuditPage:
        self._table._check()
        self.reads.append(limit)
        after = decode_audit_cursor(cursor) if cursor else None
        newest_first = sorted(
            (entry for entry in self._table.audit if entry.tenant_id == tenant_id),
            key=_sort_key,
            reverse=True,
        )
        evaluated = [entry for entry in newest_first if after is None or _sort_key(entry) < after][:limit]
        kept = tuple(
            entry
            for entry in evaluated
            if (action is None or entry.action is action)
            and (actor is None or actor in (entry.actor.id, entry.actor.name))
        )
        more = len(evaluated) == limit
        return AuditPage(kept, encode_audit_cursor(_sort_key(evaluated[-1])) if more else None)

    def record(self, audit: AuditEntry) -> None:
        self._table._check()
        assert all(entry.entry_id != audit.entry_id for entry in self._table.audit)
        self._table.audit.append(audit)
