"""What subscription events do to a tenant's billing: example cases, and properties that hold for
any sequence of events (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from herald.domain.billing import Billing, BillingStatus, PlanCatalog, billing_after, profile_changes
from herald.domain.inbound import Processor, SubscriptionChange, SubscriptionEvent
from herald.domain.money import Money
from herald.domain.plans import Plan

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
FREE = Billing(plan="free", period_anchor="2026-01-15T00:00:00.000Z")
K = SubscriptionChange


def event(kind: SubscriptionChange, subscription: str | None = "sub_1") -> SubscriptionEvent:
    return SubscriptionEvent(
        processor=Processor.POLAR,
        event_id="e",
        event_name=kind.value,
        kind=kind,
        tenant_id="t",
        plan_key="p-indie",
        subscription_ref=subscription,
        customer_ref=None,
        period_start=None,
        period_end=None,
        paid=None,
    )


def test_an_activation_without_a_period_pays_one_month_from_now() -> None:
    after = billing_after(event(K.ACTIVATED), FREE, Plan.INDIE, NOW)

    assert after == Billing(
        "indie", "2026-11-30T08:00:00.000Z", "2026-12-30T08:00:00.000Z", BillingStatus.ACTIVE, "POLAR:sub_1"
    )
    assert profile_changes(FREE, after) == {
        "plan": "indie",
        "period_anchor": "2026-11-30T08:00:00.000Z",
        "paid_until": "2026-12-30T08:00:00.000Z",
        "subscription": "POLAR:sub_1",
        "billing_status": "active",
    }


def test_a_renewal_of_nothing_herald_sells_or_never_saw_start_changes_nothing() -> None:
    assert billing_after(event(K.RENEWED), FREE, None, NOW) == FREE
    assert billing_after(event(K.CANCELED_AT_PERIOD_END), FREE, None, NOW) == FREE
    assert billing_after(event(K.REVOKED), FREE, None, NOW) == FREE


def test_a_product_that_is_not_a_herald_plan_starts_and_ends_nothing_but_its_own_subscription() -> None:
    paying = billing_after(event(K.ACTIVATED), FREE, Plan.INDIE, NOW)
    t_shirt = replace(event(K.ACTIVATED, "sub_2"), plan_key="a-t-shirt")

    for kind in K:
        assert billing_after(replace(t_shirt, kind=kind), paying, None, NOW) == paying, kind
        assert billing_after(replace(t_shirt, kind=kind), FREE, None, NOW) == FREE, kind
    # The subscription that set the plan still ends, though its product has left the catalog.
    dropped = replace(event(K.REVOKED), plan_key="retired-indie")
    assert billing_after(dropped, paying, None, NOW).plan == "free"


def test_an_empty_plan_key_sells_nothing() -> None:
    catalog = PlanCatalog.of("", "p-startup")

    assert (catalog.plan_for(""), catalog.plan_for(None), catalog.plan_for("p-startup")) == (
        None,
        None,
        Plan.STARTUP,
    )


def test_a_price_is_written_as_minor_units_and_a_currency_code() -> None:
    assert Money.parse("500000 NGN") == Money(500_000, "NGN")
    assert str(Money(500_000, "NGN")) == "500000 NGN"
    for written in (
        "5000.00 NGN",
        "500000 ngn",
        "500000",
        "NGN 500000",
        "-1 USD",
        "500000  NGN",
        "1 USD\n",
        "",
    ):
        with pytest.raises(ValueError, match="like 500000 NGN"):
            Money.parse(written)


KINDS = st.sampled_from(list(SubscriptionChange))
PLANS = st.sampled_from([Plan.INDIE, Plan.STARTUP, None])
SUBSCRIPTIONS = st.sampled_from(["sub_1", "sub_2", None])


@given(st.lists(st.tuples(KINDS, PLANS, SUBSCRIPTIONS, st.integers(0, 400)), max_size=12))
def test_whatever_the_events_a_tenant_pays_exactly_while_on_a_paid_plan(
    events: list[tuple[SubscriptionChange, Plan | None, str | None, int]],
) -> None:
    billing = FREE
    for kind, plan, subscription, days in events:
        now = NOW + timedelta(days=days)
        billing = billing_after(event(kind, subscription), billing, plan, now)
        assert billing.paying is (billing.plan != Plan.FREE)
        assert (billing.paid_until is not None) is billing.paying
        assert billing.plan in {plan.value for plan in Plan}
