"""Field rules of the send bodies (docs/api.md, "Sending an email" and "Sending a webhook")."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from herald.domain.jobs import compact_json
from herald.http.requests import (
    MAX_BODY_BYTES,
    TOO_LARGE,
    EmailRequest,
    RecoverRequest,
    WebhookRequest,
)

EMAIL = {"to": "user@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "x"}}


def _errors(model: type[BaseModel], body: dict[str, Any]) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    return [dict(error) for error in caught.value.errors()]


def test_a_minimal_email_is_valid_and_keeps_the_sdk_field_names() -> None:
    request = EmailRequest.model_validate(
        {**EMAIL, "from": "app@mail.example.com", "replyTo": "r@example.com"}
    )
    dumped = request.model_dump(by_alias=True, exclude_none=True)
    assert dumped["from"] == "app@mail.example.com"
    assert dumped["replyTo"] == "r@example.com"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("to", "not-an-address"),
        ("to", "Jane <jane@example.com>"),
        ("to", "jane@localhost"),
        ("subject", ""),
        ("subject", "two\nlines"),
        ("subject", "x" * 999),
        ("body", ""),
        ("priority", "5"),
        ("priority", 0),
        ("priority", 11),
        ("priority", True),
        ("idempotencyKey", ""),
        ("idempotencyKey", "tab\there"),
        ("idempotencyKey", "k" * 256),
        ("provider", "SPARKPOST"),
    ],
)
def test_an_email_field_breaking_its_rule_is_rejected_naming_the_field(field: str, value: object) -> None:
    errors = _errors(EmailRequest, {**EMAIL, field: value})
    assert [error["loc"][0] for error in errors] == [field]


def test_an_unknown_field_is_rejected_by_name() -> None:
    errors = _errors(EmailRequest, {**EMAIL, "cc": "x@example.com"})
    assert errors[0]["type"] == "extra_forbidden"
    assert errors[0]["loc"] == ("cc",)


def test_fallback_needs_a_different_provider() -> None:
    assert _errors(EmailRequest, {**EMAIL, "fallback": "RESEND"})[0]["type"] == "invalid_fallback"
    same = {**EMAIL, "provider": "RESEND", "fallback": "RESEND"}
    assert _errors(EmailRequest, same)[0]["type"] == "invalid_fallback"
    assert (
        EmailRequest.model_validate({**EMAIL, "provider": "RESEND", "fallback": "SENDGRID"}).fallback
        == "SENDGRID"
    )


def test_a_body_over_256_kib_is_too_large_but_exactly_256_kib_passes() -> None:
    EmailRequest.model_validate({**EMAIL, "body": "a" * MAX_BODY_BYTES})
    errors = _errors(EmailRequest, {**EMAIL, "body": "a" * (MAX_BODY_BYTES + 1)})
    assert errors[0]["type"] == TOO_LARGE
    # Bytes, not characters: 3-byte characters reach the limit sooner.
    assert _errors(EmailRequest, {**EMAIL, "text": "€" * (MAX_BODY_BYTES // 3 + 1)})[0]["type"] == TOO_LARGE


def test_a_webhook_defaults_to_post_and_accepts_custom_headers() -> None:
    request = WebhookRequest.model_validate(
        {**WEBHOOK, "headers": {"Authorization": "Bearer t", "X-Trace": "1"}}
    )
    assert request.method == "POST"
    assert request.headers == {"Authorization": "Bearer t", "X-Trace": "1"}


@pytest.mark.parametrize(
    "name", ["Content-Type", "user-agent", "Host", "Content-Length", "X-Webhook-Signature", "webhook-id"]
)
def test_headers_herald_sets_cannot_be_supplied(name: str) -> None:
    errors = _errors(WebhookRequest, {**WEBHOOK, "headers": {name: "x"}})
    assert errors[0]["type"] == "reserved_header"


def test_header_injection_and_too_many_headers_are_rejected() -> None:
    assert (
        _errors(WebhookRequest, {**WEBHOOK, "headers": {"X-A": "ok\r\nX-B: injected"}})[0]["type"]
        == "invalid_header"
    )
    assert _errors(WebhookRequest, {**WEBHOOK, "headers": {"Bad Name": "x"}})[0]["type"] == "invalid_header"
    many = {f"X-H{i}": "v" for i in range(21)}
    assert _errors(WebhookRequest, {**WEBHOOK, "headers": many})[0]["type"] == "too_many_headers"
    big = {f"X-H{i}": "v" * 500 for i in range(17)}
    assert _errors(WebhookRequest, {**WEBHOOK, "headers": big})[0]["type"] == TOO_LARGE


def test_the_payload_limit_counts_compact_json_bytes() -> None:
    fits = {"data": "x" * (10_240 - len(compact_json({"data": ""})))}
    assert len(compact_json(fits)) == 10_240
    WebhookRequest.model_validate({**WEBHOOK, "payload": fits})
    over = {"data": fits["data"] + "x"}
    assert _errors(WebhookRequest, {**WEBHOOK, "payload": over})[0]["type"] == TOO_LARGE


@pytest.mark.parametrize("payload", [[1, 2], "text", 5, None])
def test_the_payload_must_be_a_json_object(payload: object) -> None:
    assert _errors(WebhookRequest, {**WEBHOOK, "payload": payload})[0]["loc"][0] == "payload"


def test_only_the_documented_methods_are_allowed() -> None:
    assert _errors(WebhookRequest, {**WEBHOOK, "method": "TRACE"})[0]["loc"] == ("method",)


@pytest.mark.parametrize(
    "edge",
    [1_700_000_000, 1.7e9, "1700000000", "2026-12-01T09:30:00", "yesterday", True],
    ids=["unix-seconds", "float", "digits", "no-offset", "words", "boolean"],
)
def test_a_recovery_window_takes_only_iso_times_with_an_offset(edge: object) -> None:
    with pytest.raises(ValidationError) as caught:
        RecoverRequest.model_validate({"since": "2026-12-01T00:00:00Z", "until": edge})

    [error] = caught.value.errors()
    assert (error["type"], error["loc"], error["msg"]) == (
        "invalid_time",
        ("until",),
        "must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:30:00Z",
    )


def test_a_recovery_window_keeps_the_offset_it_was_given() -> None:
    request = RecoverRequest.model_validate({"since": "2026-12-01T09:30:00+01:00"})

    assert request.since.isoformat() == "2026-12-01T09:30:00+01:00"
    assert request.until is None
