"""What subscription events do to a tenant's billing: example cases, and properties that hold for
any sequence of events (hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from herald.domain.billing import (
    Billing,
    BillingStatus,
    PaymentRefused,
    PlanCatalog,
    billing_after,
    profile_changes,
)
from herald.domain.inbound import Processor, SubscriptionChange, SubscriptionEvent
from herald.domain.money import Money
from herald.domain.plans import Plan

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
FREE = Billing(plan="free", period_anchor="2026-01-15T00:00:00.000Z")
K = SubscriptionChange
INDIE_PRICE, STARTUP_PRICE = Money(2900, "USD"), Money(9900, "USD")
CATALOG = PlanCatalog.of("p-indie", "p-startup", {Plan.INDIE: INDIE_PRICE, Plan.STARTUP: STARTUP_PRICE})


def event(
    kind: SubscriptionChange,
    subscription: str | None = "sub_1",
    *,
    plan_key: str | None = "p-indie",
    paid: Money | None = INDIE_PRICE,
) -> SubscriptionEvent:
    return SubscriptionEvent(
        processor=Processor.POLAR,
        event_id="e",
        event_name=kind.value,
        kind=kind,
        tenant_id="t",
        plan_key=plan_key,
        subscription_ref=subscription,
        customer_ref=None,
        period_start=None,
        period_end=None,
        paid=paid,
    )


def billed(after: Billing | PaymentRefused) -> Billing:
    assert isinstance(after, Billing), after
    return after


def test_an_activation_without_a_period_pays_one_month_from_now() -> None:
    after = billed(billing_after(event(K.ACTIVATED), FREE, CATALOG, NOW))

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
    for kind in (K.RENEWED, K.CANCELED_AT_PERIOD_END, K.REVOKED):
        assert billing_after(event(kind, plan_key=None), FREE, CATALOG, NOW) == FREE, kind


def test_a_product_that_is_not_a_herald_plan_starts_and_ends_nothing_but_its_own_subscription() -> None:
    paying = billed(billing_after(event(K.ACTIVATED), FREE, CATALOG, NOW))
    t_shirt = event(K.ACTIVATED, "sub_2", plan_key="a-t-shirt")

    for kind in K:
        assert billing_after(replace(t_shirt, kind=kind), paying, CATALOG, NOW) == paying, kind
        assert billing_after(replace(t_shirt, kind=kind), FREE, CATALOG, NOW) == FREE, kind
    # The subscription that set the plan still ends, though its product has left the catalog.
    dropped = event(K.REVOKED, plan_key="retired-indie")
    assert billed(billing_after(dropped, paying, CATALOG, NOW)).plan == "free"


def test_an_empty_plan_key_sells_nothing() -> None:
    catalog = PlanCatalog.of("", "p-startup")

    assert (catalog.plan_for(""), catalog.plan_for(None), catalog.plan_for("p-startup")) == (
        None,
        None,
        Plan.STARTUP,
    )


# ---------------------------------------------------------------- what a payment must pay


@pytest.mark.parametrize("paid", [INDIE_PRICE, Money(3480, "USD")], ids=["the price", "more (tax)"])
def test_a_payment_of_at_least_the_price_in_its_currency_grants_the_plan(paid: Money) -> None:
    assert billed(billing_after(event(K.ACTIVATED, paid=paid), FREE, CATALOG, NOW)).plan == "indie"


@pytest.mark.parametrize(
    ("paid", "reason"),
    [
        (Money(100, "USD"), "paid 100 USD; the indie plan costs 2900 USD"),
        (Money(2610, "USD"), "paid 2610 USD; the indie plan costs 2900 USD"),
        (Money(2900, "NGN"), "paid 2900 NGN; the indie plan costs 2900 USD"),
        (None, "the event does not say what was paid; the indie plan costs 2900 USD"),
    ],
    ids=["the probe's 100", "a discount", "another currency", "no amount"],
)
def test_a_payment_below_the_price_in_another_currency_or_of_no_stated_amount_is_refused(
    paid: Money | None, reason: str
) -> None:
    for kind in (K.ACTIVATED, K.RENEWED):
        refused = billing_after(event(kind, paid=paid), FREE, CATALOG, NOW)

        assert refused == PaymentRefused(Plan.INDIE, INDIE_PRICE, paid), kind
        assert isinstance(refused, PaymentRefused)
        assert refused.reason == reason


def test_the_startup_plan_paid_at_the_indie_price_is_refused() -> None:
    startup = event(K.ACTIVATED, plan_key="p-startup", paid=INDIE_PRICE)

    assert billing_after(startup, FREE, CATALOG, NOW) == PaymentRefused(
        Plan.STARTUP, STARTUP_PRICE, INDIE_PRICE
    )


def test_a_plan_without_a_price_is_never_granted() -> None:
    unpriced = PlanCatalog.of("p-indie", "p-startup", {Plan.STARTUP: STARTUP_PRICE})

    refused = billing_after(event(K.ACTIVATED), FREE, unpriced, NOW)

    assert refused == PaymentRefused(Plan.INDIE, None, INDIE_PRICE)
    assert isinstance(refused, PaymentRefused)
    assert refused.reason == "no price is set for the indie plan at this processor"


def test_a_renewal_that_names_no_plan_must_pay_the_price_of_the_plan_it_extends() -> None:
    """Paystack's paid invoices name the subscription, not its plan."""
    startup = billed(
        billing_after(event(K.ACTIVATED, plan_key="p-startup", paid=STARTUP_PRICE), FREE, CATALOG, NOW)
    )
    later = NOW + timedelta(days=30)

    underpaid = billing_after(event(K.RENEWED, plan_key=None, paid=INDIE_PRICE), startup, CATALOG, later)
    renewed = billed(
        billing_after(event(K.RENEWED, plan_key=None, paid=STARTUP_PRICE), startup, CATALOG, later)
    )

    assert underpaid == PaymentRefused(Plan.STARTUP, STARTUP_PRICE, INDIE_PRICE)
    assert renewed.paid_until == "2027-01-30T08:00:00.000Z"


def test_ending_pausing_or_cancelling_a_subscription_needs_no_amount() -> None:
    paying = billed(billing_after(event(K.ACTIVATED), FREE, CATALOG, NOW))

    canceling = billed(billing_after(event(K.CANCELED_AT_PERIOD_END, paid=None), paying, CATALOG, NOW))
    past_due = billed(billing_after(event(K.PAST_DUE, paid=None), paying, CATALOG, NOW))
    revoked = billed(billing_after(event(K.REVOKED, paid=None), paying, CATALOG, NOW))

    assert (canceling.status, past_due.status, revoked.plan) == (
        BillingStatus.CANCELING,
        BillingStatus.PAST_DUE,
        "free",
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


# ---------------------------------------------------------------- any sequence of events

KINDS = st.sampled_from(list(SubscriptionChange))
PLAN_KEYS = st.sampled_from(["p-indie", "p-startup", "a-t-shirt", None])
PAID = st.sampled_from([INDIE_PRICE, STARTUP_PRICE, Money(100, "USD"), Money(9900, "NGN"), None])
SUBSCRIPTIONS = st.sampled_from(["sub_1", "sub_2", None])
EVENTS = st.tuples(KINDS, PLAN_KEYS, PAID, SUBSCRIPTIONS, st.integers(0, 400))


@given(st.lists(EVENTS, max_size=12))
def test_whatever_the_events_a_tenant_pays_exactly_while_on_a_paid_plan_and_only_at_its_price(
    events: list[tuple[SubscriptionChange, str | None, Money | None, str | None, int]],
) -> None:
    billing = FREE
    for kind, plan_key, paid, subscription, days in events:
        now = NOW + timedelta(days=days)
        after = billing_after(event(kind, subscription, plan_key=plan_key, paid=paid), billing, CATALOG, now)
        if isinstance(after, PaymentRefused):
            assert paid is None or after.price is None or not paid.covers(after.price)
            continue
        if kind in (K.ACTIVATED, K.RENEWED) and after != billing:
            # Whatever started or extended a paid plan paid that plan's price.
            assert paid is not None
            assert paid.covers(CATALOG.prices[Plan(after.plan)])
        billing = after
        assert billing.paying is (billing.plan != Plan.FREE)
        assert (billing.paid_until is not None) is billing.paying
        assert billing.plan in {plan.value for plan in Plan}
