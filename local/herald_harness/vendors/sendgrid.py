"""SendGrid's side: a test-only P-256 key pair, its Signed Event Webhook signer, and its events."""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from herald.adapters.inbound import sendgrid
from herald_harness.senders import (
    SampleSpec,
    Sender,
    SignedRequest,
    compact,
    p256_key,
    sent,
    verification_key,
)

SENDGRID_PRIVATE_KEY = p256_key("herald test-only SendGrid key")
SENDGRID_VERIFICATION_KEY = verification_key(SENDGRID_PRIVATE_KEY)
WEBHOOK_SECRET = SENDGRID_VERIFICATION_KEY
# The key of a sender that is not the tenant's provider (or of another tenant).
STRANGER_SENDGRID_KEY = p256_key("herald test-only stranger key")


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


SENDER = Sender(
    name="sendgrid",
    sign=lambda body, ts, mid: sendgrid_headers(body, ts),
    sign_as_stranger=lambda body, ts, mid: sendgrid_headers(body, ts, STRANGER_SENDGRID_KEY),
    verify=lambda headers, body, now: sendgrid.verify(headers, body, SENDGRID_VERIFICATION_KEY, now),
    parse=lambda body, headers: sendgrid.parse(body),
    headers=(sendgrid.SIGNATURE_HEADER, sendgrid.TIMESTAMP_HEADER),
    signature_header=sendgrid.SIGNATURE_HEADER,
    timestamp_header=sendgrid.TIMESTAMP_HEADER,
)
SAMPLES = (
    SampleSpec("sendgrid-bounce", "", "198.51.100.10", "SendGrid Event API"),
    SampleSpec("sendgrid-batch", "", "198.51.100.10", "SendGrid Event API"),
)


def _event(
    event: dict[str, Any], *, tenant_id: str, job_id: str, to: str, event_id: str, timestamp: int
) -> bytes:
    fields = {"email": to, "timestamp": timestamp, "sg_event_id": event_id}
    return sent([event | fields | {"herald_job_id": job_id, "herald_tenant_id": tenant_id}])


def sendgrid_bounce(*, tenant_id: str, job_id: str, to: str, event_id: str, timestamp: int) -> bytes:
    """The fixture's hard bounce, reported for one job and address of a tenant's."""
    event = json.loads(compact("sendgrid-bounce"))[0]
    return _event(event, tenant_id=tenant_id, job_id=job_id, to=to, event_id=event_id, timestamp=timestamp)


def sendgrid_delivered(*, tenant_id: str, job_id: str, to: str, event_id: str, timestamp: int) -> bytes:
    """The batch fixture's ``delivered`` event, reported for one job and address of a tenant's."""
    [event] = [event for event in json.loads(compact("sendgrid-batch")) if event["event"] == "delivered"]
    return _event(event, tenant_id=tenant_id, job_id=job_id, to=to, event_id=event_id, timestamp=timestamp)


def delivered(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    now = int(time.time())
    body = sendgrid_delivered(
        tenant_id=tenant_id, job_id=job_id, to=to, event_id=uuid.uuid4().hex, timestamp=now
    )
    return SignedRequest(body, sendgrid_headers(body, now))


def bounced(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    now = int(time.time())
    body = sendgrid_bounce(
        tenant_id=tenant_id, job_id=job_id, to=to, event_id=uuid.uuid4().hex, timestamp=now
    )
    return SignedRequest(body, sendgrid_headers(body, now))
