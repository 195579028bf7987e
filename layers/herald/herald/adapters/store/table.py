"""Binding the models to the deployed table, and the connection transactions run on."""

from __future__ import annotations

from functools import lru_cache

from pynamodb.connection import Connection
from pynamodb.exceptions import TransactWriteError

from herald.adapters.store.models import HeraldItem
from herald.settings import Settings, get_settings


def _model_classes() -> list[type[HeraldItem]]:
    found: list[type[HeraldItem]] = [HeraldItem]
    for cls in found:
        found.extend(cls.__subclasses__())
    return found


def bind(table_name: str, *, region: str, endpoint: str | None = None, max_attempts: int = 3) -> None:
    """Point every model at this table (functions at cold start, the CLI, tests per moto table)."""
    meta = HeraldItem.Meta
    meta.table_name = table_name
    meta.region = region
    meta.host = endpoint
    meta.max_retry_attempts = max(max_attempts - 1, 0)
    # PynamoDB caches a connection per class on first use; drop them all so the binding applies.
    for cls in _model_classes():
        cls._connection = None
    connection.cache_clear()


@lru_cache(maxsize=1)
def connection() -> Connection:
    """The low-level connection TransactWrite needs (same endpoint and retries as the models)."""
    meta = HeraldItem.Meta
    return Connection(
        region=meta.region,
        host=meta.host,
        max_retry_attempts=meta.max_retry_attempts,
        connect_timeout_seconds=meta.connect_timeout_seconds,
        read_timeout_seconds=meta.read_timeout_seconds,
    )


@lru_cache(maxsize=1)
def _bound_once() -> bool:
    settings: Settings = get_settings()
    bind(
        settings.table_name,
        region=settings.region,
        endpoint=settings.dynamodb_endpoint,
        max_attempts=settings.aws_max_attempts,
    )
    return True


def ensure_bound() -> None:
    """Bind to the process settings once (handlers call this at cold start)."""
    _bound_once()


def cancellation_codes(exc: TransactWriteError) -> list[str | None]:
    """Why each item of a cancelled transaction failed, in PynamoDB's item order (condition checks,
    deletes, puts, updates); None where the item was fine."""
    return [reason.code if reason else None for reason in exc.cancellation_reasons]
