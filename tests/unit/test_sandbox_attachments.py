"""Each vendor's imitation takes an attachment as Herald's own adapter sends it and shows it in the
mailbox by name, type, size and hash: what a recipient would find attached."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from botocore.config import Config
from botocore.session import Session

from herald.adapters.providers.mailgun import MailgunProvider
from herald.adapters.providers.postmark import PostmarkProvider
from herald.adapters.providers.resend import ResendProvider
from herald.adapters.providers.sendgrid import SendGridProvider
from herald.adapters.providers.ses import SesProvider
from herald.domain.attachments import Attachment
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, Routing
from herald_local.sandbox import SandboxServer

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 40
KEY = Credential(api_key="sandbox-attachments-key")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(slow_seconds=0.2) as server:
        yield server


def invoice_email(to: str) -> EmailNotification:
    invoice = Attachment(
        filename="invoice.pdf",
        content_type="application/pdf",
        size=len(PDF),
        sha256=hashlib.sha256(PDF).hexdigest(),
        key="attachments/90d/t-1/x",
        content=PDF,
    )
    return EmailNotification(to=to, subject="Your invoice", body="<p>Attached.</p>", attachments=(invoice,))


def received(sandbox: SandboxServer, to: str) -> list[list[dict[str, Any]]]:
    answer = requests.get(f"{sandbox.base_url}/_sandbox/messages", timeout=5)
    return [message["attachments"] for message in answer.json() if message["recipient"] == to]


def ses_client(sandbox: SandboxServer) -> Any:
    return Session().create_client(
        "sesv2",
        region_name="us-east-1",
        endpoint_url=sandbox.provider_base_url("ses"),
        aws_access_key_id="testing",
        aws_secret_access_key="testing",  # noqa: S106 - the sandbox checks no signature
        config=Config(retries={"max_attempts": 1}),
    )


@pytest.mark.parametrize("vendor", ["sendgrid", "resend", "postmark", "mailgun", "ses"])
def test_each_imitation_receives_the_pdf_as_sent(sandbox: SandboxServer, vendor: str) -> None:
    to = f"{vendor}-invoice@example.com"
    routing = Routing(job_id=f"job-{vendor}", tenant_id="t-1", from_address="billing@acme.test")
    base = sandbox.provider_base_url(vendor)
    providers: dict[str, Any] = {
        "sendgrid": lambda: SendGridProvider(base),
        "resend": lambda: ResendProvider(base),
        "postmark": lambda: PostmarkProvider(base),
        "mailgun": lambda: MailgunProvider(base, base),
        "ses": lambda: SesProvider(lambda: ses_client(sandbox), "billing@acme.test"),
    }
    providers[vendor]().send(invoice_email(to), routing, KEY)
    assert received(sandbox, to) == [
        [
            {
                "filename": "invoice.pdf",
                "contentType": "application/pdf",
                "size": len(PDF),
                "sha256": hashlib.sha256(PDF).hexdigest(),
            }
        ]
    ]
