"""Paystack's payment webhooks to the platform: HMAC-SHA512 of the raw body, no event id.

Paystack keys the HMAC with the integration's secret API key and sends it as lower-case hex in
``x-paystack-signature``. Nothing is timestamped, so there is no replay window: a replay is the
same bytes, hence the same derived event id, and is dropped as a duplicate.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

from herald.adapters.inbound.payloads import (
    as_object,
    derived_id,
    ignored,
    iso_time,
    load_report,
    money,
    text,
)
from herald.adapters.inbound.verification import required_header, secret_bytes
from herald.domain.inbound import (
    IgnoredEvent,
    InvalidSignature,
    Processor,
    SubscriptionChange,
    SubscriptionEvent,
)
from herald.domain.money import Money
from herald.services.ports.providers import PaymentWebhook

SIGNATURE_HEADER = "x-paystack-signature"
# Herald's checkouts put the tenant's id into the transaction's metadata under this name.
TENANT_ID_METADATA = "tenantId"

_KINDS: Mapping[str, SubscriptionChange] = {
    "subscription.create": SubscriptionChange.ACTIVATED,
    # Status "non-renewing": paid up to the next payment date, then it ends.
    "subscription.not_renew": SubscriptionChange.CANCELED_AT_PERIOD_END,
    "subscription.disable": SubscriptionChange.REVOKED,
    "invoice.payment_failed": SubscriptionChange.PAST_DUE,
    "invoice.create": SubscriptionChange.OTHER,
}


def verify(
    headers: Mapping[str, str],
    raw_body: bytes,
    secret: str,
    now: float,  # noqa: ARG001 - one signature for every verifier; Paystack sends no timestamp
) -> None:
    key = secret_bytes(secret, "Paystack secret key")
    expected = hmac.new(key, raw_body, hashlib.sha512).hexdigest()
    if not hmac.compare_digest(expected, required_header(headers, SIGNATURE_HEADER).lower()):
        raise InvalidSignature(f"{SIGNATURE_HEADER} does not match the body")


def parse(raw_body: bytes) -> list[SubscriptionEvent | IgnoredEvent]:
    event, name = load_report(raw_body, "event")
    data = event.get("data")
    kind = _kind(name, data)
    # data is a list for subscription.expiring_cards, which Herald does not act on.
    if kind is None or not isinstance(data, dict):
        return [ignored(Processor.PAYSTACK, name)]
    subscription = as_object(data.get("subscription"))
    return [
        SubscriptionEvent(
            processor=Processor.PAYSTACK,
            event_id=derived_id(raw_body),
            event_name=name,
            kind=kind,
            tenant_id=text(as_object(data.get("metadata")), TENANT_ID_METADATA),
            plan_key=_plan_code(data.get("plan")) or _plan_code(subscription.get("plan")),
            subscription_ref=text(data, "subscription_code") or text(subscription, "subscription_code"),
            customer_ref=text(as_object(data.get("customer")), "customer_code"),
            # A charge pays from the moment it went through.
            period_start=iso_time(data.get("period_start")) or iso_time(data.get("paid_at")),
            # Invoices name their period; a subscription only its next payment date.
            period_end=iso_time(data.get("period_end")) or iso_time(data.get("next_payment_date")),
            paid=_paid(data),
        )
    ]


def _paid(data: Mapping[str, Any]) -> Money | None:
    """The event's own amount, never its plan's (that is the price, whatever was charged), in the
    currency a charge states itself, a paid invoice in its transaction and a new subscription in
    its plan."""
    currency = (
        text(data, "currency")
        or text(as_object(data.get("transaction")), "currency")
        or text(as_object(data.get("plan")), "currency")
    )
    return money(data.get("amount"), currency)


def _kind(name: str, data: object) -> SubscriptionChange | None:
    if name == "charge.success":
        # A charge for a plan (the first one of a subscription, or a renewal) pays for that plan; a
        # one-off charge carries no plan and changes nothing.
        on_plan = _plan_code(as_object(data).get("plan")) is not None
        return SubscriptionChange.ACTIVATED if on_plan else SubscriptionChange.OTHER
    if name == "invoice.update":
        # An updated invoice that is paid is a renewal that went through.
        paid = as_object(data).get("paid") is True
        return SubscriptionChange.RENEWED if paid else SubscriptionChange.OTHER
    return _KINDS.get(name)


def _plan_code(plan: Any) -> str | None:
    # A plan object where Paystack expands it, only its code where it does not.
    if isinstance(plan, str):
        return plan or None
    return text(as_object(plan), "plan_code")


WEBHOOK = PaymentWebhook(Processor.PAYSTACK, verify, lambda body, _headers: parse(body))
