"""Binding the models to the deployed table, and the connection transactions run on."""

from __future__ import annotations

from functools import lru_cache

from pynamodb.connection import Connection

from herald.adapters.store.models import HeraldItem


def _model_classes() -> list[type[HeraldItem]]:
    found: list[type[HeraldItem]] = [HeraldItem]
    for cls in found:
        found.extend(cls.__subclasses__())
    return found


def bind(table_name: str, *, region: str, endpoint: str | None = None, max_attempts: int) -> None:
    """Point every model at this table (composition roots at cold start, the CLI, tests per table)."""
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
