"""Mailgun imitation under ``/mailgun``: ``POST /v3/<domain>/messages`` with the private API key as
the password of HTTP Basic auth (user ``api``), the message as form fields (domains live in
``domains``, on the same blueprint). Shapes follow Mailgun's API reference: errors are
``{"message": …}``, except a refused key, which is a plain-text 401 "Forbidden".

Error answers chosen by ``fail-<status>``: 400 an invalid ``to``, 401 "Forbidden", 402 a disabled
account, 403 a domain not allowed to send, 404 an unknown domain, 429 too many requests with
``Retry-After``, 5xx Mailgun's ``message`` of the status. Malformed sends get 400 (no ``from``, no
``to``, no ``text`` or ``html``, an address that is not one).
"""

from __future__ import annotations

import base64
import binascii
import secrets
import time
from dataclasses import replace
from email.utils import getaddresses
from typing import Any

from flask import Blueprint, Request, Response, request

from herald_local.sandbox.core.addresses import bare_address, is_address, is_named_address
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import is_sandbox_key
from herald_local.sandbox.core.json_fields import as_dict, as_optional_str, as_str
from herald_local.sandbox.core.records import SeenAttachment, SendSummary
from herald_local.sandbox.core.replies import (
    RATE_LIMIT_WINDOW_SECONDS,
    json_reply,
    safe_headers,
    status_phrase,
)
from herald_local.sandbox.core.send_flow import SendRequest, deliver, screen

PROVIDER = "mailgun"
USER = "api"

_STATUS_MESSAGES: dict[int, str] = {
    400: "to parameter is not a valid address. please check documentation",
    402: "Domain sandbox.mailgun.local is disabled. Upgrade your account to keep sending.",
    403: "Domain sandbox.mailgun.local is not allowed to send: the account is in review",
    404: "Domain not found",
    429: "Too many requests",
}


def error(status: int, message: str) -> Response:
    return json_reply({"message": message}, status)


def forbidden() -> Response:
    return Response("Forbidden", status=401, content_type="text/plain; charset=utf-8")


def authenticate(req: Request) -> Response | None:
    """A refusal unless the Basic auth password is a sandbox key (the user must be ``api``)."""
    scheme, _, encoded = req.headers.get("Authorization", "").partition(" ")
    try:
        user, _, key = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return forbidden()
    return None if scheme.lower() == "basic" and user == USER and is_sandbox_key(key) else forbidden()


def _recipients(value: str) -> list[str]:
    return [address for _, address in getaddresses([value]) if address]


class MailgunApi:
    provider = PROVIDER

    def authenticate(self, req: Request) -> Response | None:
        return authenticate(req)

    def summarize(self, body: Any) -> SendSummary:
        form = as_dict(body)
        return SendSummary(
            recipients=_recipients(as_str(form.get("to"))),
            sender=bare_address(as_str(form.get("from"))),
            subject=as_str(form.get("subject")),
            job_id=as_optional_str(form.get("v:herald_job_id")),
            text=as_optional_str(form.get("text")),
            html=as_optional_str(form.get("html")),
            mail_headers={name[2:]: as_str(value) for name, value in form.items() if name.startswith("h:")},
        )

    def validate(self, _req: Request, body: Any) -> Response | None:
        form = as_dict(body)
        if not as_str(form.get("from")):
            return error(400, "from parameter is missing")
        if not is_named_address(as_str(form.get("from"))):
            return error(400, "from parameter is not a valid address. please check documentation")
        recipients = _recipients(as_str(form.get("to")))
        if not recipients:
            return error(400, "to parameter is missing")
        if not all(is_address(address) for address in recipients):
            return error(400, _STATUS_MESSAGES[400])
        if not (form.get("text") or form.get("html")):
            return error(400, "Need at least one of 'text', 'html' or 'template' parameters specified")
        return None

    def error_reply(self, status: int, _summary: SendSummary) -> Response:
        if status == 401:
            return forbidden()
        reply = error(status, _STATUS_MESSAGES.get(status, status_phrase(status)))
        if status == 429:
            reply.headers["Retry-After"] = str(RATE_LIMIT_WINDOW_SECONDS)
        return reply

    def success_reply(self, message_id: str, _summary: SendSummary) -> Response:
        return json_reply({"id": message_id, "message": "Queued. Thank you."})

    def new_message_id(self) -> str:
        return f"<{time.strftime('%Y%m%d%H%M%S')}.{secrets.token_hex(8)}@sandbox.mailgun.local>"


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    api = MailgunApi()

    @blueprint.post("/v3/<domain>/messages")
    def send_message(domain: str) -> Response:  # noqa: ARG001 - the domain sends whatever it is
        form = request.form.to_dict()
        # Files come as multipart parts named ``attachment``, one per file.
        files = tuple(
            SeenAttachment(part.filename or "", part.mimetype, part.read())
            for part in request.files.getlist("attachment")
        )
        summary = replace(api.summarize(form), attachments=files)
        send = SendRequest(form, summary, safe_headers(request.headers.items(), token_headers=True))
        refusal = screen(context, api, request, send)
        return refusal if refusal is not None else deliver(context, api, send)[0]
