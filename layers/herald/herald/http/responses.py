"""The failures the Powertools-routed functions answer with: validation problems and domain errors
become error envelopes with the status of ``herald.http.error_table``. A success is written by its
answer model's module (``herald.http.answers.json_response``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aws_lambda_powertools.event_handler import Response

from herald.domain.errors import ErrorCode, FieldProblem, HeraldError, validation_failed
from herald.http.envelope import failure, json_text
from herald.http.error_table import status_of
from herald.http.requests import PATTERN_TEXTS, SEND_AT_OUT_OF_RANGE, TOO_LARGE

JSON = "application/json"


def error_headers(error: HeraldError) -> dict[str, str]:
    retry_after = error.extra.get("retryAfter")
    return {"Retry-After": str(retry_after)} if retry_after is not None else {}


def error_response(error: HeraldError) -> Response[str]:
    return Response(
        status_code=status_of(error.code),
        content_type=JSON,
        body=json_text(failure(error)),
        headers=error_headers(error),
    )


def _field_name(location: Sequence[Any]) -> str:
    # Powertools reports ("body", "to") or ("query", "limit"); a union adds a type tag we skip.
    parts = [str(part) for part in location[1:] if not str(part).startswith(("function-", "constrained-"))]
    return ".".join(part for part in parts if part not in {"str", "int", "dict[str,str]", "dict[str,any]"})


def _problem(error: Mapping[str, Any]) -> FieldProblem:
    location = error.get("loc", ())
    name = _field_name(location)
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return FieldProblem(name, f"Unknown field '{name}'")
    if kind == "missing":
        return FieldProblem(name, "Field required")
    if kind == "string_pattern_mismatch":
        # pydantic's own sentence quotes the regular expression, which tells a person nothing.
        pattern = error.get("ctx", {}).get("pattern", "")
        return FieldProblem(name, PATTERN_TEXTS.get(pattern, "is not written in the form this field takes"))
    message = str(error.get("msg", "Invalid value")).removeprefix("Value error, ")
    # Problems are joined into one sentence: a problem's own full stop would end it early.
    return FieldProblem(name, message.removesuffix("."))


# Problems of these types answer with a code of their own, in a sentence naming the first of them.
_OWN_CODES: dict[str, tuple[ErrorCode, str]] = {
    TOO_LARGE: (ErrorCode.PAYLOAD_TOO_LARGE, "{field} is too large: {message}"),
    SEND_AT_OUT_OF_RANGE: (
        ErrorCode.SEND_AT_OUT_OF_RANGE,
        "{field} must lie between now and 30 days ahead; it {message}.",
    ),
}


def validation_error(errors: Sequence[Mapping[str, Any]]) -> HeraldError:
    """400 with every problem listed; invalid JSON, oversized fields and impossible send times get
    their own codes."""
    if any(error.get("type") == "json_invalid" for error in errors):
        return HeraldError("The request body is not valid JSON.", ErrorCode.INVALID_JSON)
    if not errors:
        return HeraldError("The request is not valid.", ErrorCode.VALIDATION_ERROR)
    problems = [_problem(error) for error in errors]
    for kind, (code, sentence) in _OWN_CODES.items():
        first = next((p for p, e in zip(problems, errors, strict=True) if e.get("type") == kind), None)
        if first is not None:
            return HeraldError(
                sentence.format(field=first.field, message=first.message), code, details=problems
            )
    return validation_failed(problems)
