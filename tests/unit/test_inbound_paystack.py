"""Paystack's payment webhooks: HMAC-SHA512 over the raw body, and events mapped to subscription
changes with an event id derived from the body."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from herald.adapters.inbound import paystack
from herald.domain.inbound import (
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    Processor,
    SubscriptionChange,
    SubscriptionEvent,
    UnusableSecret,
)
from herald.domain.money import Money
from herald_harness.inbound_signers import PAYSTACK_SECRET, paystack_headers
from herald_harness.senders import TENANT_ID, fixture

NOW = 1_796_025_600
K = SubscriptionChange
SUBSCRIPTION = "SUB_vsyqdmlzble3uii"
PLAN = "PLN_gx2wn530m0i3w3m"
CUSTOMER = "CUS_qo38as2hpsgk2r0"
PAID = Money(1_450_000, "NGN")


def test_the_signature_is_hex_hmac_sha512_of_the_exact_bytes() -> None:
    body = fixture("paystack-charge-success")
    expected = hmac.new(PAYSTACK_SECRET.encode(), body, hashlib.sha512).hexdigest()

    assert paystack_headers(body) == {"x-paystack-signature": expected}
    paystack.verify({"X-Paystack-Signature": expected}, body, PAYSTACK_SECRET, NOW)


def test_upper_case_hex_is_the_same_signature() -> None:
    body = fixture("paystack-charge-success")

    paystack.verify(
        {"x-paystack-signature": paystack_headers(body)["x-paystack-signature"].upper()},
        body,
        PAYSTACK_SECRET,
        NOW,
    )


def test_the_same_json_with_other_spacing_is_not_what_was_signed() -> None:
    body = fixture("paystack-charge-success")
    reserialised = json.dumps(json.loads(body)).encode()

    with pytest.raises(InvalidSignature, match="x-paystack-signature does not match the body"):
        paystack.verify(paystack_headers(body), reserialised, PAYSTACK_SECRET, NOW)


def test_given_an_empty_secret_key_then_nothing_can_pass() -> None:
    # An empty HMAC key is public knowledge: anyone could sign with it.
    body = fixture("paystack-charge-success")

    with pytest.raises(UnusableSecret, match="Paystack secret key is empty"):
        paystack.verify(paystack_headers(body, ""), body, "", NOW)


def test_a_new_subscription_activates_its_plan() -> None:
    body = fixture("paystack-subscription-create")

    assert paystack.parse(body) == [
        SubscriptionEvent(
            processor=Processor.PAYSTACK,
            event_id="sha256:" + hashlib.sha256(body).hexdigest(),
            event_name="subscription.create",
            kind=K.ACTIVATED,
            tenant_id=None,
            plan_key=PLAN,
            subscription_ref=SUBSCRIPTION,
            customer_ref=CUSTOMER,
            period_start=None,
            period_end="2026-12-30T08:00:00.000Z",
            paid=PAID,
        )
    ]


def test_a_charge_for_a_plan_activates_it_for_the_tenant_of_the_checkout_metadata() -> None:
    (event,) = paystack.parse(fixture("paystack-charge-success"))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.tenant_id, event.plan_key, event.customer_ref, event.period_start) == (
        K.ACTIVATED,
        TENANT_ID,
        PLAN,
        CUSTOMER,
        "2026-11-30T07:59:40.000Z",
    )


@pytest.mark.parametrize(
    "name", ["paystack-charge-success", "paystack-subscription-create", "paystack-invoice-update"]
)
def test_what_each_paying_event_paid_is_its_own_amount_in_its_currency(name: str) -> None:
    """A charge states its currency itself, a new subscription in its plan, an invoice in its
    transaction."""
    (event,) = paystack.parse(fixture(name))

    assert isinstance(event, SubscriptionEvent)
    assert event.paid == PAID


def test_a_charge_below_its_plans_price_reports_what_was_charged_not_the_plans_amount() -> None:
    """The probe: a charge of 100 kobo for a plan whose own amount says 1 450 000."""
    charge = json.loads(fixture("paystack-charge-success"))
    charge["data"] |= {"amount": 100, "currency": "USD"}

    (event,) = paystack.parse(json.dumps(charge).encode())

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.paid) == (K.ACTIVATED, Money(100, "USD"))


@pytest.mark.parametrize(
    "fields",
    [{"amount": "1450000"}, {"amount": 1450000.0}, {"amount": True}, {"amount": None}, {"currency": None}],
    ids=["a string", "a float", "a bool", "no amount", "no currency"],
)
def test_an_amount_that_is_not_whole_minor_units_of_a_currency_says_nothing_paid(
    fields: dict[str, object],
) -> None:
    charge = json.loads(fixture("paystack-charge-success"))
    charge["data"] |= fields
    charge["data"]["plan"].pop("currency")

    (event,) = paystack.parse(json.dumps(charge).encode())

    assert isinstance(event, SubscriptionEvent)
    assert event.paid is None


def test_a_one_off_charge_without_a_plan_changes_nothing() -> None:
    charge = json.loads(fixture("paystack-charge-success"))
    charge["data"]["plan"] = {}

    (event,) = paystack.parse(json.dumps(charge).encode())

    assert isinstance(event, SubscriptionEvent)
    assert event.kind is K.OTHER


def test_a_paid_invoice_is_a_renewal_for_its_period() -> None:
    (event,) = paystack.parse(fixture("paystack-invoice-update"))

    assert isinstance(event, SubscriptionEvent)
    assert event.kind is K.RENEWED
    assert (event.subscription_ref, event.plan_key) == (SUBSCRIPTION, None)  # resolved from the subscription
    assert (event.period_start, event.period_end) == ("2026-12-30T08:00:00.000Z", "2027-01-30T08:00:00.000Z")


def test_an_unpaid_invoice_update_changes_nothing() -> None:
    payload = json.loads(fixture("paystack-invoice-update"))
    payload["data"]["paid"] = False

    (event,) = paystack.parse(json.dumps(payload).encode())

    assert isinstance(event, SubscriptionEvent)
    assert event.kind is K.OTHER


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("paystack-invoice-payment-failed", K.PAST_DUE),
        ("paystack-subscription-not-renew", K.CANCELED_AT_PERIOD_END),
        ("paystack-subscription-disable", K.REVOKED),
    ],
)
def test_subscription_troubles_map_to_their_kinds(name: str, kind: SubscriptionChange) -> None:
    (event,) = paystack.parse(fixture(name))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.subscription_ref, event.customer_ref) == (kind, SUBSCRIPTION, CUSTOMER)


def test_a_plan_given_by_its_code_only_is_read_too() -> None:
    payload = json.loads(fixture("paystack-subscription-create"))
    payload["data"]["plan"] = PLAN

    (event,) = paystack.parse(json.dumps(payload).encode())

    assert isinstance(event, SubscriptionEvent)
    assert event.plan_key == PLAN


def test_expiring_cards_come_as_a_list_and_are_ignored() -> None:
    assert paystack.parse(fixture("paystack-subscription-expiring-cards")) == [
        IgnoredEvent(source="PAYSTACK", name="subscription.expiring_cards", reason="not a Herald event type")
    ]


@pytest.mark.parametrize("name", ["transfer.success", "refund.processed", "charge.dispute.create", ""])
def test_other_events_are_ignored(name: str) -> None:
    body = json.dumps({"event": name, "data": {"id": 1}}).encode()

    assert paystack.parse(body) == [
        IgnoredEvent(source="PAYSTACK", name=name, reason="not a Herald event type")
    ]


def test_distinct_bodies_get_distinct_ids_and_a_redelivery_the_same_one() -> None:
    charge, create = fixture("paystack-charge-success"), fixture("paystack-subscription-create")

    ids = [
        event.event_id
        for body in (charge, charge, create)
        for event in paystack.parse(body)
        if isinstance(event, SubscriptionEvent)
    ]

    assert ids[0] == ids[1] != ids[2]


@pytest.mark.parametrize("body", [b"", b"[]", b"{", b'"event"'])
def test_a_body_that_is_not_a_json_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        paystack.parse(body)
