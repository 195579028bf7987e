"""Reading a tenant's audit log, and the entries of actions that change no single item.

Entries live in their tenant's own partition (``AUDIT#<tenantId>``, sorted by time), so a page is
one Query of that partition and nothing else: no tenant's read can reach another's entries. Every
change of a configuration item writes its entry in the change's own transaction (the stores of those
items); ``record`` is only for actions that touch many items or none of the tenant's (a manual retry,
a recovery of failed jobs), written once the action is done.

DynamoDB calls: a page = 1 strongly consistent Query that evaluates at most ``limit`` entries (an
entry is about 300 bytes: a page of 100 is at most 8 read units, a page of 20 at most 2), filters
included; ``record`` = 1 conditional PutItem.
"""

from __future__ import annotations

import base64
import binascii
import re

from pynamodb.expressions.condition import Condition

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item, entry_from
from herald.adapters.store.models import AuditItem, audit_pk
from herald.adapters.store.table import Table, translated
from herald.domain.audit import AuditAction, AuditEntry, AuditPage

# What a cursor decodes to: the sort key of the last entry evaluated (``<at>#<entryId>``).
_AUDIT_SORT_KEY = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z#[0-9a-f]{16}$")


def encode_audit_cursor(sort_key: str) -> str:
    return base64.urlsafe_b64encode(sort_key.encode()).decode().rstrip("=")


def decode_audit_cursor(cursor: str) -> str:
    """The sort key a cursor points at; ValueError for anything this store did not hand out."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        sort_key = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError) as exc:
        raise ValueError("not a cursor") from exc
    if not _AUDIT_SORT_KEY.match(sort_key):
        raise ValueError("not a cursor")
    return sort_key


class DynamoAuditLog:
    def __init__(self, table: Table) -> None:
        self._table = table

    def page(
        self,
        tenant_id: str,
        *,
        action: AuditAction | None,
        actor: str | None,
        limit: int,
        cursor: str | None,
    ) -> AuditPage:
        """Newest first, after ``cursor``. The Query's limit bounds the entries read, not the ones
        kept: with a filter a page may hold fewer than ``limit`` while ``next_cursor`` goes on.
        ValueError for a cursor this store did not hand out."""
        pk = audit_pk(tenant_id)
        start = {"pk": {"S": pk}, "sk": {"S": decode_audit_cursor(cursor)}} if cursor else None
        results = self._table[AuditItem].query(
            pk,
            filter_condition=_filter(action, actor),
            scan_index_forward=False,
            consistent_read=True,
            limit=limit,
            page_size=limit,
            last_evaluated_key=start,
        )
        with translated("audit log read"):
            # One page only: iterating the results would read on until ``limit`` entries matched.
            raw = next(results.page_iter)
        items = [self._table[AuditItem].from_raw_data(data) for data in raw.get("Items", [])]
        last = results.page_iter.last_evaluated_key
        return AuditPage(
            tuple(entry_from(item, tenant_id) for item in items),
            encode_audit_cursor(last["sk"]["S"]) if last else None,
        )

    def record(self, audit: AuditEntry) -> None:
        with translated("audit log write"):
            audit_item(self._table, audit).save(condition=AUDIT_ONCE)


def _filter(action: AuditAction | None, actor: str | None) -> Condition | None:
    conditions: list[Condition] = []
    if action is not None:
        conditions.append(AuditItem.action == action.value)
    if actor is not None:
        conditions.append((AuditItem.actor_id == actor) | (AuditItem.actor_name == actor))
    if not conditions:
        return None
    combined = conditions[0]
    for condition in conditions[1:]:
        combined &= condition
    return combined
