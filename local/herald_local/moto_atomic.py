"""Makes moto's DynamoDB as atomic, and transactions as cheap, as DynamoDB's.

moto checks a transaction's conditions and applies its writes without a lock, and rolls a failed
transaction back by restoring a copy of the whole table. With concurrent requests (the local
stack's threaded gateway, 20 simultaneous duplicates in the tests) two transactions can both pass
their conditions, or a rollback can erase another request's committed write. DynamoDB serialises
conflicting writes; one process-wide lock around moto's write and read paths does the same here.

The whole-table copy also makes every transaction cost time in proportion to the table (about
20 ms per thousand items): under the lock, a transaction whose conditions all hold cannot need a
rollback, so its conditions are checked first and the copy is skipped.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

_LOCK = threading.RLock()
_OPERATIONS = ("put_item", "update_item", "delete_item", "transact_write_items", "get_item", "query", "scan")
_PATCHED = "_herald_atomic"


def make_dynamodb_atomic() -> None:
    """Serialise moto's DynamoDB operations (idempotent; affects this process's moto only)."""
    from moto.dynamodb.models import DynamoDBBackend

    if getattr(DynamoDBBackend, _PATCHED, False):
        return
    DynamoDBBackend.transact_write_items = _checked_first(DynamoDBBackend.transact_write_items)  # type: ignore[method-assign]
    for name in _OPERATIONS:
        setattr(DynamoDBBackend, name, _serialised(getattr(DynamoDBBackend, name)))
    setattr(DynamoDBBackend, _PATCHED, True)


class _NoCopy:
    """Stands in for the ``copy`` module inside moto's transaction while no rollback can happen."""

    @staticmethod
    def deepcopy(value: Any) -> Any:
        return value


def _conditions_hold(backend: Any, transact_items: list[dict[str, Any]]) -> bool:
    from moto.dynamodb.comparisons import get_filter_expression

    for item in transact_items:
        op_type, op = next(iter(item.items()))
        condition = op.get("ConditionExpression")
        if condition is None:
            continue
        table = backend.get_table(op["TableName"])
        if op_type == "Put":
            key = {table.hash_key_attr: op["Item"][table.hash_key_attr]}
            if table.range_key_attr is not None:
                key[table.range_key_attr] = op["Item"][table.range_key_attr]
        else:
            key = op["Key"]
        expression = get_filter_expression(
            condition, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
        )
        if not expression.expr(backend.get_item(op["TableName"], key)):
            return False
    return True


def _checked_first(operation: Any) -> Any:
    @functools.wraps(operation)
    def transact(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        # Runs under _LOCK (wrapped by _serialised below): nothing changes between check and write.
        if not _conditions_hold(backend, transact_items):
            return operation(backend, transact_items)  # moto builds the cancellation reasons
        from moto.dynamodb import models

        real_copy = vars(models)["copy"]
        setattr(models, "copy", _NoCopy)  # noqa: B010 (moto's module global, not an attribute of ours)
        try:
            return operation(backend, transact_items)
        finally:
            setattr(models, "copy", real_copy)  # noqa: B010

    return transact


def _serialised(operation: Any) -> Any:
    @functools.wraps(operation)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return operation(*args, **kwargs)

    return locked
