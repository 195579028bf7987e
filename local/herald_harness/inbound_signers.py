"""Test-only credentials of the payment processors' webhooks and senders that sign with them the
way each does (the standardwebhooks library for Polar, ``hmac`` for Paystack), and ``SENDERS``:
every sender's side, the email vendors' from their modules (``herald_harness.vendors``).

No key or secret here was ever issued by anyone; they sign the tests' and the benchmarks' requests
and the sample events in events/inbound/ only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import standardwebhooks.webhooks

from herald.adapters.inbound import paystack, polar
from herald.adapters.inbound.polar import KeyDerivation
from herald.domain.money import Money
from herald.domain.vendors import TENANT_PROVIDERS
from herald_harness.senders import STRANGER_SECRET, Sender, moment, whsec
from herald_harness.vendors import side

POLAR_SECRET = whsec(b"herald test-only Polar secret!!!")
PAYSTACK_SECRET = "herald-test-only-paystack-secret-key"

# Herald's plans as the test payloads name them (inbound_payloads/), and made-up Startup keys; each
# plan key's price, the Indie ones what the payloads pay.
POLAR_PRODUCT_INDIE = "3f2e1d0c-9b8a-4765-a4b3-c2d1e0f9a8b7"
POLAR_PRODUCT_STARTUP = "9c8b7a6f-5e4d-4c3b-8a29-1f0e9d8c7b6a"
PAYSTACK_PLAN_INDIE = "PLN_gx2wn530m0i3w3m"
PAYSTACK_PLAN_STARTUP = "PLN_test_only_startup"
PRICES = {
    POLAR_PRODUCT_INDIE: Money(2900, "USD"),
    POLAR_PRODUCT_STARTUP: Money(9900, "USD"),
    PAYSTACK_PLAN_INDIE: Money(1_450_000, "NGN"),
    PAYSTACK_PLAN_STARTUP: Money(4_500_000, "NGN"),
}


def payment_environment() -> dict[str, str]:
    """The variables that give a local stack these credentials, plans and prices."""
    return {
        "HERALD_PAYSTACK_SECRET_KEY": PAYSTACK_SECRET,
        "HERALD_POLAR_WEBHOOK_SECRET": POLAR_SECRET,
        "HERALD_POLAR_PRODUCT_INDIE": POLAR_PRODUCT_INDIE,
        "HERALD_POLAR_PRODUCT_STARTUP": POLAR_PRODUCT_STARTUP,
        "HERALD_PAYSTACK_PLAN_INDIE": PAYSTACK_PLAN_INDIE,
        "HERALD_PAYSTACK_PLAN_STARTUP": PAYSTACK_PLAN_STARTUP,
        "HERALD_POLAR_PRICE_INDIE": str(PRICES[POLAR_PRODUCT_INDIE]),
        "HERALD_POLAR_PRICE_STARTUP": str(PRICES[POLAR_PRODUCT_STARTUP]),
        "HERALD_PAYSTACK_PRICE_INDIE": str(PRICES[PAYSTACK_PLAN_INDIE]),
        "HERALD_PAYSTACK_PRICE_STARTUP": str(PRICES[PAYSTACK_PLAN_STARTUP]),
    }


def polar_headers(
    body: bytes,
    timestamp: int,
    message_id: str,
    secret: str = POLAR_SECRET,
    derivation: KeyDerivation = KeyDerivation.STANDARD,
) -> dict[str, str]:
    # For older secrets Polar's server base64-encodes the secret string before handing it to the
    # Standard Webhooks library, which decodes it again: the whole string becomes the key.
    handed_over = (
        secret if derivation is KeyDerivation.STANDARD else base64.b64encode(secret.encode()).decode()
    )
    signature = standardwebhooks.webhooks.Webhook(handed_over).sign(
        message_id, moment(timestamp), body.decode()
    )
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def paystack_headers(body: bytes, secret: str = PAYSTACK_SECRET) -> dict[str, str]:
    return {"x-paystack-signature": hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()}


def _polar(derivation: KeyDerivation) -> Sender:
    return Sender(
        name=f"polar-{derivation.value}",
        sign=lambda body, ts, mid: polar_headers(body, ts, mid, derivation=derivation),
        sign_as_stranger=lambda body, ts, mid: polar_headers(body, ts, mid, STRANGER_SECRET, derivation),
        verify=lambda headers, body, now: polar.verify(headers, body, POLAR_SECRET, now),
        parse=polar.parse,
        headers=("webhook-id", "webhook-timestamp", "webhook-signature"),
        signature_header="webhook-signature",
        timestamp_header="webhook-timestamp",
        signs_bytes=False,
    )


SENDERS: tuple[Sender, ...] = (
    *(side(name).SENDER for name in TENANT_PROVIDERS),
    Sender(
        name="paystack",
        sign=lambda body, ts, mid: paystack_headers(body),
        sign_as_stranger=lambda body, ts, mid: paystack_headers(body, "another-integrations-secret-key"),
        verify=lambda headers, body, now: paystack.verify(headers, body, PAYSTACK_SECRET, now),
        parse=lambda body, headers: paystack.parse(body),
        headers=("x-paystack-signature",),
        signature_header="x-paystack-signature",
    ),
    _polar(KeyDerivation.STANDARD),
    _polar(KeyDerivation.LEGACY),
)

SENDER = {sender.name: sender for sender in SENDERS}
