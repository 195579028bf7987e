"""The one mapping from a failure to what the client is told, shared by the API and the inbound
functions, and the next steps only the edge can name (its routes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.http.envelope import failure, json_text, message_of
from herald.http.errors import client_error, refusal
from herald.http.guards import ScreenedBodies
from herald.http.responses import validation_error


def test_a_herald_error_is_told_as_it_is() -> None:
    error = HeraldError("No job with this id.", ErrorCode.JOB_NOT_FOUND)

    assert client_error(error) is error


def test_a_dependency_failure_is_a_503_that_names_no_internals() -> None:
    told = client_error(DependencyError("job table write failed: ProvisionedThroughputExceededException"))

    assert told.code is ErrorCode.DEPENDENCY_UNAVAILABLE
    assert told.message == "A service Herald depends on is unavailable; retry shortly."
    assert refusal(told)["statusCode"] == 503


def test_anything_else_is_a_500_with_a_fixed_sentence() -> None:
    told = client_error(KeyError("secret-looking-value"))

    assert (told.code, told.message) == (ErrorCode.INTERNAL_ERROR, "Something went wrong on our side.")
    assert "secret-looking-value" not in json_text(failure(told))


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (
            HeraldError(
                "The notification was stored but could not be queued.",
                ErrorCode.QUEUE_UNAVAILABLE,
                extra={"jobId": "j-1"},
            ),
            "The notification was stored but could not be queued. "
            "Retry it with POST /api/v1/notifications/jobs/j-1/retry.",
        ),
        (
            HeraldError(
                "Configure an email provider first; paid plans send through your own provider keys.",
                ErrorCode.PROVIDER_REQUIRED,
            ),
            "Configure an email provider first; paid plans send through your own provider keys. "
            "Add one with PUT /api/v1/account/providers/{provider}.",
        ),
        (
            HeraldError("The stored SENDGRID key cannot be decrypted.", ErrorCode.PROVIDER_KEY_UNREADABLE),
            "The stored SENDGRID key cannot be decrypted. "
            "Store it again with PUT /api/v1/account/providers/{provider}.",
        ),
        (HeraldError("No job with this id.", ErrorCode.JOB_NOT_FOUND), "No job with this id."),
    ],
    ids=["queue", "provider-required", "key-unreadable", "no-next-step"],
)
def test_the_edge_adds_the_route_to_call_next(error: HeraldError, sentence: str) -> None:
    assert message_of(error) == sentence
    assert failure(error).error == sentence


def event(body: str, content_type: str = "application/json") -> dict[str, Any]:
    return {
        "rawPath": "/api/v1/notifications/webhook",
        "requestContext": {"http": {"method": "POST"}},
        "headers": {"content-type": content_type},
        "body": body,
        "isBase64Encoded": False,
    }


def test_a_body_is_parsed_once_and_the_resolver_gets_that_very_document() -> None:
    bodies = ScreenedBodies()
    text = '{"url":"https://h.example.com/x","payload":{"n":1}}'

    assert bodies.admit(event(text)) is None
    first, again = bodies.deserialize(text), bodies.deserialize(text)

    assert first == {"url": "https://h.example.com/x", "payload": {"n": 1}}
    assert first is again


def test_a_refused_body_is_answered_before_any_route_and_forgotten() -> None:
    bodies = ScreenedBodies()
    bodies.admit(event('{"a":1}'))

    answer = bodies.admit(event('{"a":'))

    assert answer is not None
    assert answer["statusCode"] == 400
    assert json.loads(answer["body"])["code"] == "invalid_json"
    with pytest.raises(json.JSONDecodeError):
        bodies.deserialize('{"a":')


class _Reference(BaseModel):
    ref: str = Field(pattern=r"^[A-Z]{3}-\d+$")


def test_a_pattern_without_a_sentence_of_its_own_is_still_never_shown() -> None:
    with pytest.raises(ValidationError) as raised:
        _Reference(ref="abc")
    # Powertools reports a body field's place as ("body", name).
    problems = [{**problem, "loc": ("body", *problem["loc"])} for problem in raised.value.errors()]

    told = validation_error(problems)

    assert told.message == "Invalid request: ref: is not written in the form this field takes."
