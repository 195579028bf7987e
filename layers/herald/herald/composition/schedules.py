"""Composition root of the scheduled functions."""

from __future__ import annotations

from functools import lru_cache

from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation
from herald.services.billing import QuotaReset


def _nothing_cached(_tenant_id: str) -> None:
    """A scheduled function keeps no tenant cache; API containers see changes within their 60 s."""


@lru_cache(maxsize=1)
def quota_reset() -> QuotaReset:
    foundation()
    return QuotaReset(DynamoTenantStore(), _nothing_cached)
