"""Herald's table as a value: the item classes bound to one DynamoDB table, and the connection its
transactions run on.

PynamoDB binds a model to its table through the class's ``Meta``. Instead of rewriting that ``Meta``
for the whole process, a ``Table`` makes subclasses of every item class (``herald.adapters.store.
models``) with its own ``Meta`` and its own discriminator, so the stores it is handed read and write
that table only, and one process can hold several (the tests and the benchmark do).

Its failures are translated here, once: a failed call becomes ``DependencyError`` naming what failed
and DynamoDB's error code (never a value of the item).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any, TypeVar

import msgspec
from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.attributes import DiscriminatorAttribute
from pynamodb.connection import Connection
from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

from herald.adapters.store import models
from herald.domain.errors import DependencyError

CONDITION_FAILED = "ConditionalCheckFailedException"
# The most items DynamoDB takes in one transaction.
TRANSACTION_ITEMS = 100


def response_code(exc: Exception) -> str:
    """DynamoDB's error code, or the name of the failure when there was no answer (a timeout).

    PynamoDB's own ``cause_response_code`` raises AttributeError for a cause whose ``response`` is
    None, which is exactly the read timeout case."""
    cause = exc.cause if isinstance(exc, PynamoDBException) else exc
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return type(cause).__name__ if cause is not None else type(exc).__name__


def condition_failed(exc: Exception) -> bool:
    return response_code(exc) == CONDITION_FAILED


@contextmanager
def translated(what: str) -> Iterator[None]:
    """Turn any failure of the DynamoDB calls inside into ``DependencyError``."""
    try:
        yield
    except (PynamoDBException, BotoCoreError, ClientError) as exc:
        raise DependencyError(f"{what} failed: {response_code(exc)}") from exc


def cancellation_codes(exc: TransactWriteError) -> list[str | None]:
    """Why each item of a cancelled transaction failed, in PynamoDB's item order (condition checks,
    deletes, puts, updates); None where the item was fine."""
    return [reason.code if reason else None for reason in exc.cancellation_reasons]


class ConditionFailed(Exception):
    """A conditional write's condition did not hold (the caller says what that means)."""


@contextmanager
def conditional(what: str) -> Iterator[None]:
    """Like ``translated``, but a failed condition raises ``ConditionFailed`` for the caller to map."""
    try:
        yield
    except (PynamoDBException, BotoCoreError, ClientError) as exc:
        if condition_failed(exc):
            raise ConditionFailed(what) from exc
        raise DependencyError(f"{what} failed: {response_code(exc)}") from exc


@contextmanager
def transaction(
    connection: Connection,
    what: str,
    refine: Callable[[list[str | None]], Exception | None] | None = None,
    token: str | None = None,
) -> Iterator[TransactWrite]:
    """A write transaction (of at most ``TRANSACTION_ITEMS``; with ``token``, applied once however
    often it is sent within ten minutes); a cancellation becomes what ``refine`` makes of the
    per-item reasons (in PynamoDB's order: condition checks, deletes, puts, updates), else
    ``DependencyError``."""
    try:
        with TransactWrite(connection=connection, client_request_token=token) as tx:
            yield tx
    except TransactWriteError as exc:
        refined = refine(cancellation_codes(exc)) if refine is not None else None
        if refined is not None:
            raise refined from exc
        raise DependencyError(f"{what} failed: {response_code(exc)}") from exc
    except (PynamoDBException, BotoCoreError, ClientError) as exc:
        raise DependencyError(f"{what} failed: {response_code(exc)}") from exc


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
