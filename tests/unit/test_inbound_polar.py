"""Polar's payment webhooks: Standard Webhooks with both of Polar's key derivations, checked
against the standardwebhooks library, and events mapped to subscription changes."""

from __future__ import annotations

import base64
import json
import time

import pytest
import standardwebhooks.webhooks

from herald.adapters.inbound import polar
from herald.adapters.inbound.polar import KeyDerivation
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
from herald_harness.inbound_signers import POLAR_SECRET, polar_headers
from herald_harness.senders import TENANT_ID, fixture

NOW = 1_796_025_600
MESSAGE_ID = "3b1c0e52-2f0a-4b5e-9d6c-7a1f00000001"
K = SubscriptionChange
LEGACY, STANDARD = KeyDerivation.LEGACY, KeyDerivation.STANDARD
SUBSCRIPTION = "d7a3c2f1-5b6e-4c8d-9a0b-1c2d3e4f5a6b"
PRODUCT = "3f2e1d0c-9b8a-4765-a4b3-c2d1e0f9a8b7"
CUSTOMER = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
BODY = fixture("polar-subscription-active")


def signed(derivation: KeyDerivation, secret: str = POLAR_SECRET, body: bytes = BODY) -> dict[str, str]:
    return polar_headers(body, NOW, MESSAGE_ID, secret, derivation)


@pytest.mark.parametrize(
    ("signed_with", "stored_as"),
    [(LEGACY, LEGACY), (LEGACY, None), (STANDARD, STANDARD), (STANDARD, None)],
    ids=["legacy/legacy", "legacy/unknown", "standard/standard", "standard/unknown"],
)
def test_each_derivation_verifies_when_stored_or_unknown(
    signed_with: KeyDerivation, stored_as: KeyDerivation | None
) -> None:
    polar.verify(signed(signed_with), BODY, POLAR_SECRET, NOW, derivation=stored_as)


@pytest.mark.parametrize(("signed_with", "stored_as"), [(LEGACY, STANDARD), (STANDARD, LEGACY)])
def test_a_stored_derivation_excludes_the_other(signed_with: KeyDerivation, stored_as: KeyDerivation) -> None:
    with pytest.raises(InvalidSignature, match="no webhook-signature value matches the body"):
        polar.verify(signed(signed_with), BODY, POLAR_SECRET, NOW, derivation=stored_as)


def test_the_legacy_key_is_the_whole_secret_string_including_its_prefix() -> None:
    assert polar.signing_keys(POLAR_SECRET, LEGACY) == [POLAR_SECRET.encode()]
    assert polar.signing_keys(POLAR_SECRET, STANDARD) == [
        base64.b64decode(POLAR_SECRET.removeprefix("whsec_"))
    ]


def test_a_legacy_secret_that_is_not_base64_after_its_prefix_still_works_when_the_derivation_is_unknown() -> (
    None
):
    secret = "whsec_older-style secret, not base64!"

    polar.verify(signed(LEGACY, secret), BODY, secret, NOW)
    polar.verify(signed(LEGACY, secret), BODY, secret, NOW, derivation=LEGACY)
    with pytest.raises(UnusableSecret, match="not whsec_ followed by base64"):
        polar.verify(signed(LEGACY, secret), BODY, secret, NOW, derivation=STANDARD)


@pytest.mark.parametrize("derivation", [None, LEGACY, STANDARD])
def test_given_an_empty_secret_then_nothing_can_pass(derivation: KeyDerivation | None) -> None:
    with pytest.raises(UnusableSecret, match="Polar webhook secret is empty"):
        polar.verify(signed(STANDARD), BODY, "", NOW, derivation=derivation)


def test_the_standardwebhooks_library_agrees_on_both_derivations() -> None:
    now = int(time.time())
    standard = polar_headers(BODY, now, MESSAGE_ID, POLAR_SECRET, STANDARD)
    legacy = polar_headers(BODY, now, MESSAGE_ID, POLAR_SECRET, LEGACY)

    standardwebhooks.webhooks.Webhook(POLAR_SECRET).verify(BODY, standard)
    # What Polar's own SDK does for legacy secrets: base64 the whole string, then verify.
    standardwebhooks.webhooks.Webhook(base64.b64encode(POLAR_SECRET.encode()).decode()).verify(BODY, legacy)
    polar.verify(standard, BODY, POLAR_SECRET, now)
    polar.verify(legacy, BODY, POLAR_SECRET, now)


def test_given_the_signature_of_another_webhook_id_then_it_is_refused() -> None:
    headers = polar_headers(BODY, NOW, "another-event", POLAR_SECRET, STANDARD) | {"webhook-id": MESSAGE_ID}

    with pytest.raises(InvalidSignature, match="no webhook-signature value matches the body"):
        polar.verify(headers, BODY, POLAR_SECRET, NOW)


def test_an_active_subscription_activates_the_product_for_the_tenant() -> None:
    assert polar.parse(BODY, signed(STANDARD)) == [
        SubscriptionEvent(
            processor=Processor.POLAR,
            event_id=MESSAGE_ID,
            event_name="subscription.active",
            kind=K.ACTIVATED,
            tenant_id=TENANT_ID,
            plan_key=PRODUCT,
            subscription_ref=SUBSCRIPTION,
            customer_ref=CUSTOMER,
            period_start="2026-11-30T07:58:10.000Z",
            period_end="2026-12-30T07:58:10.000Z",
            paid=Money(2900, "USD"),
        )
    ]


def test_a_paid_renewal_order_renews_for_the_period_of_its_subscription() -> None:
    (event,) = polar.parse(fixture("polar-order-paid"), signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert event.kind is K.RENEWED
    # The customer has no external id here: the tenant id comes from the order's metadata.
    assert (event.tenant_id, event.plan_key, event.subscription_ref) == (TENANT_ID, PRODUCT, SUBSCRIPTION)
    assert (event.period_start, event.period_end) == ("2026-12-30T07:58:10.000Z", "2027-01-30T07:58:10.000Z")


def test_a_renewal_order_paid_its_amount_after_discounts_and_before_taxes() -> None:
    payload = json.loads(fixture("polar-order-paid"))
    payload["data"] |= {"discount_amount": 290, "net_amount": 2610, "tax_amount": 522, "total_amount": 3132}

    (event,) = polar.parse(json.dumps(payload).encode(), signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.paid) == (K.RENEWED, Money(2610, "USD"))


def test_an_order_without_its_net_amount_says_nothing_paid() -> None:
    payload = json.loads(fixture("polar-order-paid"))
    del payload["data"]["net_amount"]

    (event,) = polar.parse(json.dumps(payload).encode(), signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert event.paid is None


def test_a_subscription_in_another_currency_reports_it_in_upper_case() -> None:
    body = json.dumps(json.loads(BODY) | {"data": json.loads(BODY)["data"] | {"currency": "eur"}}).encode()

    (event,) = polar.parse(body, signed(STANDARD, body=body))

    assert isinstance(event, SubscriptionEvent)
    assert event.paid == Money(2900, "EUR")


def test_a_discounted_subscription_says_nothing_paid() -> None:
    """Its amount is the price before the discount: what the customer pays is in its orders."""
    data = json.loads(BODY)["data"] | {"discount_id": "5b6c7d8e-0000-4000-8000-000000000001"}
    body = json.dumps(json.loads(BODY) | {"data": data}).encode()

    (event,) = polar.parse(body, signed(STANDARD, body=body))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.paid) == (K.ACTIVATED, None)


@pytest.mark.parametrize("billing_reason", ["purchase", "subscription_create", "subscription_update", None])
def test_other_paid_orders_change_nothing(billing_reason: str | None) -> None:
    payload = json.loads(fixture("polar-order-paid"))
    payload["data"]["billing_reason"] = billing_reason

    (event,) = polar.parse(json.dumps(payload).encode(), signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert event.kind is K.OTHER


@pytest.mark.parametrize(("at_period_end", "kind"), [(True, K.CANCELED_AT_PERIOD_END), (False, K.OTHER)])
def test_a_cancellation_ends_at_period_end_only_when_polar_says_so(
    at_period_end: bool, kind: SubscriptionChange
) -> None:
    payload = json.loads(fixture("polar-subscription-canceled"))
    payload["data"]["cancel_at_period_end"] = at_period_end

    (event,) = polar.parse(json.dumps(payload).encode(), signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.period_end) == (kind, "2026-12-30T07:58:10.000Z")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("subscription.created", K.OTHER),
        ("subscription.updated", K.OTHER),
        ("subscription.uncanceled", K.ACTIVATED),
        ("subscription.past_due", K.PAST_DUE),
        ("subscription.revoked", K.REVOKED),
    ],
)
def test_subscription_event_types_map_to_kinds(name: str, kind: SubscriptionChange) -> None:
    body = json.dumps(json.loads(BODY) | {"type": name}).encode()

    (event,) = polar.parse(body, signed(STANDARD))

    assert isinstance(event, SubscriptionEvent)
    assert (event.kind, event.event_name, event.tenant_id) == (kind, name, TENANT_ID)


@pytest.mark.parametrize(
    "name", ["checkout.created", "order.created", "subscription.cycled", "benefit_grant.created", ""]
)
def test_other_event_types_are_ignored(name: str) -> None:
    body = json.dumps(json.loads(BODY) | {"type": name}).encode()

    assert polar.parse(body, signed(STANDARD)) == [
        IgnoredEvent(source="POLAR", name=name, reason="not a Herald event type")
    ]


@pytest.mark.parametrize("body", [b"", b"[]", b"{", b"1e999999"])
def test_a_body_that_is_not_a_json_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        polar.parse(body, signed(STANDARD))
