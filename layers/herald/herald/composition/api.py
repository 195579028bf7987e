"""Composition root of the API function: its services, built once per container from the settings.

Only what the send path needs is built at cold start; the account routes' services (vault, provider
adapters) are built on first use of an account route.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from herald.adapters.health import HealthCheck
from herald.adapters.queueing import SqsJobQueue
from herald.adapters.ssrf import check_url
from herald.adapters.store.activity_store import DynamoActivity
from herald.adapters.store.counter_store import DynamoCounters
from herald.adapters.store.job_store import DynamoJobStore
from herald.adapters.store.signin_store import DynamoSessions
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, provider_registry
from herald.domain.records import TenantContext
from herald.services.accept import AcceptService
from herald.services.activity import ActivityService
from herald.services.auth import Authenticator, contexts_cache
from herald.services.job_queries import JobQueries
from herald.services.sessions import SessionAuthenticator
from herald.services.tenant_cache import TenantCache
from herald.settings import Settings

if TYPE_CHECKING:
    from herald.services.account import AccountService
    from herald.services.checkout import CheckoutService


@dataclass(frozen=True)
class ApiServices:
    settings: Settings
    auth: Authenticator
    accept: AcceptService
    jobs: JobQueries
    activity: ActivityService
    health: Callable[[], tuple[bool, dict[str, str]]]
    contexts: TenantCache[str, TenantContext]
    # Console sessions: read with their tenant on every request (never cached).
    sessions: SessionAuthenticator


@lru_cache(maxsize=1)
def api_services() -> ApiServices:
    base = foundation()
    settings = base.settings
    tenants, contexts = DynamoTenantStore(), contexts_cache()
    jobs, queue = DynamoJobStore(settings.max_attempts), SqsJobQueue(settings.queue_urls, base.clients.sqs)
    guard = partial(check_url, local_origin=settings.local_webhook_origin)
    activity = ActivityService(DynamoActivity())
    return ApiServices(
        settings=settings,
        auth=Authenticator(tenants, contexts),
        accept=AcceptService(
            jobs=jobs,
            counters=DynamoCounters(),
            queue=queue,
            url_guard=guard,
            max_attempts=settings.max_attempts,
            activity=activity,
        ),
        jobs=JobQueries(jobs, queue, activity, max_attempts=settings.max_attempts),
        activity=activity,
        health=HealthCheck([*settings.queue_urls.values(), settings.dlq_url], base.clients.sqs),
        contexts=contexts,
        sessions=SessionAuthenticator(DynamoSessions(), tenants),
    )


@lru_cache(maxsize=1)
def account_service() -> AccountService:
    """Built on first use of an account route, so the send path's cold start skips the vault."""
    from herald.adapters.store.account_store import DynamoAccountStore
    from herald.adapters.store.suppression_store import DynamoSuppressions
    from herald.composition.inbound import delivery_format
    from herald.composition.vault import process_vault
    from herald.services.account import AccountService

    return AccountService(
        tenants=DynamoTenantStore(),
        store=DynamoAccountStore(),
        suppressions=DynamoSuppressions(),
        counters=DynamoCounters(),
        secrets=process_vault(),
        providers=provider_registry().domain,
        on_change=api_services().contexts.forget,
        inbound_secrets=lambda provider, secret: delivery_format(provider).check_secret(secret),
    )


@lru_cache(maxsize=1)
def checkout_service() -> CheckoutService:
    """Built on first use of the checkout route (its processors' credentials are read from SSM then)."""
    from herald.adapters.checkout.processors import PaystackCheckout, PolarCheckout
    from herald.adapters.platform_secrets import SsmSecret
    from herald.domain.billing import PlanCatalog
    from herald.domain.inbound import Processor
    from herald.services.checkout import CheckoutService, Seller
    from herald.settings import CheckoutSettings

    settings, ssm = CheckoutSettings.from_env(), foundation().clients.ssm
    polar = PolarCheckout(settings.polar_api_base_url, SsmSecret(settings.polar_token_parameter, ssm))
    paystack = PaystackCheckout(
        settings.paystack_api_base_url, SsmSecret(settings.paystack_secret_parameter, ssm)
    )
    return CheckoutService(
        DynamoTenantStore(),
        {
            Processor.POLAR: Seller(Processor.POLAR, PlanCatalog.of(*settings.polar_plan_keys), polar),
            Processor.PAYSTACK: Seller(
                Processor.PAYSTACK, PlanCatalog.of(*settings.paystack_plan_keys), paystack
            ),
        },
    )
