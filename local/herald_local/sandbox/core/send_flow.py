"""One send request through any imitated provider: check the key, validate the body the way the
provider does, apply the failure the recipient asks for, else keep the message and answer success.
Every request is recorded as an attempt, whatever its outcome."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from flask import Request, Response

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.failures import Failure, failure_for
from herald_local.sandbox.core.records import Attempt, Message, Outcome, SendSummary
from herald_local.sandbox.core.replies import safe_headers

# One line per delivery attempt: the local stack's console shows it (see herald_local.host.console).
log = logging.getLogger(__name__)

# What a send answers when its slow delay ends (the client has long given up by then).
TIMEOUT_STATUS = 504


class SendApi(Protocol):
    """The provider-specific parts of a send; each imitated provider implements it."""

    provider: str  # its service's name

    def authenticate(self, request: Request, /) -> Response | None:
        """The provider's refusal of a missing or unknown key, or None to go on."""

    def summarize(self, body: Any, /) -> SendSummary:
        """Recipients, sender, subject, job id and content, read leniently from any body."""

    def validate(self, request: Request, body: Any, /) -> Response | None:
        """The provider's 400/422 answer to a malformed request, or None when it is well formed."""

    def error_reply(self, status: int, summary: SendSummary, /) -> Response:
        """The provider's real error answer for ``status``."""

    def success_reply(self, message_id: str, summary: SendSummary, /) -> Response:
        """The provider's real success answer."""

    def new_message_id(self) -> str:
        """A fresh id in the provider's format."""


@dataclass(frozen=True)
class SendRequest:
    body: Any  # the parsed JSON, None when the body is not JSON
    summary: SendSummary
    headers: dict[str, str]


def read_send(api: SendApi, request: Request) -> SendRequest:
    body = request.get_json(force=True, silent=True)
    return SendRequest(body, api.summarize(body), safe_headers(request.headers.items(), token_headers=True))


def screen(context: SandboxContext, api: SendApi, request: Request, send: SendRequest) -> Response | None:
    """The provider's refusal (bad key first, then a malformed body), recorded as an attempt."""
    refusal = api.authenticate(request)
    if refusal is None:
        refusal = api.validate(request, send.body)
    if refusal is not None:
        record_attempt(context, api, send, refusal.status_code, Outcome.REJECTED)
    return refusal


def deliver(context: SandboxContext, api: SendApi, send: SendRequest) -> tuple[Response, str | None]:
    """The answer to a well-formed send, and the new message id when it was accepted."""
    outage = context.outage_status
    failure = (
        Failure(outage)
        if outage is not None
        else context.outages.failure(api.provider)
        or failure_for(send.summary.recipients, api.provider, context.flaky)
    )
    if failure is None:
        message_id = api.new_message_id()
        context.store.add_message(Message(message_id, api.provider, send.summary, send.headers, send.body))
        reply = api.success_reply(message_id, send.summary)
        record_attempt(context, api, send, reply.status_code, Outcome.ACCEPTED)
        return reply, message_id
    if failure.status is None:
        record_attempt(context, api, send, TIMEOUT_STATUS, Outcome.TIMEOUT)
        context.wait_slow()
        return api.error_reply(TIMEOUT_STATUS, send.summary), None
    record_attempt(context, api, send, failure.status, Outcome.REJECTED)
    return api.error_reply(failure.status, send.summary), None


def handle_send(context: SandboxContext, api: SendApi, request: Request) -> Response:
    send = read_send(api, request)
    refusal = screen(context, api, request, send)
    if refusal is not None:
        return refusal
    return deliver(context, api, send)[0]


def record_attempt(
    context: SandboxContext, api: SendApi, send: SendRequest, status: int, outcome: Outcome
) -> None:
    context.store.add_attempt(Attempt(api.provider, send.summary, status, outcome))
    log.info(
        "email job %s via %s to %s: %s (%d)",
        send.summary.job_id or "-",
        api.provider,
        send.summary.recipient or "-",
        outcome.value,
        status,
    )
