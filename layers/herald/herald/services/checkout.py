"""Upgrading a tenant's plan: the plans on offer with their prices, a checkout at the payment
processor, which sends the customer back to the console, and the processor's customer portal where a
paying customer changes or cancels the plan. The processor's signed webhook, verified by its own
function, moves the plan; nothing here changes the tenant.

Polar gets the plan's product, the tenant id as the customer's external id and in the metadata;
Paystack the plan code and the tenant id in the transaction's metadata, which is how the payment
webhooks find the tenant (``herald.adapters.inbound``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

import msgspec

from herald.domain.account import TenantContext
from herald.domain.billing import PlanCatalog
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.inbound import Processor
from herald.domain.money import Money
from herald.domain.plans import LIMITS, Plan, PlanChange, PlanLimits, plan_change
from herald.observability import logger
from herald.services.ports.tenants import TenantStore


class CheckoutRequest(msgspec.Struct, frozen=True):
    tenant_id: str
    email: str
    plan_key: str
    success_url: str
    cancel_url: str


class PortalRequest(msgspec.Struct, frozen=True):
    tenant_id: str
    # The processor's id of the subscription the tenant pays with ("" where none is known).
    subscription_ref: str


class CheckoutProcessor(Protocol):
    def create(self, request: CheckoutRequest) -> str:
        """The URL of the processor's hosted checkout page; ``DependencyError`` when it refuses or
        cannot be reached."""

    def portal(self, request: PortalRequest) -> str:
        """The URL of the processor's customer portal for the tenant's subscription (change plan,
        cancel, payment method); ``DependencyError`` as for ``create``."""


class PlanOffer(msgspec.Struct, frozen=True):
    """A plan as the Billing page offers it: what it allows, what it costs at each processor that
    sells it, and what choosing it would be for the tenant."""

    plan: Plan
    limits: PlanLimits
    change: PlanChange
    prices: tuple[tuple[Processor, Money], ...]


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

    def offers(self, tenant: TenantContext) -> list[PlanOffer]:
        """Every plan, from the smallest, with its limits and the configured prices."""
        return [
            PlanOffer(plan, LIMITS[plan], plan_change(tenant.plan, plan), self._prices(plan)) for plan in Plan
        ]

    def _prices(self, plan: Plan) -> tuple[tuple[Processor, Money], ...]:
        return tuple(
            (seller.processor, price)
            for seller in self._sellers.values()
            if seller.plan_key(plan) is not None and (price := seller.catalog.prices.get(plan)) is not None
        )

    def start(self, tenant: TenantContext, plan: Plan, processor: Processor | None, console_url: str) -> str:
        change = plan_change(tenant.plan, plan)
        if change is PlanChange.CURRENT:
            raise HeraldError(
                f"The account is on the {plan.value} plan already.", ErrorCode.ALREADY_SUBSCRIBED
            )
        seller, key = self._seller(plan, processor)
        profile = self._tenants.profile(tenant.tenant_id)
        if profile.billing_status is not None:
            what = "A move to a smaller plan" if change is PlanChange.DOWNGRADE else "A plan change"
            raise HeraldError(
                f"The account pays for a subscription already. {what} is made in the processor's"
                " customer portal, which the Billing page links to.",
                ErrorCode.ALREADY_SUBSCRIBED,
            )
        request = CheckoutRequest(
            tenant_id=tenant.tenant_id,
            email=profile.email,
            plan_key=key,
            success_url=f"{console_url}/billing?checkout=done",
            cancel_url=f"{console_url}/billing?checkout=cancelled",
        )
        return _asked(seller, "start the checkout", lambda: seller.checkout.create(request))

    def portal(self, tenant: TenantContext) -> str:
        """The customer portal of the processor the tenant pays with."""
        profile = self._tenants.profile(tenant.tenant_id)
        name, _, ref = (profile.subscription or "").partition(":")
        seller = next((item for item in self._sellers.values() if item.processor.value == name), None)
        if profile.billing_status is None or seller is None:
            raise HeraldError(
                "The account pays for no subscription Herald knows of yet, so there is no customer"
                " portal to open; the processor's receipt email links to it.",
                ErrorCode.NOT_SUBSCRIBED,
            )
        request = PortalRequest(tenant.tenant_id, ref)
        return _asked(seller, "open the customer portal", lambda: seller.checkout.portal(request))

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


Answer = TypeVar("Answer")


def _asked(seller: Seller, what: str, ask: Callable[[], Answer]) -> Answer:
    """The processor's answer; its refusal or silence as a plain error (logged without secrets)."""
    try:
        return ask()
    except DependencyError as exc:
        logger.error(f"could not {what}", extra={"processor": seller.processor.value, "reason": str(exc)})
        raise HeraldError(
            f"{seller.processor.value.title()} could not {what}; retry shortly.",
            ErrorCode.PROVIDER_UNAVAILABLE,
        ) from exc
