"""SendGrid v3 imitation under ``/sendgrid``: mail send, key scopes (domain authentication lives in
``domains``, on the same blueprint). Shapes follow SendGrid's v3 API reference.

Error answers chosen by ``fail-<status>`` (body ``{"errors": [{"field", "message"}]}``):
400 invalid recipient (``personalizations.0.to.0.email``), 401 "authorization required",
403 unverified Sender Identity (``from``), 413 "content too large", 429 "too many requests" with
``X-RateLimit-Limit/Remaining/Reset`` (epoch seconds), 500 "internal server error"; any other status
carries its lower-cased reason phrase.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from flask import Blueprint, Request, Response, request

from herald_local.sandbox.core.addresses import bare_address, is_address
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import bearer_token, is_sandbox_key
from herald_local.sandbox.core.json_fields import (
    as_dict,
    as_dicts,
    as_optional_str,
    as_str,
    header_object,
    json_type,
)
from herald_local.sandbox.core.records import SeenAttachment, SendSummary
from herald_local.sandbox.core.replies import (
    RATE_LIMIT_WINDOW_SECONDS,
    empty_reply,
    json_reply,
    status_phrase,
)
from herald_local.sandbox.core.send_flow import handle_send

PROVIDER = "sendgrid"

_MAIL_ERRORS_HELP = "http://sendgrid.com/docs/API_Reference/Web_API_v3/Mail/errors.html"
_RATE_LIMIT = 600
SCOPES = ["mail.send", "whitelabel.create", "whitelabel.delete", "whitelabel.read", "whitelabel.update"]

_STATUS_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("Does not contain a valid address.", "personalizations.0.to.0.email"),
    401: ("authorization required", None),
    403: (
        "The from address does not match a verified Sender Identity. Mail cannot be sent until this error"
        " is resolved. Visit https://sendgrid.com/docs/for-developers/sending-email/sender-identity/ to see"
        " the Sender Identity requirements",
        "from",
    ),
    413: ("content too large", None),
    429: ("too many requests", None),
    500: ("internal server error", None),
}


def errors_reply(
    status: int, problems: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> Response:
    return json_reply({"errors": problems}, status, headers)


def _problem(message: str, field: str | None, help_anchor: str | None = None) -> dict[str, Any]:
    return {
        "message": message,
        "field": field,
        "help": f"{_MAIL_ERRORS_HELP}#{help_anchor}" if help_anchor else None,
    }


def unauthorized_reply() -> Response:
    return errors_reply(401, [{"field": None, "message": "authorization required"}])


def authenticate(req: Request) -> Response | None:
    return None if is_sandbox_key(bearer_token(req)) else unauthorized_reply()


def rate_limit_headers() -> dict[str, str]:
    reset = int(time.time()) + RATE_LIMIT_WINDOW_SECONDS
    return {
        "X-RateLimit-Limit": str(_RATE_LIMIT),
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(reset),
    }


class SendGridApi:
    provider = PROVIDER

    def authenticate(self, req: Request) -> Response | None:
        return authenticate(req)

    def summarize(self, body: Any) -> SendSummary:
        message = as_dict(body)
        personalizations = as_dicts(message.get("personalizations"))
        contents = {
            as_str(item.get("type")): as_str(item.get("value")) for item in as_dicts(message.get("content"))
        }
        return SendSummary(
            recipients=[
                bare_address(as_str(to.get("email")))
                for item in personalizations
                for to in as_dicts(item.get("to"))
            ],
            sender=as_str(as_dict(message.get("from")).get("email")),
            subject=as_str(message.get("subject"))
            or next((as_str(item.get("subject")) for item in personalizations if item.get("subject")), ""),
            job_id=_job_id(message, personalizations),
            text=contents.get("text/plain"),
            html=contents.get("text/html"),
            mail_headers=header_object(message.get("headers")),
            attachments=tuple(
                SeenAttachment.of_base64(
                    as_str(item.get("filename")), as_str(item.get("type")), as_str(item.get("content"))
                )
                for item in as_dicts(message.get("attachments"))
            ),
        )

    def validate(self, req: Request, body: Any) -> Response | None:
        if req.mimetype != "application/json":
            return errors_reply(400, [_problem("Content-Type should be application/json.", None)])
        if not isinstance(body, dict):
            return errors_reply(400, [_problem("Bad Request", None)])
        problems = _personalization_problems(body) + _sender_problems(body) + _content_problems(body)
        return errors_reply(400, problems) if problems else None

    def error_reply(self, status: int, _summary: SendSummary) -> Response:
        message, field = _STATUS_ERRORS.get(status, (status_phrase(status).lower(), None))
        return errors_reply(
            status, [{"field": field, "message": message}], rate_limit_headers() if status == 429 else None
        )

    def success_reply(self, message_id: str, _summary: SendSummary) -> Response:
        return empty_reply(202, {"X-Message-Id": message_id})

    def new_message_id(self) -> str:
        return secrets.token_urlsafe(16)[:22]


def _job_id(message: dict[str, Any], personalizations: list[dict[str, Any]]) -> str | None:
    """A personalization's ``custom_args`` win over the message-level ones, as at SendGrid."""
    for item in personalizations:
        job_id = as_optional_str(as_dict(item.get("custom_args")).get("herald_job_id"))
        if job_id is not None:
            return job_id
    return as_optional_str(as_dict(message.get("custom_args")).get("herald_job_id"))


def _personalization_problems(body: dict[str, Any]) -> list[dict[str, Any]]:
    personalizations = as_dicts(body.get("personalizations"))
    if not personalizations:
        return [
            _problem(
                "The personalizations field is required and must have at least one personalization.",
                "personalizations",
                "-Personalizations-Errors",
            )
        ]
    problems: list[dict[str, Any]] = []
    for index, item in enumerate(personalizations):
        problems += _recipient_problems(index, as_dicts(item.get("to")))
        problems += _custom_args_problems(f"personalizations.{index}.custom_args", item.get("custom_args"))
    return problems + _custom_args_problems("custom_args", body.get("custom_args"))


def _recipient_problems(index: int, recipients: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not recipients:
        message = (
            "The to array is required for all personalization objects, and must have at least one email"
            " object with a valid email address."
        )
        return [_problem(message, f"personalizations.{index}.to", "message.personalizations.to")]
    return [
        _problem(
            "Does not contain a valid address.",
            f"personalizations.{index}.to.{position}.email",
            "message.personalizations.to",
        )
        for position, to in enumerate(recipients)
        if not is_address(as_str(to.get("email")))
    ]


def _custom_args_problems(field: str, custom_args: Any) -> list[dict[str, Any]]:
    return [
        _problem(f"Invalid type. Expected: string, given: {json_type(value)}.", f"{field}.{name}")
        for name, value in as_dict(custom_args).items()
        if not isinstance(value, str)
    ]


def _sender_problems(body: dict[str, Any]) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    sender = as_str(as_dict(body.get("from")).get("email"))
    if not sender:
        message = (
            "The from object must be provided for every email send. It is an object that requires the email"
            " parameter, but may also contain a name parameter."
        )
        problems.append(_problem(message, "from.email", "message.from"))
    elif not is_address(sender):
        problems.append(
            _problem("The from email does not contain a valid address.", "from.email", "message.from")
        )
    every_personalization_has_subject = all(
        as_str(item.get("subject")) for item in as_dicts(body.get("personalizations"))
    )
    if not as_str(body.get("subject")) and not every_personalization_has_subject:
        message = (
            "The subject is required. You can get around this requirement if you use a template with a"
            " subject defined or if every personalization has a subject defined."
        )
        problems.append(_problem(message, "subject", "message.subject"))
    return problems


def _content_problems(body: dict[str, Any]) -> list[dict[str, Any]]:
    contents = as_dicts(body.get("content"))
    if not contents and not body.get("template_id"):
        message = (
            "Unless a valid template_id is provided, the content parameter is required. There must be at"
            " least one defined content block. We typically suggest both text/plain and text/html blocks are"
            " included, but only one block is required."
        )
        return [_problem(message, "content", "message.content")]
    problems = [
        _problem(
            "The content value must be a string at least one character in length.", f"content.{index}.value"
        )
        for index, item in enumerate(contents)
        if not as_str(item.get("value"))
    ]
    types = [as_str(item.get("type")) for item in contents]
    if (
        "text/plain" in types
        and "text/html" in types
        and types.index("text/html") < types.index("text/plain")
    ):
        message = (
            "The text/plain content type must be first, followed by text/html, followed by any other content."
        )
        problems.append(_problem(message, "content", "message.content"))
    return problems


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    api = SendGridApi()

    @blueprint.post("/v3/mail/send")
    def mail_send() -> Response:
        return handle_send(context, api, request)

    @blueprint.get("/v3/scopes")
    def scopes() -> Response:
        refusal = authenticate(request)
        return refusal if refusal is not None else json_reply({"scopes": SCOPES})
