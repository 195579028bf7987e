"""DynamoDB's billing arithmetic: item sizes, write and read request units, secondary index writes.

The rules, as the AWS DynamoDB Developer Guide states them ("Item sizes and formats", "Read and
write capacity unit consumption", "Provisioned throughput considerations for global secondary
indexes"):

- an item's size is the sum over its attributes of the UTF-8 length of the name plus the value's
  size: strings their UTF-8 bytes, binaries their raw bytes, numbers 1 byte per two significant
  digits plus 1, booleans and nulls 1; a list or map 3 bytes plus 1 per element plus its elements
  (a map element also counts its name);
- a write costs one unit per started KB, at least 1: PutItem and UpdateItem on the larger of the
  item before and after, DeleteItem on the deleted item; a write whose condition fails still costs
  the units of the item it was checked against; every item of a transaction costs twice that;
- a read costs one unit per started 4 KB (a Query adds up its items before rounding), at least 1;
  eventually consistent reads half of that, transactional reads twice;
- an index entry holds the table's key, the index's key and the projected attributes; an item
  without every index key attribute is not in the index. A new entry is 1 write, a removed entry 1,
  a changed index key 2 (delete + put), a change of projected attributes only 1, no change 0, each
  one unit per started KB of the entry. Index writes are not doubled by transactions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

WRITE_UNIT_BYTES = 1024
READ_UNIT_BYTES = 4096
TRANSACTION_FACTOR = 2
EVENTUAL_FACTOR = 0.5
# A list or map costs this much on top of its elements, and each element one byte more.
CONTAINER_OVERHEAD = 3
ELEMENT_OVERHEAD = 1

# Low-level (wire) form, as botocore's client sends and returns it: {"S": "text"}, {"N": "12"}, ...
AttributeValue = Mapping[str, Any]
Item = Mapping[str, AttributeValue]


def number_size(text: str) -> int:
    """Leading and trailing zeroes are trimmed; 1 byte per two significant digits, plus 1."""
    digits = Decimal(text).normalize().as_tuple().digits
    return math.ceil(len(digits) / 2) + 1


def _string_size(text: str) -> int:
    return len(text.encode())


def _flag_size(_: object) -> int:
    return 1


_SCALARS: dict[str, Callable[[Any], int]] = {
    "S": _string_size,
    "B": len,
    "N": number_size,
    "BOOL": _flag_size,
    "NULL": _flag_size,
}
_SETS = frozenset({"SS", "BS", "NS"})


def value_size(value: AttributeValue) -> int:
    ((kind, data),) = value.items()
    if kind in _SCALARS:
        return _SCALARS[kind](data)
    if kind in _SETS:  # a set is its elements, without overhead
        return sum(_SCALARS[kind[0]](element) for element in data)
    if kind == "L":
        return CONTAINER_OVERHEAD + sum(ELEMENT_OVERHEAD + value_size(element) for element in data)
    if kind == "M":
        return CONTAINER_OVERHEAD + sum(
            ELEMENT_OVERHEAD + _string_size(name) + value_size(element) for name, element in data.items()
        )
    raise ValueError(f"not a DynamoDB attribute value type: {kind}")


def item_size(item: Item | None) -> int:
    if item is None:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def write_units(size: int) -> int:
    return max(1, math.ceil(size / WRITE_UNIT_BYTES))


def read_units(size: int, *, consistent: bool, transactional: bool = False) -> float:
    units = float(max(1, math.ceil(size / READ_UNIT_BYTES)))
    if transactional:
        return units * TRANSACTION_FACTOR
    return units if consistent else units * EVENTUAL_FACTOR


@dataclass(frozen=True)
class IndexSpec:
    name: str
    key_attributes: tuple[str, ...]
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    non_key_attributes: frozenset[str] = frozenset()

    @classmethod
    def from_template(cls, index: Mapping[str, Any]) -> IndexSpec:
        projection = index.get("Projection") or {}
        return cls(
            name=str(index["IndexName"]),
            key_attributes=tuple(str(key["AttributeName"]) for key in index["KeySchema"]),
            projection=str(projection.get("ProjectionType", "KEYS_ONLY")),
            non_key_attributes=frozenset(map(str, projection.get("NonKeyAttributes") or ())),
        )

    def entry(self, item: Item | None, table_keys: tuple[str, ...]) -> dict[str, AttributeValue] | None:
        """The item as this index stores it, or None when the item is not in the index."""
        if item is None or any(name not in item for name in self.key_attributes):
            return None
        if self.projection == "ALL":
            return dict(item)
        kept = {*table_keys, *self.key_attributes}
        if self.projection == "INCLUDE":
            kept |= self.non_key_attributes
        return {name: value for name, value in item.items() if name in kept}

    def write_units(self, before: Item | None, after: Item | None, table_keys: tuple[str, ...]) -> int:
        old, new = self.entry(before, table_keys), self.entry(after, table_keys)
        if old == new:
            return 0
        if old is None or new is None:
            return write_units(item_size(old if new is None else new))
        if any(old[name] != new[name] for name in self.key_attributes):
            return write_units(item_size(old)) + write_units(item_size(new))
        return write_units(max(item_size(old), item_size(new)))


@dataclass(frozen=True)
class TableSchema:
    key_attributes: tuple[str, ...]
    indexes: tuple[IndexSpec, ...] = ()

    @classmethod
    def from_template(cls, properties: Mapping[str, Any]) -> TableSchema:
        """From an AWS::DynamoDB::Table resource's Properties (global and local secondary indexes)."""
        indexes = [
            *(properties.get("GlobalSecondaryIndexes") or ()),
            *(properties.get("LocalSecondaryIndexes") or ()),
        ]
        return cls(
            key_attributes=tuple(str(key["AttributeName"]) for key in properties["KeySchema"]),
            indexes=tuple(IndexSpec.from_template(index) for index in indexes),
        )

    def key(self, item: Item) -> dict[str, AttributeValue]:
        return {name: item[name] for name in self.key_attributes}


@dataclass(frozen=True)
class WriteCharge:
    table_units: int
    index_units: int

    @property
    def total(self) -> int:
        return self.table_units + self.index_units


def charge_write(
    schema: TableSchema,
    before: Item | None,
    after: Item | None,
    *,
    transactional: bool = False,
    applied: bool = True,
) -> WriteCharge:
    """What one item's write costs, from the stored item before and after the request.

    ``applied`` is False when the write's condition failed (or its transaction was cancelled):
    the request is billed on the item it was checked against and writes no index entry.
    A condition check inside a transaction is an applied write that changed nothing.
    """
    factor = TRANSACTION_FACTOR if transactional else 1
    if not applied:
        return WriteCharge(write_units(item_size(before)) * factor, 0)
    table_units = write_units(max(item_size(before), item_size(after))) * factor
    index_units = sum(index.write_units(before, after, schema.key_attributes) for index in schema.indexes)
    return WriteCharge(table_units, index_units)
