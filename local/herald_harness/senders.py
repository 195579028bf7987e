"""What every sender's side of the harness shares: the test tenant and job the samples name, the
payloads of inbound_payloads/ (beside this module), the ``Sender`` interface through which tests
treat every provider and processor alike, and key material that was never issued by anyone.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from herald.domain.inbound import DeliveryEvent, IgnoredEvent, SubscriptionEvent

TENANT_ID = "6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71"
JOB_ID = "0b7f9a52-3f0e-4f56-9a3c-6a2f1e7d1c11"
PAYLOADS = Path(__file__).resolve().parent / "inbound_payloads"

_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def fixture(name: str) -> bytes:
    """A payload exactly as stored (the parser tests read these bytes)."""
    return (PAYLOADS / f"{name}.json").read_bytes()


def compact(name: str) -> bytes:
    """A payload as the provider sends it: compact JSON."""
    return json.dumps(json.loads(fixture(name)), separators=(",", ":"), ensure_ascii=False).encode()


def sent(payload: object) -> bytes:
    """A payload built in a test, as a sender puts it on the wire."""
    return json.dumps(payload, separators=(",", ":")).encode()


def p256_key(label: str) -> ec.EllipticCurvePrivateKey:
    """A P-256 key pair derived from a label: the same on every run, so the samples are stable."""
    number = int.from_bytes(hashlib.sha256(label.encode()).digest()) % (_P256_ORDER - 1) + 1
    return ec.derive_private_key(number, ec.SECP256R1())


def verification_key(private_key: ec.EllipticCurvePrivateKey) -> str:
    """A public key as verification keys are shown: base64 of the DER SubjectPublicKeyInfo."""
    der = private_key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode("ascii")


def whsec(label: bytes) -> str:
    return "whsec_" + base64.b64encode(label).decode("ascii")


# The secret of a sender that is not the tenant's (or of another tenant).
STRANGER_SECRET = whsec(b"herald test-only stranger secret")


def moment(timestamp: int) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


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
    # Whether the signature travels inside the body, as built, instead of in headers (``sign``
    # then gives none): the header attacks do not apply, the sender's own tests attack it.
    signed_in_body: bool = False


class SampleSpec(NamedTuple):
    """A sample event of events/inbound/: its payload's name, the message id where the scheme has
    one, and where the sender posts from."""

    name: str
    message_id: str
    source_ip: str
    user_agent: str


class SignedRequest(NamedTuple):
    """An inbound request as its sender posts it: these exact bytes, with these headers."""

    body: bytes
    headers: dict[str, str]
