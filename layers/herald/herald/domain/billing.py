"""What a payment processor's subscription event does to a tenant: plan, billing status, period.

A tenant's billing is the part of its profile payments change. Paid periods run monthly from the
anchor (``herald.domain.plans.current_period``); ``paid_until`` is the end of the period paid for.
Limits follow the plan, so a plan change is a limits change; operator overrides stay as they are.
The tenant's own ``status`` (active or disabled by the operator) is never touched by a payment.

Processors may deliver events late and out of order, and a tenant who switched plans has an old
subscription that still reports: an event that ends, pauses or cancels a subscription acts only on
the subscription the tenant currently pays with. A customer may also buy the processor's other
products: their events never set, extend or end a Herald plan.

A payment grants or extends a plan only when it is shown to pay that plan's price at the processor:
in the price's currency, at least its amount (taxes or fees the customer bears may add to it; paying
more gains nothing). A payment below it (a discount too), in another currency, or that does not say
what it paid is refused: the billing stays as it was and an operator looks at it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import StrEnum

import msgspec
from msgspec.structs import replace

from herald.domain.account import TenantProfile
from herald.domain.clock import iso, parse_iso
from herald.domain.inbound import Processor, SubscriptionChange, SubscriptionEvent
from herald.domain.money import Money
from herald.domain.plans import Plan, add_months


class BillingStatus(StrEnum):
    ACTIVE = "active"
    # Paid up, and ends with the current period.
    CANCELING = "canceling"
    # A renewal payment failed; the processor is still trying, the plan stays meanwhile.
    PAST_DUE = "past_due"


class PaymentRefused(msgspec.Struct, frozen=True):
    """A payment that would grant or extend ``plan`` without being shown to pay its price."""

    plan: Plan
    price: Money | None  # what the plan costs at the processor (None: no price is set)
    paid: Money | None  # what the event says was paid (None: it does not say)

    @property
    def reason(self) -> str:
        if self.price is None:
            return f"no price is set for the {self.plan.value} plan at this processor"
        if self.paid is None:
            return f"the event does not say what was paid; the {self.plan.value} plan costs {self.price}"
        return f"paid {self.paid}; the {self.plan.value} plan costs {self.price}"


class PlanCatalog(msgspec.Struct, frozen=True):
    """The processor's plan keys (Polar product ids, Paystack plan codes) that are Herald plans, and
    what each plan costs there."""

    plans: Mapping[str, Plan]
    # A plan without a price is never granted by a payment: nothing could show it was paid for.
    prices: Mapping[Plan, Money] = msgspec.field(default_factory=dict)

    @classmethod
    def of(cls, indie: str, startup: str, prices: Mapping[Plan, Money] | None = None) -> PlanCatalog:
        """An empty key sells nothing: that plan is not offered through the processor."""
        keys = {key: plan for key, plan in ((indie, Plan.INDIE), (startup, Plan.STARTUP)) if key}
        return cls(keys, dict(prices or {}))

    def plan_for(self, key: str | None) -> Plan | None:
        return self.plans.get(key) if key else None

    def refusal(self, plan: Plan, paid: Money | None) -> PaymentRefused | None:
        """Why a payment of ``paid`` does not grant ``plan``; None when it pays the plan's price."""
        price = self.prices.get(plan)
        if price is not None and paid is not None and paid.covers(price):
            return None
        return PaymentRefused(plan, price, paid)


class Billing(msgspec.Struct, frozen=True):
    plan: str
    period_anchor: str
    paid_until: str | None = None
    status: BillingStatus | None = None
    # "<PROCESSOR>:<subscription id>" of the subscription the tenant pays with, where known.
    subscription: str | None = None

    @property
    def paying(self) -> bool:
        return self.status is not None


def billing_of(profile: TenantProfile) -> Billing:
    status = BillingStatus(profile.billing_status) if profile.billing_status else None
    return Billing(profile.plan, profile.period_anchor, profile.paid_until, status, profile.subscription)


def profile_fields(billing: Billing) -> dict[str, object]:
    """The billing as the tenant profile's fields (None: absent)."""
    return {
        "plan": billing.plan,
        "period_anchor": billing.period_anchor,
        "paid_until": billing.paid_until,
        "billing_status": billing.status.value if billing.status else None,
        "subscription": billing.subscription,
    }


def profile_changes(before: Billing, after: Billing) -> dict[str, object]:
    """What ``TenantStore.update_profile`` must set (None: remove) to go from ``before`` to ``after``."""
    old, new = profile_fields(before), profile_fields(after)
    return {name: value for name, value in new.items() if value != old[name]}


def subscription_key(processor: Processor, ref: str | None) -> str | None:
    return f"{processor.value}:{ref}" if ref else None


def billing_after(
    event: SubscriptionEvent, current: Billing, catalog: PlanCatalog, now: datetime
) -> Billing | PaymentRefused:
    """The tenant's billing once ``event`` of the processor of ``catalog`` is applied: ``current``
    itself when the event changes nothing, a refusal when it would grant or extend a plan without
    paying its price."""
    plan = catalog.plan_for(event.plan_key)
    if _other_product(event, current, plan):
        return current
    if event.kind in (SubscriptionChange.ACTIVATED, SubscriptionChange.RENEWED):
        return _paid(event, current, plan, catalog, now)
    if event.kind is SubscriptionChange.OTHER or not current.paying or not _same_subscription(event, current):
        return current
    if event.kind is SubscriptionChange.CANCELED_AT_PERIOD_END:
        return replace(
            current, status=BillingStatus.CANCELING, paid_until=event.period_end or current.paid_until
        )
    if event.kind is SubscriptionChange.PAST_DUE:
        return replace(current, status=BillingStatus.PAST_DUE)
    # Revoked: back to free from now on, in a fresh free period (the paid one's usage would
    # otherwise count against the free quota).
    return Billing(plan=Plan.FREE.value, period_anchor=iso(now))


def _paid(
    event: SubscriptionEvent, current: Billing, plan: Plan | None, catalog: PlanCatalog, now: datetime
) -> Billing | PaymentRefused:
    """A new subscription, a payment recovered, or a further period paid for."""
    granted = plan if plan is not None else (Plan(current.plan) if current.paying else None)
    if granted is None or granted is Plan.FREE:
        # A renewal of nothing Herald sells, or of a subscription Herald never saw start.
        return current
    refused = catalog.refusal(granted, event.paid)
    if refused is not None:
        return refused
    new_plan = granted.value
    start = parse_iso(event.period_start) if event.period_start else now
    paid_until = event.period_end or iso(add_months(start, 1))
    # The same plan paid again keeps its periods (and this period's usage); a new plan starts them.
    continuing = current.paying and current.plan == new_plan
    if continuing and current.paid_until and parse_iso(current.paid_until) > parse_iso(paid_until):
        paid_until = current.paid_until
    return Billing(
        plan=new_plan,
        period_anchor=current.period_anchor if continuing else iso(start),
        paid_until=paid_until,
        status=BillingStatus.ACTIVE,
        subscription=subscription_key(event.processor, event.subscription_ref) or current.subscription,
    )


def _other_product(event: SubscriptionEvent, current: Billing, plan: Plan | None) -> bool:
    """An event of a product that is not a Herald plan (the processor sells others too). It starts
    or extends nothing; it may end, pause or cancel only the very subscription the tenant pays with
    (one whose product left the catalog), never another one of the customer's."""
    if event.plan_key is None or plan is not None:
        return False
    if event.kind in (SubscriptionChange.ACTIVATED, SubscriptionChange.RENEWED):
        return True
    reported = subscription_key(event.processor, event.subscription_ref)
    return reported is None or reported != current.subscription


def _same_subscription(event: SubscriptionEvent, current: Billing) -> bool:
    """Whether the event may concern the subscription the tenant pays with (unknown ids never block)."""
    reported = subscription_key(event.processor, event.subscription_ref)
    return current.subscription is None or reported is None or reported == current.subscription
