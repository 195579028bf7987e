"""Postmark imitation under ``/postmark``: ``POST /email`` and ``GET /server`` with the server token
(domains, with the account token, live in ``domains``, on the same blueprint).
Shapes follow Postmark's API reference; errors are ``{ErrorCode, Message}``.

Error answers chosen by ``fail-<status>``: 401 ErrorCode 10, 403 an HTML page without ErrorCode
(Postmark's network layer answers it, not the API), 422 ErrorCode 406 "Inactive recipient",
429 ErrorCode 429, other 4xx ErrorCode 300 "Invalid email request", 5xx ErrorCode = the status
(Postmark documents no 5xx body; this one is a guess). Malformed sends get 422 with ErrorCode 409
(not JSON), 402 (invalid JSON) or 300 (bad From/To, no body).
"""

from __future__ import annotations

import uuid
from email.utils import getaddresses
from typing import Any

from flask import Blueprint, Request, Response, request

from herald.domain.clock import utc_now
from herald_local.sandbox.core.addresses import bare_address, is_address, is_named_address
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import is_sandbox_key
from herald_local.sandbox.core.json_fields import as_dict, as_dicts, as_optional_str, as_str, header_list
from herald_local.sandbox.core.records import SeenAttachment, SendSummary
from herald_local.sandbox.core.replies import json_reply, status_phrase
from herald_local.sandbox.core.send_flow import handle_send

PROVIDER = "postmark"

SERVER_TOKEN_HEADER = "X-Postmark-Server-Token"  # noqa: S105 - a header name, not a token
ACCOUNT_TOKEN_HEADER = "X-Postmark-Account-Token"  # noqa: S105 - a header name, not a token

_FIREWALL_PAGE = "<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1></body></html>"
_INACTIVE = (
    "You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: {to}."
    " Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual"
    " suppression."
)


def error(status: int, code: int, message: str) -> Response:
    return json_reply({"ErrorCode": code, "Message": message}, status)


def authenticate(req: Request, header: str) -> Response | None:
    return None if is_sandbox_key(req.headers.get(header)) else error(401, 10, "Bad or missing API token")


def _recipients(value: str) -> list[str]:
    return [address for _, address in getaddresses([value]) if address]


class PostmarkApi:
    provider = PROVIDER

    def authenticate(self, req: Request) -> Response | None:
        return authenticate(req, SERVER_TOKEN_HEADER)

    def summarize(self, body: Any) -> SendSummary:
        email = as_dict(body)
        return SendSummary(
            recipients=_recipients(as_str(email.get("To"))),
            sender=bare_address(as_str(email.get("From"))),
            subject=as_str(email.get("Subject")),
            job_id=as_optional_str(as_dict(email.get("Metadata")).get("herald_job_id")),
            text=as_optional_str(email.get("TextBody")),
            html=as_optional_str(email.get("HtmlBody")),
            mail_headers=header_list(email.get("Headers")),
            attachments=tuple(
                SeenAttachment.of_base64(
                    as_str(item.get("Name")), as_str(item.get("ContentType")), as_str(item.get("Content"))
                )
                for item in as_dicts(email.get("Attachments"))
            ),
        )

    def validate(self, req: Request, body: Any) -> Response | None:
        if req.mimetype != "application/json":
            return error(422, 409, "JSON required")
        if not isinstance(body, dict):
            return error(422, 402, "Received invalid JSON input.")
        return _field_problem(body)

    def error_reply(self, status: int, summary: SendSummary) -> Response:
        if status == 401:
            return error(401, 10, "Bad or missing API token")
        if status == 403:
            return Response(_FIREWALL_PAGE, status=403, content_type="text/html")
        if status == 422:
            return error(422, 406, _INACTIVE.format(to=", ".join(summary.recipients)))
        if status == 429:
            return error(429, 429, "Rate limit exceeded")
        if status >= 500:
            return error(status, status, status_phrase(status))
        return error(status, 300, "Invalid email request")

    def success_reply(self, message_id: str, summary: SendSummary) -> Response:
        submitted = utc_now().strftime("%Y-%m-%dT%H:%M:%S.%f") + "0+00:00"  # .NET's 7 fraction digits
        to = ", ".join(summary.recipients)
        return json_reply(
            {"To": to, "SubmittedAt": submitted, "MessageID": message_id, "ErrorCode": 0, "Message": "OK"}
        )

    def new_message_id(self) -> str:
        return str(uuid.uuid4())


def _field_problem(body: dict[str, Any]) -> Response | None:
    sender, to = as_str(body.get("From")), as_str(body.get("To"))
    recipients = _recipients(to)
    if not is_named_address(sender):
        return error(422, 300, f"Invalid 'From' address: '{sender}'.")
    if not to.strip():
        return error(422, 300, "Zero recipients specified")
    if not recipients or not all(is_address(address) for address in recipients):
        return error(422, 300, f"Invalid 'To' address: '{to}'.")
    if not (as_str(body.get("HtmlBody")) or as_str(body.get("TextBody"))):
        return error(422, 300, "Provide either email TextBody or HtmlBody or both.")
    return None


def _server(token: str) -> dict[str, Any]:
    """Postmark's server object; like the real one it shows the server's tokens in clear."""
    return {
        "ID": 4_170_209,
        "Name": "Herald Sandbox",
        "ApiTokens": [token],
        "Color": "blue",
        "SmtpApiActivated": True,
        "RawEmailEnabled": False,
        "DeliveryType": "Live",
        "ServerLink": "https://account.postmarkapp.com/servers/4170209/streams",
        "InboundAddress": "sandbox@inbound.postmarkapp.com",
        "InboundHookUrl": "",
        "BounceHookUrl": "",
        "OpenHookUrl": "",
        "DeliveryHookUrl": "",
        "PostFirstOpenOnly": False,
        "InboundDomain": "",
        "InboundHash": "sandbox",
        "InboundSpamThreshold": 0,
        "TrackOpens": False,
        "TrackLinks": "None",
        "IncludeBounceContentInHook": True,
        "ClickHookUrl": "",
        "EnableSmtpApiErrorHooks": False,
    }


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    api = PostmarkApi()

    @blueprint.post("/email")
    def send_email() -> Response:
        return handle_send(context, api, request)

    @blueprint.get("/server")
    def server() -> Response:
        refusal = authenticate(request, SERVER_TOKEN_HEADER)
        return refusal if refusal is not None else json_reply(_server(request.headers[SERVER_TOKEN_HEADER]))
