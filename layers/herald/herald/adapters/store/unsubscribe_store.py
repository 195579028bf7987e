"""A tenant's unsubscribes, in a partition of their own keyed ``<topic>#<canonical address>``, so a
topic's list is one range and a send's check is one BatchGetItem of its topic and of every topic.

Calls: the delivery check 1 BatchGetItem; recording 1 conditional PutItem (a replay writes nothing);
a removal 1 DeleteItem, or a transaction of it and its audit entry when the tenant removes it; a
page 1 Query of at most ``limit`` items (with an address but no topic, a filtered one)."""

from __future__ import annotations

import base64
import binascii

from pynamodb.expressions.condition import Condition

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.models import UnsubscribeItem, unsubscribe_pk, unsubscribe_sk
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.addresses import canonical_address
from herald.domain.audit import AuditEntry
from herald.domain.unsubscribes import ALL_TOPICS, Unsubscribe, UnsubscribePage, UnsubscribeSource, is_topic


class DynamoUnsubscribes:
    def __init__(self, table: Table) -> None:
        self._table = table

    def blocking(self, tenant_id: str, address: str, topic: str) -> Unsubscribe | None:
        """The unsubscribe that stops mail of ``topic`` to ``address``: from the topic, else from
        every topic."""
        canonical, pk = canonical_address(address), unsubscribe_pk(tenant_id)
        keys = [(pk, unsubscribe_sk(topic, canonical)), (pk, unsubscribe_sk(ALL_TOPICS, canonical))]
        with translated("unsubscribe read"):
            found = {item.topic: item for item in self._table[UnsubscribeItem].batch_get(keys)}
        item = found.get(topic) or found.get(ALL_TOPICS)
        return _unsubscribe(item) if item else None

    def record(self, tenant_id: str, unsubscribe: Unsubscribe) -> bool:
        """False when it was recorded already (the first record, and its time, stay)."""
        canonical = canonical_address(unsubscribe.address)
        item = self._table[UnsubscribeItem](
            unsubscribe_pk(tenant_id),
            unsubscribe_sk(unsubscribe.topic, canonical),
            address=canonical,
            topic=unsubscribe.topic,
            source=unsubscribe.source.value,
            provider=unsubscribe.provider,
            created_at=unsubscribe.created_at,
        )
        try:
            with conditional("unsubscribe write"):
                item.save(condition=UnsubscribeItem.pk.does_not_exist())
        except ConditionFailed:
            return False
        return True

    def remove(self, tenant_id: str, address: str, topic: str, audit: AuditEntry | None = None) -> bool:
        """False when there was no such unsubscribe; with ``audit``, the entry is written with it."""
        item = self._table[UnsubscribeItem](
            unsubscribe_pk(tenant_id), unsubscribe_sk(topic, canonical_address(address))
        )
        exists = UnsubscribeItem.pk.exists()
        try:
            if audit is None:
                with conditional("unsubscribe delete"):
                    item.delete(condition=exists)
            else:
                with transaction(self._table.connection, "unsubscribe delete", _absent) as tx:
                    tx.delete(item, condition=exists)
                    tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
        except ConditionFailed:
            return False
        return True

    def page(
        self, tenant_id: str, *, topic: str | None, address: str | None, limit: int, cursor: str | None
    ) -> UnsubscribePage:
        """By topic, then address; ``ValueError`` for a cursor this store did not hand out."""
        canonical = canonical_address(address) if address else None
        with translated("unsubscribe read"):
            result = self._table[UnsubscribeItem].query(
                unsubscribe_pk(tenant_id),
                _range(topic, canonical),
                filter_condition=UnsubscribeItem.address == canonical if canonical and not topic else None,
                limit=limit,
                last_evaluated_key=_after(tenant_id, cursor) if cursor else None,
            )
            items = list(result)
            last = result.last_evaluated_key
        return UnsubscribePage(tuple(map(_unsubscribe, items)), _cursor(last) if last else None)


def _range(topic: str | None, canonical: str | None) -> Condition | None:
    if topic is None:
        return None
    if canonical is None:
        return UnsubscribeItem.sk.startswith(unsubscribe_sk(topic, ""))
    exact: Condition = UnsubscribeItem.sk == unsubscribe_sk(topic, canonical)
    return exact


def _absent(reasons: list[str | None]) -> Exception | None:
    return ConditionFailed() if reasons and reasons[0] == "ConditionalCheckFailed" else None


def _unsubscribe(item: UnsubscribeItem) -> Unsubscribe:
    return Unsubscribe(
        item.address, item.topic, item.created_at, UnsubscribeSource(item.source), item.provider
    )


def _cursor(last: dict[str, dict[str, str]]) -> str:
    return base64.urlsafe_b64encode(last["sk"]["S"].encode()).decode().rstrip("=")


def _after(tenant_id: str, cursor: str) -> dict[str, dict[str, str]]:
    try:
        sort_key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeError) as exc:
        raise ValueError("not a cursor") from exc
    topic, hash_sign, _ = sort_key.partition("#")
    if not hash_sign or not (topic == ALL_TOPICS or is_topic(topic)):
        raise ValueError("not a cursor")
    return {"pk": {"S": unsubscribe_pk(tenant_id)}, "sk": {"S": sort_key}}
