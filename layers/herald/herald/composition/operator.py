"""Composition root of the operator CLI: the tenant services of a stack named by its table."""

from __future__ import annotations

from dataclasses import dataclass

from herald.adapters.store.table import bind
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.services.ports import TenantStore
from herald.services.tenants import TenantAdmin
from herald.settings import DEFAULT_AWS_MAX_ATTEMPTS


@dataclass(frozen=True)
class OperatorServices:
    admin: TenantAdmin
    tenants: TenantStore


def operator_services(table_name: str, *, region: str, endpoint: str | None) -> OperatorServices:
    bind(table_name, region=region, endpoint=endpoint, max_attempts=DEFAULT_AWS_MAX_ATTEMPTS)
    tenants = DynamoTenantStore()
    return OperatorServices(TenantAdmin(tenants), tenants)
