"""The response envelopes of the API contract (docs/api.md, "Conventions"), their JSON text, and
``Answer``, the base of every answer model (``herald.http.answers``)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from herald.domain.clock import now_iso
from herald.domain.errors import ErrorCode, FieldProblem, HeraldError

Timestamp = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]


class Answer(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    """Every field a body has is declared: the schema forbids any other (the contract checks)."""


class PayloadError(Answer):
    path: Annotated[str, Meta(description="A JSON Pointer into the payload; empty: the payload itself")]
    message: str


class ErrorEnvelope(Answer):
    success: Literal[False]
    error: Annotated[
        str, Meta(description="One sentence for a person; for invalid input it names every problem")
    ]
    code: ErrorCode
    timestamp: Timestamp
    details: Annotated[list[FieldProblem] | UnsetType, Meta(description="Every invalid field")] = UNSET
    message: Annotated[list[str] | UnsetType, Meta(description="The same problems, one line each")] = UNSET
    retry_after: Annotated[int | UnsetType, Meta(description="On 429: seconds to wait, as Retry-After")] = (
        UNSET
    )
    job_id: Annotated[str | UnsetType, Meta(description="On duplicate_request and queue_unavailable")] = UNSET
    usage: Annotated[int | UnsetType, Meta(description="On quota_exceeded: used this period")] = UNSET
    limit: Annotated[
        int | UnsetType,
        Meta(description="On quota_exceeded: the period's quota; on attachment_too_large: the cap in bytes"),
    ] = UNSET
    resets_at: Annotated[Timestamp | UnsetType, Meta(description="On quota_exceeded: the period's end")] = (
        UNSET
    )
    provider: Annotated[
        str | UnsetType,
        Meta(description="On attachment_too_large: the provider whose message size sets the cap"),
    ] = UNSET
    required_scope: Annotated[
        str | UnsetType,
        Meta(description="On insufficient_scope: the narrowest scope that allows the request"),
    ] = UNSET
    errors: Annotated[
        list[PayloadError] | UnsetType,
        Meta(description="On event_payload_invalid: how the payload breaks its type's schema (10 at most)"),
    ] = UNSET


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
    """The error's envelope; its ``extra`` are fields of the envelope, by their names."""
    fields = {"success": False, "error": message_of(error), "code": error.code, "timestamp": now_iso()}
    if error.details:
        fields["details"] = error.details
    return msgspec.convert({**fields, **error.extra}, ErrorEnvelope)


def json_text(document: Any) -> str:
    """An envelope (answer models within it as their documents) as compact JSON, characters outside
    ASCII escaped: byte for byte what Herald has always answered."""
    return json.dumps(msgspec.to_builtins(document), separators=(",", ":"))
