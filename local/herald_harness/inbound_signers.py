"""Test-only credentials for Herald's inbound webhooks, and senders that sign with them the way
each provider does: with the reference library where one exists (svix for Resend,
standardwebhooks for Polar), with ``cryptography`` and ``hmac`` otherwise.

No key or secret here was ever issued by a provider; they sign the tests' and the benchmarks'
requests and the sample events in events/inbound/ only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import standardwebhooks.webhooks
import svix.webhooks
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from herald.adapters.inbound import paystack, polar, postmark, resend, sendgrid
from herald.adapters.inbound.polar import KeyDerivation
from herald.adapters.inbound.postmark import BasicCredentials
from herald.domain.inbound import DeliveryEvent, IgnoredEvent, SubscriptionEvent
from herald.domain.money import Money

TENANT_ID = "6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71"
JOB_ID = "0b7f9a52-3f0e-4f56-9a3c-6a2f1e7d1c11"

_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def p256_key(label: str) -> ec.EllipticCurvePrivateKey:
    """A P-256 key pair derived from a label: the same on every run, so the samples are stable."""
    number = int.from_bytes(hashlib.sha256(label.encode()).digest()) % (_P256_ORDER - 1) + 1
    return ec.derive_private_key(number, ec.SECP256R1())


def verification_key(private_key: ec.EllipticCurvePrivateKey) -> str:
    """What SendGrid shows as the verification key: base64 of the DER SubjectPublicKeyInfo."""
    der = private_key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode("ascii")


def whsec(label: bytes) -> str:
    return "whsec_" + base64.b64encode(label).decode("ascii")


SENDGRID_PRIVATE_KEY = p256_key("herald test-only SendGrid key")
SENDGRID_VERIFICATION_KEY = verification_key(SENDGRID_PRIVATE_KEY)
RESEND_SECRET = whsec(b"herald test-only Resend secret!!")
POLAR_SECRET = whsec(b"herald test-only Polar secret!!!")
POSTMARK_CREDENTIALS = BasicCredentials(password="herald-test-only-postmark-password", username="herald")
# The same credentials as a tenant stores them (user:password).
POSTMARK_SECRET = f"{POSTMARK_CREDENTIALS.username}:{POSTMARK_CREDENTIALS.password}"
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


# Keys of a sender that is not the tenant's provider (or of another tenant).
STRANGER_SENDGRID_KEY = p256_key("herald test-only stranger key")
STRANGER_SECRET = whsec(b"herald test-only stranger secret")


def _moment(timestamp: int) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def sendgrid_headers(
    body: bytes, timestamp: int, key: ec.EllipticCurvePrivateKey = SENDGRID_PRIVATE_KEY
) -> dict[str, str]:
    # Deterministic ECDSA (RFC 6979) keeps the committed samples byte-stable; SendGrid's own
    # signatures are randomised, which verification does not care about.
    algorithm = ec.ECDSA(hashes.SHA256(), deterministic_signing=True)
    signature = key.sign(str(timestamp).encode() + body, algorithm)
    return {
        sendgrid.SIGNATURE_HEADER: base64.b64encode(signature).decode("ascii"),
        sendgrid.TIMESTAMP_HEADER: str(timestamp),
    }


def resend_headers(
    body: bytes, timestamp: int, message_id: str, secret: str = RESEND_SECRET
) -> dict[str, str]:
    signature = svix.webhooks.Webhook(secret).sign(message_id, _moment(timestamp), body.decode())
    return {"svix-id": message_id, "svix-timestamp": str(timestamp), "svix-signature": signature}


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
        message_id, _moment(timestamp), body.decode()
    )
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def postmark_headers(credentials: BasicCredentials = POSTMARK_CREDENTIALS) -> dict[str, str]:
    pair = f"{credentials.username or ''}:{credentials.password}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def paystack_headers(body: bytes, secret: str = PAYSTACK_SECRET) -> dict[str, str]:
    return {"x-paystack-signature": hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()}


Sign = Callable[[bytes, int, str], dict[str, str]]
Verify = Callable[[Mapping[str, str], bytes, float], None]
Parse = Callable[[bytes, Mapping[str, str]], Sequence[DeliveryEvent | SubscriptionEvent | IgnoredEvent]]


@dataclass(frozen=True)
class Sender:
    """One provider's side of the conversation, for tests that treat every provider alike."""

    name: str
    # Headers for (body, timestamp, message id), signed with the tenant's credentials ...
    sign: Sign
    # ... and the same with credentials the tenant never stored.
    sign_as_stranger: Sign
    # Herald's verifier holding the tenant's credentials, and its parser (given the headers).
    verify: Verify
    parse: Parse
    headers: tuple[str, ...]
    signature_header: str
    timestamp_header: str | None = None
    signs_body: bool = True
    # Whether any body can be signed (svix and standardwebhooks sign text only).
    signs_bytes: bool = True


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
    Sender(
        name="sendgrid",
        sign=lambda body, ts, mid: sendgrid_headers(body, ts),
        sign_as_stranger=lambda body, ts, mid: sendgrid_headers(body, ts, STRANGER_SENDGRID_KEY),
        verify=lambda headers, body, now: sendgrid.verify(headers, body, SENDGRID_VERIFICATION_KEY, now),
        parse=lambda body, headers: sendgrid.parse(body),
        headers=(sendgrid.SIGNATURE_HEADER, sendgrid.TIMESTAMP_HEADER),
        signature_header=sendgrid.SIGNATURE_HEADER,
        timestamp_header=sendgrid.TIMESTAMP_HEADER,
    ),
    Sender(
        name="resend",
        sign=resend_headers,
        sign_as_stranger=lambda body, ts, mid: resend_headers(body, ts, mid, STRANGER_SECRET),
        verify=lambda headers, body, now: resend.verify(headers, body, RESEND_SECRET, now),
        parse=resend.parse,
        headers=("svix-id", "svix-timestamp", "svix-signature"),
        signature_header="svix-signature",
        timestamp_header="svix-timestamp",
        signs_bytes=False,
    ),
    Sender(
        name="postmark",
        sign=lambda body, ts, mid: postmark_headers(),
        sign_as_stranger=lambda body, ts, mid: postmark_headers(
            BasicCredentials(password="another-tenants-password", username="herald")
        ),
        verify=lambda headers, body, now: postmark.verify(headers, body, POSTMARK_CREDENTIALS, now),
        parse=lambda body, headers: postmark.parse(body),
        headers=("Authorization",),
        signature_header="Authorization",
        signs_body=False,
    ),
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
