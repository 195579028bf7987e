"""Resend imitation under ``/resend``: ``POST /emails`` with ``Idempotency-Key`` (domains live in
``domains``, on the same blueprint). Shapes follow Resend's API reference; every
answer carries the ``ratelimit-*`` headers.

Keys: no ``Authorization`` → 401 ``missing_api_key``; an unknown key → 401 ``validation_error``
"API key is invalid" on the send endpoint, 403 ``invalid_api_key`` elsewhere (Resend's pages have
used 400, 401 and 403 over time; clients must treat all as a bad key).

Error answers chosen by ``fail-<status>`` (body ``{statusCode, message, name}``): 400/422
``validation_error`` (invalid ``to``), 401 ``validation_error``, 403 ``validation_error`` (domain
not verified), 404 ``not_found``, 409 ``invalid_idempotent_request``, 429 ``rate_limit_exceeded``
with ``retry-after``, 500 ``internal_server_error``, 503 ``service_unavailable``, any other 5xx
``application_error``, any other 4xx ``invalid_parameter``.

Idempotency: same key + same body bytes within 24 h → the first answer's id and no second message;
same key + other body → 409 ``invalid_idempotent_request``; while the first is still in flight (a
slow answer) → 409 ``concurrent_idempotent_requests``; a failed first request frees its key.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

from flask import Blueprint, Request, Response, request

from herald_local.sandbox.core.addresses import bare_address, is_named_address
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import bearer_token, is_sandbox_key
from herald_local.sandbox.core.json_fields import as_dict, as_dicts, as_optional_str, as_str, header_object
from herald_local.sandbox.core.records import Outcome, SeenAttachment, SendSummary
from herald_local.sandbox.core.replies import RATE_LIMIT_WINDOW_SECONDS, json_reply
from herald_local.sandbox.core.send_flow import SendRequest, deliver, read_send, record_attempt, screen
from herald_local.sandbox.core.store import KeyConflict, Replay

PROVIDER = "resend"

_RATE_LIMIT = 5
_MAX_RECIPIENTS = 50
_TAG_TEXT = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
_ADDRESS_FORMAT = (
    "The email address needs to follow the `email@example.com` or `Name <email@example.com>` format."
)

_STATUS_ERRORS: dict[int, tuple[str, str]] = {
    400: ("validation_error", f"Invalid `to` field. {_ADDRESS_FORMAT}"),
    401: ("validation_error", "API key is invalid"),
    403: (
        "validation_error",
        "The domain is not verified. Please, add and verify your domain on https://resend.com/domains",
    ),
    404: ("not_found", "The requested endpoint does not exist."),
    409: ("invalid_idempotent_request", "Same idempotency key used with a different request payload."),
    422: ("validation_error", f"Invalid `to` field. {_ADDRESS_FORMAT}"),
    429: ("rate_limit_exceeded", "Too many requests. You can only make 5 requests per second."),
    500: ("internal_server_error", "An unexpected error occurred."),
    503: ("service_unavailable", "The service is temporarily unavailable. Please try again later."),
}
_CONFLICTS = {
    "invalid_idempotent_request": "Same idempotency key used with a different request payload.",
    "concurrent_idempotent_requests": (
        "Same idempotency key used while original request is still in progress."
    ),
}


def error(status: int, name: str, message: str) -> Response:
    return json_reply({"statusCode": status, "message": message, "name": name}, status)


def authenticate(req: Request, send_endpoint: bool) -> Response | None:
    key = bearer_token(req)
    if key is None:
        message = (
            "Missing API key in the authorization header. Include the following header"
            " Authorization: Bearer YOUR_API_KEY in the request."
        )
        return error(401, "missing_api_key", message)
    if is_sandbox_key(key):
        return None
    return (
        error(401, "validation_error", "API key is invalid")
        if send_endpoint
        else error(403, "invalid_api_key", "API key is invalid")
    )


def _addresses(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


class ResendApi:
    provider = PROVIDER

    def authenticate(self, req: Request) -> Response | None:
        return authenticate(req, send_endpoint=True)

    def summarize(self, body: Any) -> SendSummary:
        email = as_dict(body)
        tags = {as_str(tag.get("name")): tag.get("value") for tag in as_dicts(email.get("tags"))}
        return SendSummary(
            recipients=[bare_address(address) for address in _addresses(email.get("to"))],
            sender=bare_address(as_str(email.get("from"))),
            subject=as_str(email.get("subject")),
            job_id=as_optional_str(tags.get("herald_job_id")),
            text=as_optional_str(email.get("text")),
            html=as_optional_str(email.get("html")),
            mail_headers=header_object(email.get("headers")),
            attachments=tuple(
                SeenAttachment.of_base64(
                    as_str(item.get("filename")),
                    as_str(item.get("content_type")),
                    as_str(item.get("content")),
                )
                for item in as_dicts(email.get("attachments"))
            ),
        )

    def validate(self, req: Request, body: Any) -> Response | None:
        key = req.headers.get("Idempotency-Key")
        if key is not None and not 1 <= len(key) <= 256:
            return error(400, "invalid_idempotency_key", "The key must be between 1-256 chars.")
        if not isinstance(body, dict):
            return error(400, "validation_error", "Invalid JSON body.")
        return _missing_field(body) or _invalid_field(body)

    def error_reply(self, status: int, _summary: SendSummary) -> Response:
        default = (
            ("application_error", "An unexpected error occurred.")
            if status >= 500
            else ("invalid_parameter", "Invalid request.")
        )
        name, message = _STATUS_ERRORS.get(status, default)
        reply = error(status, name, message)
        if status == 429:
            reply.headers["retry-after"] = str(RATE_LIMIT_WINDOW_SECONDS)
        return reply

    def success_reply(self, message_id: str, _summary: SendSummary) -> Response:
        return json_reply({"id": message_id})

    def new_message_id(self) -> str:
        return str(uuid.uuid4())


def _missing_field(body: dict[str, Any]) -> Response | None:
    for field in ("from", "to", "subject"):
        if not body.get(field):
            return error(422, "missing_required_field", f"Missing `{field}` field.")
    if not any(body.get(field) for field in ("html", "text", "template", "react")):
        return error(422, "missing_required_field", "Missing `html` or `text` field.")
    return None


def _invalid_field(body: dict[str, Any]) -> Response | None:
    if not is_named_address(as_str(body.get("from"))):
        return error(422, "validation_error", f"Invalid `from` field. {_ADDRESS_FORMAT}")
    recipients = _addresses(body.get("to"))
    if not recipients or not all(is_named_address(address) for address in recipients):
        return error(422, "validation_error", f"Invalid `to` field. {_ADDRESS_FORMAT}")
    if len(recipients) > _MAX_RECIPIENTS:
        return error(422, "validation_error", f"Too many recipients. The maximum is {_MAX_RECIPIENTS}.")
    tags = body.get("tags", [])
    if not isinstance(tags, list) or not all(_valid_tag(tag) for tag in tags):
        return error(
            422,
            "validation_error",
            "Tags should only contain ASCII letters, numbers, underscores, or dashes.",
        )
    return None


def _valid_tag(tag: Any) -> bool:
    return isinstance(tag, dict) and all(_TAG_TEXT.match(as_str(tag.get(part))) for part in ("name", "value"))


def _send_once(context: SandboxContext, api: ResendApi, send: SendRequest, key: str, body: bytes) -> Response:
    """Resend's idempotency: the first answer for a key and body is the only one that sends."""
    store = context.store
    reservation = store.reserve_key(key, hashlib.sha256(body).hexdigest())
    if isinstance(reservation, Replay):
        record_attempt(context, api, send, 200, Outcome.REPLAYED)
        return api.success_reply(reservation.message_id, send.summary)
    if isinstance(reservation, KeyConflict):
        record_attempt(context, api, send, 409, Outcome.REJECTED)
        return error(409, reservation.name, _CONFLICTS[reservation.name])
    reply, message_id = deliver(context, api, send)
    if message_id is None:
        store.release_key(key)
    else:
        store.complete_key(key, message_id)
    return reply


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    api = ResendApi()

    @blueprint.after_request
    def rate_limit_headers(reply: Response) -> Response:
        remaining = 0 if reply.status_code == 429 else _RATE_LIMIT - 1
        reply.headers["ratelimit-limit"] = str(_RATE_LIMIT)
        reply.headers["ratelimit-remaining"] = str(remaining)
        reply.headers["ratelimit-reset"] = str(RATE_LIMIT_WINDOW_SECONDS)
        reply.headers["ratelimit-policy"] = f"{_RATE_LIMIT};w={RATE_LIMIT_WINDOW_SECONDS}"
        return reply

    @blueprint.post("/emails")
    def send_email() -> Response:
        send = read_send(api, request)
        refusal = screen(context, api, request, send)
        if refusal is not None:
            return refusal
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return deliver(context, api, send)[0]
        return _send_once(context, api, send, key, request.get_data())
