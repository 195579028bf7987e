"""Composition root of the scheduled functions."""

from __future__ import annotations

from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, once
from herald.services.billing import QuotaReset


def _quota_reset() -> QuotaReset:
    return QuotaReset(DynamoTenantStore(foundation().table))


def quota_reset() -> QuotaReset:
    return once(_quota_reset)
