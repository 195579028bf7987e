"""DynamoDB errors translated once: a failed call becomes ``DependencyError`` naming what failed and
DynamoDB's error code (never a value of the item)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.connection import Connection
from pynamodb.exceptions import PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

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
