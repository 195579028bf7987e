"""The outage switches: ``PUT /_sandbox/outage {"status": 503}`` makes every provider answer that
status to every send until ``DELETE /_sandbox/outage``; ``PUT /_sandbox/outages/<target>`` stages an
outage of one provider or hook name for a while, ``DELETE`` lifts it and ``GET /_sandbox/outages``
lists those in force (see ``core.outages``)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.failures import Failure
from herald_local.sandbox.core.json_fields import as_dict
from herald_local.sandbox.core.outages import target_key
from herald_local.sandbox.core.replies import empty_reply, json_reply


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
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
        key = target_key(target, context.providers)
        if key is None:
            providers = ", ".join(name.upper() for name in context.providers)
            return json_reply({"error": f"target must be {providers} or hook:<name>"}, 400)
        if not timeout and (not isinstance(status, int) or not 400 <= status <= 599):
            return json_reply({"error": "status must be an HTTP error status (400-599)"}, 400)
        if seconds is not None and (not isinstance(seconds, int | float) or seconds <= 0):
            return json_reply({"error": "seconds must be a positive number"}, 400)
        outage = context.outages.start(key, Failure(None if timeout else status), seconds)
        return json_reply(outage.as_json(key))

    @blueprint.delete("/_sandbox/outages/<target>")
    def end_target_outage(target: str) -> Response:
        context.outages.lift(target_key(target, context.providers) or target)
        return empty_reply(204)
