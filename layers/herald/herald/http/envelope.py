"""The response envelopes of the API contract (docs/api.md, "Conventions")."""

from __future__ import annotations

from typing import Any

from msgspec.structs import asdict

from herald.domain.clock import now_iso
from herald.domain.errors import ErrorCode, HeraldError

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


def failure(error: HeraldError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": False,
        "error": message_of(error),
        "code": error.code,
        "timestamp": now_iso(),
    }
    if error.details:
        body["details"] = [asdict(problem) for problem in error.details]
    body.update(error.extra)
    return body
