"""Resend's side: a test-only Svix signing secret, its signer (the svix library), and its events."""

from __future__ import annotations

import json
import time
import uuid

import svix.webhooks

from herald.adapters.inbound import resend
from herald_harness.senders import (
    STRANGER_SECRET,
    SampleSpec,
    Sender,
    SignedRequest,
    compact,
    moment,
    sent,
    whsec,
)

RESEND_SECRET = whsec(b"herald test-only Resend secret!!")
WEBHOOK_SECRET = RESEND_SECRET


def resend_headers(
    body: bytes, timestamp: int, message_id: str, secret: str = RESEND_SECRET
) -> dict[str, str]:
    signature = svix.webhooks.Webhook(secret).sign(message_id, moment(timestamp), body.decode())
    return {"svix-id": message_id, "svix-timestamp": str(timestamp), "svix-signature": signature}


SENDER = Sender(
    name="resend",
    sign=resend_headers,
    sign_as_stranger=lambda body, ts, mid: resend_headers(body, ts, mid, STRANGER_SECRET),
    verify=lambda headers, body, now: resend.verify(headers, body, RESEND_SECRET, now),
    parse=resend.parse,
    headers=("svix-id", "svix-timestamp", "svix-signature"),
    signature_header="svix-signature",
    timestamp_header="svix-timestamp",
    signs_bytes=False,
)
SAMPLES = (
    SampleSpec("resend-delivered", "msg_2pXK7dQ0resendDelivered", "44.228.126.217", "Svix-Webhooks"),
    SampleSpec("resend-bounced", "msg_2pXK7dQ0resendBounced", "44.228.126.217", "Svix-Webhooks"),
)


def resend_event(name: str, *, tenant_id: str, job_id: str, to: str) -> bytes:
    """A Resend fixture's event (``resend-delivered``, ``resend-bounced``), reported for one job and
    address of a tenant's."""
    event = json.loads(compact(name))
    event["data"] |= {"to": [to], "tags": {"herald_job_id": job_id, "herald_tenant_id": tenant_id}}
    return sent(event)


def _signed(name: str, *, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    body = resend_event(name, tenant_id=tenant_id, job_id=job_id, to=to)
    return SignedRequest(body, resend_headers(body, int(time.time()), f"msg_{uuid.uuid4().hex}"))


def delivered(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("resend-delivered", tenant_id=tenant_id, job_id=job_id, to=to)


def bounced(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("resend-bounced", tenant_id=tenant_id, job_id=job_id, to=to)
