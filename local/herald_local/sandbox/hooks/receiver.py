"""The outbound-webhook receiver, ``/hooks/<name>`` (any method), the registration of the signing
secrets its checks use, ``POST /_sandbox/secrets {"secret": "whsec_…"}``, and what it received,
``GET /_sandbox/hooks?name=&jobId=`` (oldest first; ``DELETE`` forgets them).

The name chooses the answer: ``fail-<status>[-…]`` answers that status; ``timeout…`` answers 200
only after the slow delay; ``redirect…`` answers 302 to ``/hooks/after-redirect`` (Herald must not
follow it); anything else answers 200 ``{"received": true}``. A name with ``-large`` in it pads
its answer to 5 KB (``fail-503-large``: more than an attempt's 4 KB excerpt keeps). Every delivery is
recorded on arrival.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from flask import Blueprint, Request, Response, request

from herald_local.config import SANDBOX_HOOKS_PATH
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.outages import HOOK_PREFIX
from herald_local.sandbox.core.records import Hook
from herald_local.sandbox.core.replies import empty_reply, json_reply, safe_headers
from herald_local.sandbox.core.send_flow import TIMEOUT_STATUS
from herald_local.sandbox.hooks.signatures import check_all, is_valid_secret

# One line per webhook received: the local stack's console shows it (see herald_local.host.console).
log = logging.getLogger(__name__)

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
REDIRECT_TARGET = "after-redirect"
_FAIL = re.compile(r"^fail-(?P<status>[2-5]\d\d)(?:[-+].*)?$")
LARGE_ANSWER_PADDING = 5000


def _parsed_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:  # also covers bytes that are not UTF-8
        return None


def _lower_case(req: Request) -> dict[str, str]:
    return {name.lower(): value for name, value in req.headers.items()}


def _status_for(name: str) -> int:
    if name.startswith("redirect"):
        return 302
    fail = _FAIL.match(name)
    return int(fail.group("status")) if fail else 200


def _record(context: SandboxContext, name: str, req: Request, status: int) -> None:
    body = req.get_data()
    hook = Hook(
        name=name,
        method=req.method,
        query=req.query_string.decode("latin-1"),
        headers=safe_headers(req.headers.items()),
        body=body.decode("utf-8", errors="replace"),
        json=_parsed_json(body),
        job_id=req.headers.get("webhook-id"),
        signatures=check_all(_lower_case(req), body, context.store.secrets()),
        status=status,
    )
    context.store.add_hook(hook)
    checks = ", ".join(f"{scheme} {_verdict(ok)}" for scheme, ok in hook.signatures.items())
    log.info(
        "webhook job %s to /hooks/%s: answered %d (signatures: %s)", hook.job_id or "-", name, status, checks
    )


def _verdict(valid: bool | None) -> str:
    return "not checked" if valid is None else "valid" if valid else "INVALID"


def _answer(context: SandboxContext, name: str, status: int, req: Request) -> Response:
    if status == 302:
        return Response(b"", status=302, headers={"Location": f"{req.host_url}hooks/{REDIRECT_TARGET}"})
    if name.startswith("timeout"):
        context.wait_slow()
    answer: dict[str, Any] = {"received": status < 300}
    if "-large" in name:
        answer["padding"] = "x" * LARGE_ANSWER_PADDING
    return json_reply(answer, status)


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    @blueprint.route(f"{SANDBOX_HOOKS_PATH}<name>", methods=METHODS, provide_automatic_options=False)
    def receive(name: str) -> Response:
        staged = context.outages.failure(f"{HOOK_PREFIX}{name}")
        if staged is None:
            status = _status_for(name)
            _record(context, name, request, status)
            return _answer(context, name, status, request)
        _record(context, name, request, staged.status or TIMEOUT_STATUS)
        if staged.status is None:
            context.wait_slow()
            return json_reply({"received": False}, TIMEOUT_STATUS)
        return json_reply({"received": False}, staged.status)

    @blueprint.post("/_sandbox/secrets")
    def register_secret() -> Response:
        secret = as_str(as_dict(request.get_json(force=True, silent=True)).get("secret"))
        if not is_valid_secret(secret):
            return json_reply({"error": "secret must be whsec_ followed by base64"}, 400)
        return json_reply({"registered": True, "secrets": context.store.add_secret(secret)}, 201)

    @blueprint.get("/_sandbox/hooks")
    def hooks() -> Response:
        found = context.store.hooks(name=request.args.get("name"), job_id=request.args.get("jobId"))
        return json_reply([hook.as_json() for hook in found])

    @blueprint.delete("/_sandbox/hooks")
    def clear_hooks() -> Response:
        context.store.clear_hooks()
        return empty_reply(204)
