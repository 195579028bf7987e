"""Makes moto's DynamoDB as atomic, and transactions as cheap, as DynamoDB's.

moto checks a transaction's conditions and applies its writes without a lock, and rolls a failed
transaction back by restoring a copy of the whole table. With concurrent requests (the local
stack's threaded gateway, 20 simultaneous duplicates in the tests) two transactions can both pass
their conditions, or a rollback can erase another request's committed write. DynamoDB serialises
conflicting writes; one process-wide lock around moto's write and read paths does the same here.

The whole-table copy also makes every transaction cost time and memory in proportion to the table
(nearly a second at 4 000 items, and as much memory again while it lasts), under that lock, so
each refused duplicate stalled every other DynamoDB call. A transaction touches at most 100 items, and under the lock nothing else changes
them: copying just those items before and putting them back after a failure rolls back exactly
as much, so moto's whole-table copy is never made, whether the transaction commits or not.

moto's Query sorts every item of the table before it looks for the partition or the index key
(``Table.all_items``), so each Query, and each page of one, costs time in proportion to the whole
table, under that lock: at 10 000 jobs one index read of the sweeper took over 5 s and every API
read behind it timed out. A Query here hands moto only its candidates (the partition's items, or
the items whose index key matches) and lets moto filter, sort and page them as before.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
from dataclasses import dataclass
from typing import Any

_LOCK = threading.RLock()
_OPERATIONS = ("put_item", "update_item", "delete_item", "transact_write_items", "get_item", "query", "scan")
_PATCHED = "_herald_atomic"


def make_dynamodb_atomic() -> None:
    """Serialise moto's DynamoDB operations and make its queries read only their candidates
    (idempotent; affects this process's moto only)."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    if getattr(DynamoDBBackend, _PATCHED, False):
        return
    DynamoDBBackend.transact_write_items = _rolled_back_by_item(DynamoDBBackend.transact_write_items)  # type: ignore[method-assign]
    Table.query = _reading_candidates(Table.query)  # type: ignore[method-assign]
    for name in _OPERATIONS:
        setattr(DynamoDBBackend, name, _serialised(getattr(DynamoDBBackend, name)))
    setattr(DynamoDBBackend, _PATCHED, True)


class _NoCopy:
    """Stands in for the ``copy`` module inside moto's transaction: its whole-table backup becomes
    the live table, and the items the transaction touches are saved by ``_ItemSnapshot`` instead."""

    @staticmethod
    def deepcopy(value: Any) -> Any:
        return value


@dataclass(frozen=True)
class _ItemSnapshot:
    """One item a transaction may write, as it was before (None: it did not exist)."""

    table: Any
    hash_value: Any
    range_value: Any
    item: Any

    def restore(self) -> None:
        # Straight into moto's storage: going through put/delete would count as new writes.
        items = self.table.items
        if self.range_value is None:
            if self.item is None:
                items.pop(self.hash_value, None)
            else:
                items[self.hash_value] = self.item
        elif self.item is None:
            items[self.hash_value].pop(self.range_value, None)
        else:
            items[self.hash_value][self.range_value] = self.item


def _snapshot(backend: Any, op_type: str, op: dict[str, Any]) -> _ItemSnapshot | None:
    """The item ``op`` targets, copied; None when moto will refuse ``op`` before writing anything."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    table = backend.tables.get(op.get("TableName"))
    key = op.get("Item") if op_type == "Put" else op.get("Key")
    if table is None or not isinstance(key, dict) or table.hash_key_attr not in key:
        return None
    if table.range_key_attr is not None and table.range_key_attr not in key:
        return None
    hash_value = DynamoType(key[table.hash_key_attr])
    range_value = None if table.range_key_attr is None else DynamoType(key[table.range_key_attr])
    current = table.get_item(hash_value, range_value)
    return _ItemSnapshot(table, hash_value, range_value, copy.deepcopy(current))


def _snapshots(backend: Any, transact_items: list[dict[str, Any]]) -> list[_ItemSnapshot]:
    snapshots = []
    for item in transact_items:
        op_type, op = next(iter(item.items()))
        snapshot = _snapshot(backend, op_type, op)
        if snapshot is not None:
            snapshots.append(snapshot)
    return snapshots


def _rolled_back_by_item(operation: Any) -> Any:
    @functools.wraps(operation)
    def transact(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        # Runs under _LOCK (wrapped by _serialised below): nothing changes between copy and restore.
        from moto.dynamodb import models

        snapshots = _snapshots(backend, transact_items)
        real_copy = vars(models)["copy"]
        setattr(models, "copy", _NoCopy)  # noqa: B010 (moto's module global, not an attribute of ours)
        try:
            return operation(backend, transact_items)
        except BaseException:
            for snapshot in reversed(snapshots):
                snapshot.restore()
            raise
        finally:
            setattr(models, "copy", real_copy)  # noqa: B010

    return transact


def _serialised(operation: Any) -> Any:
    @functools.wraps(operation)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return operation(*args, **kwargs)

    return locked


def _index_key_matches(item: Any, conditions: list[tuple[str, Any]]) -> bool:
    for name, wanted in conditions:
        value = item.attrs.get(name)
        if value is None:
            return False
        # Strings compared as they are (moto's DynamoType equality is slow); other types as moto does.
        if wanted.type == "S" and value.type == "S":
            if value.value != wanted.value:
                return False
        elif value != wanted:
            return False
    return True


def _candidates(table: Any, hash_key: Any, index_name: str | None, conditions: Any) -> list[Any]:
    """The items a Query can return: its partition's, or those whose index key matches."""
    if index_name is None:
        partition = table.items.get(hash_key)
        if partition is None:
            return []
        return list(partition.values()) if table.range_key_attr else [partition]
    if not conditions:
        return list(table.all_items())  # a form of Query this does not know: moto's own way
    return [
        item
        for partition in table.items.values()
        for item in (partition.values() if table.range_key_attr else [partition])
        if _index_key_matches(item, conditions)
    ]


def _reading_candidates(query: Any) -> Any:
    signature = inspect.signature(query)

    @functools.wraps(query)
    def candidates_only(table: Any, *args: Any, **kwargs: Any) -> Any:
        arguments = signature.bind(table, *args, **kwargs).arguments
        found = _candidates(
            table, arguments["hash_key"], arguments.get("index_name"), arguments.get("hash_key_conditions")
        )
        view = copy.copy(table)  # the same storage and indexes; only all_items differs
        view.all_items = lambda: found
        return query(view, *args, **kwargs)

    return candidates_only
