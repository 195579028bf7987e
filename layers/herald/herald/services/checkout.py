"""Upgrading a tenant's plan: a checkout at the payment processor, which sends the customer back to
the console. The processor's signed webhook, verified by its own function, moves the plan; nothing
here changes the tenant.

Polar gets the plan's product, the tenant id as the customer's external id and in the metadata;
Paystack the plan code and the tenant id in the transaction's metadata, which is how the payment
webhooks find the tenant (``herald.adapters.inbound``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import msgspec

from herald.domain.account import TenantContext
from herald.domain.billing import PlanCatalog
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.inbound import Processor
from herald.domain.plans import Plan
from herald.observability import logger
from herald.services.ports.tenants import TenantStore


class CheckoutRequest(msgspec.Struct, frozen=True):
    tenant_id: str
    email: str
    plan_key: str
    success_url: str
    cancel_url: str


class CheckoutProcessor(Protocol):
    def create(self, request: CheckoutRequest) -> str:
        """The URL of the processor's hosted checkout page; ``DependencyError`` when it refuses or
        cannot be reached."""


class Seller(msgspec.Struct, frozen=True):
    processor: Processor
    catalog: PlanCatalog
    checkout: CheckoutProcessor

    def plan_key(self, plan: Plan) -> str | None:
        return next((key for key, sold in self.catalog.plans.items() if sold is plan), None)


class CheckoutService:
    def __init__(self, tenants: TenantStore, sellers: Mapping[Processor, Seller]) -> None:
        self._tenants = tenants
        self._sellers = sellers

    def start(self, tenant: TenantContext, plan: Plan, processor: Processor | None, console_url: str) -> str:
        if tenant.plan == plan.value:
            raise HeraldError(
                f"The account is on the {plan.value} plan already.", ErrorCode.ALREADY_SUBSCRIBED
            )
        seller, key = self._seller(plan, processor)
        profile = self._tenants.profile(tenant.tenant_id)
        if profile.billing_status is not None:
            raise HeraldError(
                "The account pays for a subscription already; change it in the processor's customer portal.",
                ErrorCode.ALREADY_SUBSCRIBED,
            )
        request = CheckoutRequest(
            tenant_id=tenant.tenant_id,
            email=profile.email,
            plan_key=key,
            success_url=f"{console_url}/billing?checkout=done",
            cancel_url=f"{console_url}/billing?checkout=cancelled",
        )
        try:
            return seller.checkout.create(request)
        except DependencyError as exc:
            logger.error(
                "checkout not created", extra={"processor": seller.processor.value, "reason": str(exc)}
            )
            raise HeraldError(
                f"{seller.processor.value.title()} could not start the checkout; retry shortly.",
                ErrorCode.PROVIDER_UNAVAILABLE,
            ) from exc

    def _seller(self, plan: Plan, processor: Processor | None) -> tuple[Seller, str]:
        if processor is None:
            candidates = list(self._sellers.values())
        else:
            candidates = [self._sellers[processor]] if processor in self._sellers else []
        for seller in candidates:
            key = seller.plan_key(plan)
            if key is not None:
                return seller, key
        where = f" through {processor.value.title()}" if processor else ""
        raise HeraldError(f"The {plan.value} plan is not sold{where}.", ErrorCode.PROCESSOR_NOT_AVAILABLE)
