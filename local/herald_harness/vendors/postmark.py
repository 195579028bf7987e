"""Postmark's side: test-only Basic auth credentials for its webhook, and its events."""

from __future__ import annotations

import base64
import json
import uuid

from herald.adapters.inbound import postmark
from herald.adapters.inbound.postmark import BasicCredentials
from herald_harness.senders import SampleSpec, Sender, SignedRequest, compact, sent

POSTMARK_CREDENTIALS = BasicCredentials(password="herald-test-only-postmark-password", username="herald")
# The same credentials as a tenant stores them (user:password).
POSTMARK_SECRET = f"{POSTMARK_CREDENTIALS.username}:{POSTMARK_CREDENTIALS.password}"
WEBHOOK_SECRET = POSTMARK_SECRET


def postmark_headers(credentials: BasicCredentials = POSTMARK_CREDENTIALS) -> dict[str, str]:
    pair = f"{credentials.username or ''}:{credentials.password}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


SENDER = Sender(
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
)
SAMPLES = (
    SampleSpec("postmark-bounce", "", "198.51.100.20", "Postmark"),
    SampleSpec("postmark-delivery", "", "198.51.100.20", "Postmark"),
)


def _signed(name: str, *, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    record = json.loads(compact(name))
    # Bounces carry an id, the dedupe key; deliveries are told apart by what they hold.
    record |= {"Recipient": to, "Email": to, "ID": uuid.uuid4().int % 10**12, "MessageID": str(uuid.uuid4())}
    record["Metadata"] = {"herald_job_id": job_id, "herald_tenant_id": tenant_id}
    return SignedRequest(sent(record), postmark_headers())


def delivered(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("postmark-delivery", tenant_id=tenant_id, job_id=job_id, to=to)


def bounced(*, tenant_id: str, job_id: str, to: str) -> SignedRequest:
    return _signed("postmark-bounce", tenant_id=tenant_id, job_id=job_id, to=to)
