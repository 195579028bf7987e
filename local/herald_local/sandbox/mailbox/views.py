"""Read and reset what the providers received: JSON lists (oldest first, newest last) for tests, and
the HTML mailbox page for people. ``DELETE /_sandbox`` resets everything the sandbox saw."""

from __future__ import annotations

from flask import Blueprint, Response, request

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.replies import empty_reply, json_reply
from herald_local.sandbox.mailbox.page import CONTENT_SECURITY_POLICY, render_mailbox


def _send_filters() -> dict[str, str | None]:
    args = request.args
    return {"to": args.get("to"), "job_id": args.get("jobId"), "provider": args.get("provider")}


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    @blueprint.get("/_sandbox/messages")
    def messages() -> Response:
        return json_reply([message.as_json() for message in store.messages(**_send_filters())])

    @blueprint.get("/_sandbox/attempts")
    def attempts() -> Response:
        return json_reply([attempt.as_json() for attempt in store.attempts(**_send_filters())])

    @blueprint.delete("/_sandbox/messages")
    def clear_messages() -> Response:
        store.clear_messages()
        return empty_reply(204)

    @blueprint.delete("/_sandbox")
    def reset() -> Response:
        store.reset()
        return empty_reply(204)

    @blueprint.get("/")
    @blueprint.get("/_sandbox")
    def mailbox() -> Response:
        page = render_mailbox(store.messages(), store.hooks())
        return Response(
            page,
            content_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )
