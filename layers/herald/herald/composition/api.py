"""Composition root of the API function: its services, built once per container from the settings.

Only what the API path needs is imported here (the workers' modules stay out of its cold start).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.job_store import JobStore
from herald.adapters.store.table import ensure_bound
from herald.adapters.store.tenant_store import TenantStore
from herald.services.accept import AcceptService
from herald.services.auth import Authenticator
from herald.services.job_queries import JobQueries
from herald.settings import Settings, get_settings

if TYPE_CHECKING:
    from herald.services.account import AccountService


@dataclass(frozen=True)
class ApiServices:
    settings: Settings
    auth: Authenticator
    accept: AcceptService
    jobs: JobQueries
    tenants: TenantStore


@lru_cache(maxsize=1)
def api_services() -> ApiServices:
    settings = get_settings()
    ensure_bound()
    jobs, queue, tenants = JobStore(), SqsJobQueue(settings), TenantStore()
    return ApiServices(
        settings=settings,
        auth=Authenticator(tenants),
        accept=AcceptService(settings, jobs, queue),
        jobs=JobQueries(settings, jobs, queue),
        tenants=tenants,
    )


@lru_cache(maxsize=1)
def account_service() -> AccountService:
    """Built on first use of an account route, so the send path's cold start skips the vault."""
    from herald.adapters.store.account_store import AccountStore
    from herald.adapters.vault import default_vault
    from herald.services.account import AccountService

    return AccountService(api_services().tenants, AccountStore(), default_vault())
