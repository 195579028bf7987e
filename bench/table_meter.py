"""Write and read units of the DynamoDB requests made in this process, measured on the stored items.

An observer of every DynamoDB request (see herald_local.aws.sdk_calls): before a write it reads each target
item (strongly consistent, unobserved), lets the request run, reads the items again and bills each
item by bench.capacity's rules, whatever model or library made the request. A read is billed on
the items it returned; a Query or Scan on the items it evaluated, found by running its key
condition again without filter, projection or COUNT (DynamoDB bills items read, not returned).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from botocore.client import BaseClient
from botocore.exceptions import ClientError

from bench.capacity import Item, TableSchema, WriteCharge, charge_write, item_size, read_units
from herald_local.aws.sdk_calls import Proceed, SdkCall, call_unobserved

WRITE_REQUESTS = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
# Errors after which DynamoDB has still consumed the request's write units.
UNAPPLIED_WRITES = frozenset({"ConditionalCheckFailedException", "TransactionCanceledException"})
_PROJECTIONS = frozenset({"ProjectionExpression", "AttributesToGet"})
_NOT_EVALUATED = frozenset({"FilterExpression", "Select", *_PROJECTIONS})
_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")


def key_shape(key: Item) -> str:
    """A key with its ids masked, naming the kind of item: ``JOB#*#* STATE``, ``RATE#*#* RATE``."""
    parts = []
    for value in key.values():
        text = str(value.get("S", "*"))
        parts.append("#".join(part if _CONSTANT.fullmatch(part) else "*" for part in text.split("#")))
    return " ".join(parts)


@dataclass(frozen=True)
class Target:
    action: str  # Put, Update, Delete or ConditionCheck
    table: str
    key: dict[str, Any]


@dataclass(frozen=True)
class MeteredWrite:
    request: str
    action: str
    item: str
    nth: int  # the how-many-th write of this very item in its invocation (claim 1, outcome 2, ...)
    size_before: int
    size_after: int
    applied: bool
    charge: WriteCharge


@dataclass(frozen=True)
class MeteredRead:
    request: str
    item: str
    size: int
    units: float


class TableMeter:
    def __init__(self, schemas: Mapping[str, TableSchema], client: BaseClient) -> None:
        self._schemas = schemas
        self._client = client
        self._lock = threading.Lock()
        self.writes: list[MeteredWrite] = []
        self._writes_per_item: Counter[str] = Counter()
        self.reads: list[MeteredRead] = []
        # Time spent in the meter's own reads, to be taken off the handlers' measured durations: the
        # time while any of them runs (a handler's parallel writes meter side by side; adding up
        # their reads would take off more than the handler took).
        self.overhead_seconds = 0.0
        self._metering = 0
        self._since = 0.0

    @contextmanager
    def _overhead(self) -> Iterator[None]:
        with self._lock:
            if not self._metering:
                self._since = time.perf_counter()
            self._metering += 1
        try:
            yield
        finally:
            with self._lock:
                self._metering -= 1
                if not self._metering:
                    self.overhead_seconds += time.perf_counter() - self._since

    def begin_invocation(self) -> None:
        with self._lock:
            self._writes_per_item.clear()

    def __call__(self, call: SdkCall, proceed: Proceed) -> Any:
        if call.service != "dynamodb":
            return proceed()
        operation, params = call.operation, call.params
        if operation in WRITE_REQUESTS:
            return self._write(operation, params, proceed)
        response = proceed()
        self._read(operation, params, response)
        return response

    # ------------------------------------------------------------ writes

    def _write(self, operation: str, params: dict[str, Any], proceed: Proceed) -> Any:
        targets = list(self._targets(operation, params))
        before = [self._stored(target) for target in targets]
        try:
            response = proceed()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in UNAPPLIED_WRITES:
                self._bill(operation, targets, before, before, applied=False)
            raise
        self._bill(operation, targets, before, [self._stored(target) for target in targets], applied=True)
        return response

    def _targets(self, operation: str, params: dict[str, Any]) -> Iterator[Target]:
        if operation == "TransactWriteItems":
            for entry in params["TransactItems"]:
                ((action, body),) = entry.items()
                yield self._target(action, body)
        elif operation == "BatchWriteItem":
            for table, requests in params["RequestItems"].items():
                for request in requests:
                    ((kind, body),) = request.items()
                    yield self._target(kind.removesuffix("Request"), {"TableName": table, **body})
        else:
            yield self._target(operation.removesuffix("Item"), params)

    def _target(self, action: str, body: Mapping[str, Any]) -> Target:
        schema = self._schemas[body["TableName"]]
        return Target(action, body["TableName"], schema.key(body["Key"] if "Key" in body else body["Item"]))

    def _stored(self, target: Target) -> Item | None:
        params = {"TableName": target.table, "Key": target.key, "ConsistentRead": True}
        with self._overhead():
            item: Item | None = call_unobserved(self._client, "GetItem", params).get("Item")
        return item

    def _bill(
        self,
        operation: str,
        targets: list[Target],
        before: list[Item | None],
        after: list[Item | None],
        *,
        applied: bool,
    ) -> None:
        transactional = operation == "TransactWriteItems"
        with self._lock:
            for target in targets:
                self._writes_per_item[repr(target.key)] += 1
            nths = [self._writes_per_item[repr(target.key)] for target in targets]
        metered = [
            MeteredWrite(
                request=operation,
                action=target.action,
                item=key_shape(target.key),
                nth=nth,
                size_before=item_size(old),
                size_after=item_size(new),
                applied=applied,
                charge=charge_write(
                    self._schemas[target.table], old, new, transactional=transactional, applied=applied
                ),
            )
            for target, nth, old, new in zip(targets, nths, before, after, strict=True)
        ]
        with self._lock:
            self.writes.extend(metered)

    # ------------------------------------------------------------ reads

    def _read(self, operation: str, params: dict[str, Any], response: dict[str, Any]) -> None:
        metered: list[MeteredRead] = []
        if operation == "GetItem":
            item = self._whole(params["TableName"], params, response.get("Item"), params["Key"])
            metered.append(self._billed_read(operation, params, item, params["Key"]))
        elif operation == "BatchGetItem":
            for table, request in params["RequestItems"].items():
                found = {
                    key_shape(self._schemas[table].key(item)): item for item in response["Responses"][table]
                }
                for key in request["Keys"]:
                    shape = key_shape(self._schemas[table].key(key))
                    item = self._whole(table, request, found.get(shape), key)
                    metered.append(self._billed_read(operation, request, item, key))
        elif operation == "TransactGetItems":
            for entry, answer in zip(params["TransactItems"], response["Responses"], strict=True):
                item = answer.get("Item")
                metered.append(
                    MeteredRead(
                        operation,
                        key_shape(entry["Get"]["Key"]),
                        item_size(item),
                        read_units(item_size(item), consistent=True, transactional=True),
                    )
                )
        elif operation in ("Query", "Scan"):
            metered.append(self._evaluated(operation, params))
        with self._lock:
            self.reads.extend(metered)

    def _whole(self, table: str, request: Mapping[str, Any], item: Item | None, key: Item) -> Item | None:
        """DynamoDB bills a read on the whole item, whichever of its attributes the request asked for."""
        if item is None or not _PROJECTIONS.intersection(request):
            return item
        with self._overhead():
            whole: Item | None = call_unobserved(
                self._client, "GetItem", {"TableName": table, "Key": key}
            ).get("Item")
        return whole

    def _billed_read(
        self, operation: str, request: Mapping[str, Any], item: Item | None, key: Item
    ) -> MeteredRead:
        size = item_size(item)
        units = read_units(size, consistent=bool(request.get("ConsistentRead")))
        return MeteredRead(operation, key_shape(key), size, units)

    def _evaluated(self, operation: str, params: dict[str, Any]) -> MeteredRead:
        """DynamoDB bills a Query on the items its key condition read, before any filter."""
        rerun = {name: value for name, value in params.items() if name not in _NOT_EVALUATED}
        used = set(_PLACEHOLDER.findall(str(rerun.get("KeyConditionExpression", ""))))
        for field in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
            kept = {name: value for name, value in (params.get(field) or {}).items() if name in used}
            rerun.pop(field, None)
            if kept:
                rerun[field] = kept
        with self._overhead():
            items: list[Item] = call_unobserved(self._client, operation, rerun).get("Items", [])
        size = sum(item_size(item) for item in items)
        schema = self._schemas[params["TableName"]]
        shape = key_shape(schema.key(items[0])) if items else "(nothing)"
        return MeteredRead(
            operation, shape, size, read_units(size, consistent=bool(params.get("ConsistentRead")))
        )
