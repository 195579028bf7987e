"""A tenant's suppressed recipients, in a partition of their own (one GetItem per email checked),
keyed by the address's canonical form, so no other spelling of a suppressed mailbox passes."""

from __future__ import annotations

from collections.abc import Iterator

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import SuppressionItem, suppression_pk
from herald.adapters.store.table import ConditionFailed, Table, transaction, translated
from herald.domain.addresses import Suppression, canonical_address
from herald.domain.audit import AuditEntry


class DynamoSuppressions:
    def __init__(self, table: Table) -> None:
        self._table = table

    def is_suppressed(self, tenant_id: str, address: str) -> bool:
        with translated("suppression read"):
            try:
                self._table[SuppressionItem].get(suppression_pk(tenant_id), canonical_address(address))
            except DoesNotExist:
                return False
        return True

    def suppress(self, tenant_id: str, suppression: Suppression) -> None:
        item = self._table[SuppressionItem](
            suppression_pk(tenant_id),
            canonical_address(suppression.address),
            address=suppression.address.lower(),
            reason=suppression.reason,
            source=suppression.source,
            created_at=suppression.created_at,
        )
        with translated("suppression write"):
            item.save()

    def entries(self, tenant_id: str) -> Iterator[Suppression]:
        with translated("suppression read"):
            items = [
                item
                for item in self._table.item.query(suppression_pk(tenant_id))
                if isinstance(item, SuppressionItem)
            ]
        for item in items:
            yield Suppression(item.address, item.reason, item.created_at, item.source)

    def delete(self, tenant_id: str, address: str, audit: AuditEntry) -> bool:
        """The address's removal and its audit entry in one transaction; False, writing neither,
        when the address was not suppressed."""
        item = self._table[SuppressionItem](suppression_pk(tenant_id), canonical_address(address))

        def refine(codes: list[str | None]) -> Exception | None:
            # The delete comes before the entry's put in the transaction's order.
            return ConditionFailed("suppression delete") if codes[:1] == ["ConditionalCheckFailed"] else None

        try:
            with transaction(self._table.connection, "suppression delete", refine) as tx:
                tx.delete(item, condition=SuppressionItem.pk.exists())
                tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
        except ConditionFailed:
            return False
        return True
