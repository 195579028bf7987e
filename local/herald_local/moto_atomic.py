"""Makes moto's DynamoDB as atomic as DynamoDB under concurrent requests.

moto checks a transaction's conditions and applies its writes without a lock, and rolls a failed
transaction back by restoring a copy of the whole table. With concurrent requests (the local
stack's threaded gateway, 20 simultaneous duplicates in the tests) two transactions can both pass
their conditions, or a rollback can erase another request's committed write. DynamoDB serialises
conflicting writes; one process-wide lock around moto's write and read paths does the same here.
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
    for name in _OPERATIONS:
        setattr(DynamoDBBackend, name, _serialised(getattr(DynamoDBBackend, name)))
    setattr(DynamoDBBackend, _PATCHED, True)


def _serialised(operation: Any) -> Any:
    @functools.wraps(operation)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return operation(*args, **kwargs)

    return locked
