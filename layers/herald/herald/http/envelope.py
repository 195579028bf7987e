"""The response envelopes of the API contract (docs/api.md, "Conventions"), and their JSON text."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from herald.domain.clock import now_iso
from herald.domain.errors import ErrorCode, HeraldError
from herald.http.answers import ErrorEnvelope

# What to do next, where that is another route: the edge's to say, since only it knows the routes.
NEXT_STEPS = {
    ErrorCode.PROVIDER_REQUIRED: "Add one with PUT /api/v1/account/providers/{{provider}}.",
    ErrorCode.PROVIDER_KEY_UNREADABLE: "Store it again with PUT /api/v1/account/providers/{{provider}}.",
    ErrorCode.QUEUE_UNAVAILABLE: "Retry it with POST /api/v1/notifications/jobs/{jobId}/retry.",
}


def message_of(error: HeraldError) -> str:
    step = NEXT_STEPS.get(error.code)
    return error.message if step is None else f"{error.message} {step.format(**error.extra)}"


def success(data: Any) -> dict[str, Any]:
    return {"success": True, "data": data, "timestamp": now_iso()}


def failure(error: HeraldError) -> ErrorEnvelope:
    return ErrorEnvelope.of(error, message_of(error))


def json_text(document: Any) -> str:
    """An envelope (answer models within it as their documents) as compact JSON, characters outside
    ASCII escaped: byte for byte what Herald has always answered."""
    return json.dumps(msgspec.to_builtins(document), separators=(",", ":"))
