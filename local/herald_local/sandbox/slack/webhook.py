"""A Slack incoming webhook, ``POST /slack/<path>``, where the local stack points AlertFunction.

It answers as Slack does: ``200 ok`` (text/plain) for a JSON object with ``text`` or ``blocks``,
``400 invalid_payload`` for anything that is not one, ``400 no_text`` when both are missing. Every
accepted message is kept for ``GET /_sandbox/slack`` (``DELETE`` forgets them) and logged on the
console.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Blueprint, Response, request

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.records import SlackMessage
from herald_local.sandbox.core.replies import empty_reply, json_reply

log = logging.getLogger(__name__)

# What the local stack stores as the webhook URL (Slack's own look: services/<team>/<bot>/<secret>).
WEBHOOK_PATH = "/slack/services/TLOCAL000/BLOCAL000/herald-local-alerts"


def _plain(text: str, status: int) -> Response:
    return Response(text, status=status, content_type="text/plain; charset=utf-8")


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    @blueprint.post("/slack/<path:hook>")
    def incoming_webhook(hook: str) -> Response:
        try:
            body: Any = json.loads(request.get_data() or b"")
        except ValueError:
            return _plain("invalid_payload", 400)
        if not isinstance(body, dict):
            return _plain("invalid_payload", 400)
        if not body.get("text") and not body.get("blocks"):
            return _plain("no_text", 400)
        message = SlackMessage(
            hook=hook, text=str(body.get("text") or ""), blocks=list(body.get("blocks") or [])
        )
        context.store.add_slack_message(message)
        log.info("slack: %s", message.text[:120])
        return _plain("ok", 200)

    @blueprint.get("/_sandbox/slack")
    def slack() -> Response:
        return json_reply([message.as_json() for message in context.store.slack_messages()])

    @blueprint.delete("/_sandbox/slack")
    def clear_slack() -> Response:
        context.store.clear_slack()
        return empty_reply(204)
