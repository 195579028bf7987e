"""Attachments end to end: a PDF sent over HTTP to the local stack is stored once, listed on the
job, and arrives at each vendor's imitation as the recipient's mail would carry it, also when the
first vendor fails and the next one delivers; disallowed and oversized attachments are refused."""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING

import pytest

from herald_harness.tenants import new_tenant
from tests.e2e.clients import address, email, finished_job, sandbox

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

PDF = (
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <</Type /Catalog>> endobj\n"
    + bytes(range(256)) * 64
    + b"\n%%EOF\n"
)
INVOICE = {
    "filename": "invoice-42.pdf",
    "contentType": "application/pdf",
    "content": base64.b64encode(PDF).decode(),
}
SEEN = {
    "filename": "invoice-42.pdf",
    "contentType": "application/pdf",
    "size": len(PDF),
    "sha256": hashlib.sha256(PDF).hexdigest(),
}


@pytest.mark.parametrize(
    ("first", "second"),
    [("SENDGRID", "RESEND"), ("RESEND", "POSTMARK"), ("POSTMARK", "MAILGUN"), ("MAILGUN", "SENDGRID")],
)
def test_a_pdf_falls_back_to_the_next_vendor_with_the_same_file(
    local_stack: RunningStack, first: str, second: str
) -> None:
    """Given a tenant whose first vendor answers 500 for this recipient, When it sends an invoice PDF,
    Then the first vendor was offered it, the second delivers the very same file, and the job lists it."""
    tenant = new_tenant(local_stack, [first, second])
    to = address(f"fail-500-{first.lower()}")

    job = finished_job(tenant, tenant.send("email", email(to, attachments=[INVOICE])))

    assert (job["status"], job["deliveryLogs"][0]["usedProvider"]) == ("completed", second)
    assert job["attachments"] == [
        {"filename": "invoice-42.pdf", "contentType": "application/pdf", "size": len(PDF)}
    ]
    attempts = sandbox(local_stack, "attempts", to=to)
    assert [(a["provider"], a["status"]) for a in attempts][0] == (first.lower(), 500)
    [message] = sandbox(local_stack, "messages", to=to)
    assert (message["provider"], message["attachments"]) == (second.lower(), [SEEN])


def test_a_disallowed_type_is_refused_naming_it(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, ["SENDGRID"])
    page = {
        "filename": "login.html",
        "contentType": "text/html",
        "content": base64.b64encode(b"<form>").decode(),
    }

    answer = tenant.call("POST", "/notifications/email", email(address("html"), attachments=[page]))

    assert answer.status_code == 400
    assert answer.json()["code"] == "validation_error"
    assert answer.json()["error"] == (
        "Invalid request: attachments.0.contentType: content type text/html is not allowed."
    )


def test_an_inline_file_beyond_the_email_routes_body_is_refused(local_stack: RunningStack) -> None:
    """Inline files travel in the request, base64 included, within the route's 5 MiB; larger ones
    come by URL (and are then held to the providers' caps)."""
    tenant = new_tenant(local_stack, ["POSTMARK"])
    huge = {**INVOICE, "content": base64.b64encode(b"\0" * 4_000_000).decode()}

    answer = tenant.call("POST", "/notifications/email", email(address("huge"), attachments=[huge]))

    assert answer.status_code == 413
    assert answer.json()["error"] == "The request body is larger than this route accepts (5242880 bytes)."
