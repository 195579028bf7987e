"""Read and reset what the sandbox has seen: JSON lists (oldest first, newest last) for tests, and
the HTML mailbox page for people."""

from __future__ import annotations

from flask import Blueprint, Response, request

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.failures import Failure
from herald_local.sandbox.core.json_fields import as_dict
from herald_local.sandbox.core.outages import target_key
from herald_local.sandbox.core.replies import empty_reply, json_reply
from herald_local.sandbox.mailbox.page import CONTENT_SECURITY_POLICY, render_mailbox


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    def send_filters() -> dict[str, str | None]:
        args = request.args
        return {"to": args.get("to"), "job_id": args.get("jobId"), "provider": args.get("provider")}

    @blueprint.get("/_sandbox/messages")
    def messages() -> Response:
        return json_reply([message.as_json() for message in store.messages(**send_filters())])

    @blueprint.get("/_sandbox/attempts")
    def attempts() -> Response:
        return json_reply([attempt.as_json() for attempt in store.attempts(**send_filters())])

    @blueprint.get("/_sandbox/hooks")
    def hooks() -> Response:
        found = store.hooks(name=request.args.get("name"), job_id=request.args.get("jobId"))
        return json_reply([hook.as_json() for hook in found])

    @blueprint.put("/_sandbox/outage")
    def start_outage() -> Response:
        status = as_dict(request.get_json(force=True, silent=True)).get("status", 503)
        if not isinstance(status, int) or not 400 <= status <= 599:
            return json_reply({"error": "status must be an HTTP error status (400-599)"}, 400)
        context.outage_status = status
        return json_reply({"outage": status})

    @blueprint.delete("/_sandbox/outage")
    def end_outage() -> Response:
        context.outage_status = None
        return empty_reply(204)

    @blueprint.get("/_sandbox/outages")
    def outages() -> Response:
        return json_reply([outage.as_json(target) for target, outage in context.outages.in_force().items()])

    @blueprint.put("/_sandbox/outages/<target>")
    def start_target_outage(target: str) -> Response:
        body = as_dict(request.get_json(force=True, silent=True))
        status, seconds, timeout = body.get("status", 503), body.get("seconds"), body.get("timeout") is True
        key = target_key(target)
        if key is None:
            return json_reply({"error": "target must be SENDGRID, RESEND, POSTMARK, SES or hook:<name>"}, 400)
        if not timeout and (not isinstance(status, int) or not 400 <= status <= 599):
            return json_reply({"error": "status must be an HTTP error status (400-599)"}, 400)
        if seconds is not None and (not isinstance(seconds, int | float) or seconds <= 0):
            return json_reply({"error": "seconds must be a positive number"}, 400)
        outage = context.outages.start(key, Failure(None if timeout else status), seconds)
        return json_reply(outage.as_json(key))

    @blueprint.delete("/_sandbox/outages/<target>")
    def end_target_outage(target: str) -> Response:
        context.outages.lift(target_key(target) or target)
        return empty_reply(204)

    @blueprint.get("/_sandbox/slack")
    def slack() -> Response:
        return json_reply([message.as_json() for message in store.slack_messages()])

    @blueprint.delete("/_sandbox/slack")
    def clear_slack() -> Response:
        store.clear_slack()
        return empty_reply(204)

    @blueprint.delete("/_sandbox/messages")
    def clear_messages() -> Response:
        store.clear_messages()
        return empty_reply(204)

    @blueprint.delete("/_sandbox/hooks")
    def clear_hooks() -> Response:
        store.clear_hooks()
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
