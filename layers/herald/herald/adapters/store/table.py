"""Herald's table as a value: the item classes bound to one DynamoDB table, and the connection its
transactions run on.

PynamoDB binds a model to its table through the class's ``Meta``. Instead of rewriting that ``Meta``
for the whole process, a ``Table`` makes subclasses of every item class (``herald.adapters.store.
models``) with its own ``Meta`` and its own discriminator, so the stores it is handed read and write
that table only, and one process can hold several (the tests and the benchmark do).
"""

from __future__ import annotations

import types
from functools import cached_property
from typing import Any, TypeVar

import msgspec
from pynamodb.attributes import DiscriminatorAttribute
from pynamodb.connection import Connection

from herald.adapters.store import models

M = TypeVar("M", bound=models.HeraldItem)


class TableAddress(msgspec.Struct, frozen=True):
    name: str
    region: str
    # None: the region's DynamoDB endpoint (the local stack and the tests point it at moto).
    endpoint: str | None
    # Tries per call, retries included.
    max_attempts: int
    connect_timeout_seconds: int = 3
    read_timeout_seconds: int = 5


class Table:
    def __init__(self, address: TableAddress) -> None:
        self.address = address
        meta = type(
            "Meta",
            (),
            {
                "table_name": address.name,
                "region": address.region,
                "host": address.endpoint,
                "max_retry_attempts": max(address.max_attempts - 1, 0),
                "connect_timeout_seconds": address.connect_timeout_seconds,
                "read_timeout_seconds": address.read_timeout_seconds,
            },
        )
        # A discriminator of its own: a Query of this table returns this table's item classes.
        self.item: type[models.HeraldItem] = types.new_class(
            "HeraldItem",
            (models.HeraldItem,),
            exec_body=lambda body: body.update(
                Meta=meta, kind=DiscriminatorAttribute(), __module__=models.__name__
            ),
        )
        self._bound: dict[type[Any], type[Any]] = {}
        for cls in ITEM_CLASSES:
            self._bound[cls] = types.new_class(
                cls.__name__,
                (self.item, cls),
                {"discriminator": models.HeraldItem.kind.get_discriminator(cls)},
                lambda body: body.update(__module__=models.__name__),
            )

    def __getitem__(self, cls: type[M]) -> type[M]:
        """The class of ``cls``'s items in this table."""
        bound: type[M] = self._bound[cls]
        return bound

    @cached_property
    def connection(self) -> Connection:
        """The low-level connection TransactWrite needs (same endpoint and retries as the items)."""
        meta = self.item.Meta
        return Connection(
            region=meta.region,
            host=meta.host,
            max_retry_attempts=meta.max_retry_attempts,
            connect_timeout_seconds=meta.connect_timeout_seconds,
            read_timeout_seconds=meta.read_timeout_seconds,
        )


def _item_classes() -> tuple[type[models.HeraldItem], ...]:
    """Every item class with a discriminator of its own (the kinds the table holds)."""
    found = list(models.HeraldItem.__subclasses__())
    for cls in found:
        found.extend(cls.__subclasses__())
    return tuple(cls for cls in found if models.HeraldItem.kind.get_discriminator(cls) is not None)


ITEM_CLASSES = _item_classes()
