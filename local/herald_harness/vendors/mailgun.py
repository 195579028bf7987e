"""Mailgun's side: a test-only webhook signing key, its signature (the hex HMAC-SHA256 of timestamp
and token, carried inside the body), and its events. The sample payloads carry their signature,
made with this key at the samples' signing time."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from typing import Any

from herald.adapters.inbound import mailgun
from herald_harness.senders import SampleSpec, Sender, SignedRequest, compact, sent

MAILGUN_SIGNING_KEY = "herald-test-only-mailgun-signing-key"
WEBHOOK_SECRET = MAILGUN_SIGNING_KEY
STRANGER_MAILGUN_KEY = "herald-test-only-another-accounts-key"


def mailgun_signature(timestamp: int, token: str, key: str = MAILGUN_SIGNING_KEY) -> dict[str, str]:
    """The body's signature object, as Mailgun signs it."""
    digest = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
    return {"timestamp": str(timestamp), "token": token, "signature": digest}


def mailgun_body(
    event_data: dict[str, Any], timestamp: int, token: str | None = None, key: str = MAILGUN_SIGNING_KEY
) -> bytes:
    """A webhook body: the event, signed now with a fresh token unless one is given."""
    signature = mailgun_signature(timestamp, token or secrets.token_hex(25), key)
    return sent({"signature": signature, "event-data": event_data})


def mailgun_event(name: str, *, tenant_id: str, job_id: str, to: str) -> dict[str, Any]:
    """A fixture's event (``mailgun-delivered``, ``mailgun-failed``), reported for one job and address
    of a tenant's, with an id of its own."""
    event: dict[str, Any] = json.loads(compact(name))["event-data"]
    variables = {"herald_job_id": job_id, "herald_tenant_id": tenant_id}
    return event | {"id": uuid.uuid4().hex[:22], "recipient": to, "user-variables": variables}


# The signature is in the body: no header to sign or attack (tests/unit/test_inbound_mailgun.py does).
SENDER = Sender(
    name="mailgun",
    sign=lambda body, ts, mid: {},
    sign_as_stranger=lambda body, ts, mid: {},
    verify=lambda headers, body, now: mailgun.verify(headers, body, MAILGUN_SIGNING_KEY, now),
    parse=mailgun.parse,
    headers=(),
    signature_header="",
    signs_body=False,
    signed_in_body=True,
)
SAMPLES = (
    SampleSpec("mailgun-delivered", "", "198.51.100.30", "mailgun/treq-22.2.0"),
    SampleSpec("mailgun-failed", "", "198.51.100.30", "mailgun/treq-22.2.0"),
)


def _signed(name: str, *, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    event = mailgun_event(name, tenant_id=tenant_id, job_id=job_id, to=to)
    return SignedRequest(mailgun_body(event, int(time.time())), {})


def delivered(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("mailgun-delivered", tenant_id=tenant_id, job_id=job_id, to=to)


def bounced(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("mailgun-failed", tenant_id=tenant_id, job_id=job_id, to=to)
