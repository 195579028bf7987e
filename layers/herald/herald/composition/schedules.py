"""Composition root of the scheduled functions."""

from __future__ import annotations

from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation
from herald.composition.process import once
from herald.services.billing import QuotaReset


def _nothing_cached(_tenant_id: str) -> None:
    """A scheduled function keeps no tenant cache; API containers see changes within their 60 s."""


def _quota_reset() -> QuotaReset:
    return QuotaReset(DynamoTenantStore(foundation().table), _nothing_cached)


def quota_reset() -> QuotaReset:
    return once(_quota_reset)
