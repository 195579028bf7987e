"""Polar's payment webhooks to the platform: Standard Webhooks, with two ways to make the key.

Polar's secrets look like ``whsec_…`` either way, but the HMAC key depends on when the secret was
generated. Older secrets are used whole: Polar base64-encodes the secret string before handing it
to its Standard Webhooks signer, so the key is the UTF-8 bytes of the entire string, ``whsec_``
included. Secrets generated from 2026-09-08 on follow the standard (the endpoint reports
``uses_standard_webhook_signature``): the key is the base64 after ``whsec_``. Where the flag is
not stored with the secret, both keys are tried; either one proves the sender knows the secret.

The body holds no event id: ``webhook-id`` is the event's id, so ``parse`` needs the headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from herald.adapters.inbound import standard_webhooks
from herald.adapters.inbound.payloads import as_object, ignored, iso_time, load_report, money, text
from herald.adapters.inbound.verification import secret_bytes
from herald.domain.inbound import (
    IgnoredEvent,
    Processor,
    SubscriptionChange,
    SubscriptionEvent,
    UnusableSecret,
)
from herald.domain.money import Money
from herald.domain.providers import TENANT_ID_TAG
from herald.domain.signing import standard_key
from herald.services.ports.providers import PaymentWebhook


class KeyDerivation(StrEnum):
    LEGACY = "legacy"
    STANDARD = "standard"


_KINDS: Mapping[str, SubscriptionChange] = {
    "subscription.active": SubscriptionChange.ACTIVATED,
    # The customer took back a pending cancellation: the subscription simply goes on.
    "subscription.uncanceled": SubscriptionChange.ACTIVATED,
    "subscription.past_due": SubscriptionChange.PAST_DUE,
    "subscription.revoked": SubscriptionChange.REVOKED,
    # Created may still wait for its first payment (subscription.active follows); updated
    # accompanies every specific event above.
    "subscription.created": SubscriptionChange.OTHER,
    "subscription.updated": SubscriptionChange.OTHER,
}
# A paid order renews only when Polar charged for a new period (not a first purchase or a plan
# change, which the subscription events already report).
_RENEWAL_REASON = "subscription_cycle"


def verify(
    headers: Mapping[str, str],
    raw_body: bytes,
    secret: str,
    now: float,
    *,
    derivation: KeyDerivation | None = None,
) -> None:
    keys = signing_keys(secret, derivation)
    standard_webhooks.verify(standard_webhooks.STANDARD, headers, raw_body, keys, now)


def signing_keys(secret: str, derivation: KeyDerivation | None = None) -> list[bytes]:
    """The HMAC keys to try for the platform's secret, by how it was generated (None: unknown)."""
    legacy = secret_bytes(secret, "Polar webhook secret")
    if derivation is KeyDerivation.LEGACY:
        return [legacy]
    try:
        standard = standard_key(secret)
    except ValueError:
        if derivation is KeyDerivation.STANDARD:
            raise UnusableSecret("the Polar webhook secret is not whsec_ followed by base64") from None
        # A legacy secret need not be base64 after its prefix.
        return [legacy]
    return [standard] if derivation is KeyDerivation.STANDARD else [standard, legacy]


def parse(raw_body: bytes, headers: Mapping[str, str]) -> list[SubscriptionEvent | IgnoredEvent]:
    event, name = load_report(raw_body, "type")
    data = as_object(event.get("data"))
    kind = _kind(name, data)
    if kind is None:
        return [ignored(Processor.POLAR, name)]
    is_order = name.startswith("order.")
    # An order carries its subscription (with the period it pays for) as a nested object.
    subscription = as_object(data.get("subscription")) if is_order else data
    customer = as_object(data.get("customer"))
    return [
        SubscriptionEvent(
            processor=Processor.POLAR,
            event_id=standard_webhooks.message_id(standard_webhooks.STANDARD, headers),
            event_name=name,
            kind=kind,
            # Checkouts are created with the tenant id as the customer's external id.
            tenant_id=text(customer, "external_id") or text(as_object(data.get("metadata")), TENANT_ID_TAG),
            plan_key=text(data, "product_id"),
            subscription_ref=text(data, "subscription_id") if is_order else text(data, "id"),
            customer_ref=text(data, "customer_id") or text(customer, "id"),
            period_start=iso_time(subscription.get("current_period_start")),
            period_end=iso_time(subscription.get("current_period_end")),
            paid=_paid(data, is_order),
        )
    ]


def _paid(data: Mapping[str, Any], is_order: bool) -> Money | None:
    """An order's amount after discounts and before taxes; a subscription's recurring amount, which
    is its price before any discount, so a discounted one does not say what is paid."""
    if is_order:
        return money(data.get("net_amount"), text(data, "currency"))
    if data.get("discount_id") is not None:
        return None
    return money(data.get("amount"), text(data, "currency"))


def _kind(name: str, data: Mapping[str, Any]) -> SubscriptionChange | None:
    if name == "subscription.canceled":
        # Without cancel_at_period_end it is an immediate end, and subscription.revoked follows.
        at_period_end = data.get("cancel_at_period_end") is True
        return SubscriptionChange.CANCELED_AT_PERIOD_END if at_period_end else SubscriptionChange.OTHER
    if name == "order.paid":
        renewal = data.get("billing_reason") == _RENEWAL_REASON
        return SubscriptionChange.RENEWED if renewal else SubscriptionChange.OTHER
    return _KINDS.get(name)


# The platform's secret may be of either generation: both derivations are tried.
WEBHOOK = PaymentWebhook(Processor.POLAR, verify, parse)
