"""The response envelopes of the API contract (docs/api.md, "Conventions")."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from herald.domain.clock import now_iso
from herald.domain.errors import HeraldError


def success(data: Any) -> dict[str, Any]:
    return {"success": True, "data": data, "timestamp": now_iso()}


def failure(error: HeraldError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": False,
        "error": error.message,
        "code": error.code,
        "timestamp": now_iso(),
    }
    if error.details:
        body["details"] = [asdict(problem) for problem in error.details]
    body.update(error.extra)
    return body
