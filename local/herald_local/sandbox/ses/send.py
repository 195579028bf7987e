"""Amazon SES v2 imitation under ``/ses``: ``POST /v2/email/outbound-emails`` (SendEmail, REST-JSON),
so free-plan mail and the console's sign-in codes, which Herald sends from the platform's own
address, land in the mailbox like everything else. The local stack points the functions' SES
endpoint here (``AWS_ENDPOINT_URL_SESV2``); requests are SigV4-signed with the stack's fake
credentials, which are not checked.

Errors follow SES's REST-JSON shape: the status, ``x-amzn-ErrorType`` and ``{"message"}``
(``BadRequestException`` for a malformed send and for ``fail-4xx`` recipients, ``TooManyRequests``
for 429, ``InternalFailure`` for 5xx).
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Request, Response, request

from herald.domain.providers import JOB_ID_TAG
from herald_local.sandbox.core.addresses import bare_address, is_address
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.json_fields import as_dict, as_optional_str, as_str, header_list
from herald_local.sandbox.core.records import SeenAttachment, SendSummary
from herald_local.sandbox.core.replies import json_reply, status_phrase
from herald_local.sandbox.core.send_flow import handle_send
from herald_local.sandbox.ses.tenants import SesError, TenantBook
from herald_local.sandbox.ses.tenants import add_routes as add_tenant_routes
from herald_local.sandbox.ses.tenants import error as tenant_error

PROVIDER = "ses"


def error(status: int, code: str, message: str) -> Response:
    return json_reply({"message": message}, status, headers={"x-amzn-ErrorType": f"{code}:"})


def _content(body: dict[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(body.get("Content")).get("Simple"))


class SesApi:
    provider = PROVIDER

    def authenticate(self, req: Request) -> Response | None:
        if not req.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
            return error(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        return None

    def summarize(self, body: Any) -> SendSummary:
        email = as_dict(body)
        simple = _content(email)
        tags = [as_dict(tag) for tag in email.get("EmailTags") or [] if isinstance(tag, dict)]
        job_id = next((as_str(tag.get("Value")) for tag in tags if tag.get("Name") == JOB_ID_TAG), None)
        body_parts = as_dict(simple.get("Body"))
        return SendSummary(
            recipients=[as_str(to) for to in as_dict(email.get("Destination")).get("ToAddresses") or []],
            sender=bare_address(as_str(email.get("FromEmailAddress"))),
            subject=as_str(as_dict(simple.get("Subject")).get("Data")),
            job_id=job_id,
            text=as_optional_str(as_dict(body_parts.get("Text")).get("Data")),
            html=as_optional_str(as_dict(body_parts.get("Html")).get("Data")),
            mail_headers=header_list(simple.get("Headers")),
            # REST-JSON carries a blob in base64.
            attachments=tuple(
                SeenAttachment.of_base64(
                    as_str(item.get("FileName")),
                    as_str(item.get("ContentType")),
                    as_str(item.get("RawContent")),
                )
                for item in simple.get("Attachments") or []
                if isinstance(item, dict)
            ),
        )

    def validate(self, _req: Request, body: Any) -> Response | None:
        if not isinstance(body, dict):
            return error(400, "BadRequestException", "Invalid JSON body")
        summary = self.summarize(body)
        if not summary.sender or not summary.recipients:
            return error(400, "BadRequestException", "Missing required FromEmailAddress or Destination")
        if not all(is_address(address) for address in summary.recipients):
            return error(400, "BadRequestException", "Invalid email address")
        if not summary.subject or not (summary.text or summary.html):
            return error(400, "BadRequestException", "Message content is missing")
        return None

    def error_reply(self, status: int, summary: SendSummary) -> Response:
        if status == 429:
            return error(429, "TooManyRequestsException", "Too many requests")
        if status >= 500:
            return error(status, "InternalFailure", status_phrase(status))
        return error(status, "BadRequestException", f"Message rejected: {', '.join(summary.recipients)}")

    def success_reply(self, message_id: str, _summary: SendSummary) -> Response:
        return json_reply({"MessageId": message_id})

    def new_message_id(self) -> str:
        return f"{uuid.uuid4().hex}-000000"


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    api = SesApi()
    book = TenantBook()
    add_tenant_routes(blueprint, book)

    @blueprint.post("/v2/email/outbound-emails")
    def send_email() -> Response:
        # A send through a tenant needs that tenant, not paused (free-plan mail names one).
        tenant = as_dict(request.get_json(silent=True)).get("TenantName")
        try:
            book.check_send(tenant if isinstance(tenant, str) else None)
        except SesError as failure:
            return tenant_error(failure)
        return handle_send(context, api, request)
