"""The job message on the queue: its wire format, the inline payload limit, and what it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from herald.adapters.queueing import INLINE_PAYLOAD_LIMIT, decode_message, encode_message
from herald.adapters.store.conversions import request_document, request_from_document
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, compact_json
from herald.domain.notifications import EmailNotification, NotificationRequest

EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>", "priority": 1}
EMAIL_REQUEST = request_from_document(Channel.EMAIL, EMAIL)


def message(request: NotificationRequest | None = EMAIL_REQUEST, seen_attempts: int = 2) -> JobMessage:
    return JobMessage("job-1", "tenant-a", Channel.EMAIL, "startup", seen_attempts, request)


def request_of(size: int) -> NotificationRequest:
    """An email whose document is ``size`` bytes of compact JSON."""
    empty = NotificationRequest(EmailNotification("ada@example.com", "Hello", ""))
    wrapper = len(compact_json(request_document(empty)))
    return NotificationRequest(EmailNotification("ada@example.com", "Hello", "x" * (size - wrapper)))


def test_given_a_message_when_encoded_and_decoded_then_it_is_unchanged() -> None:
    original = message()

    assert decode_message(encode_message(original)) == original


def test_given_a_message_when_encoded_then_the_wire_fields_are_named_as_documented() -> None:
    assert json.loads(encode_message(message())) == {
        "v": 1,
        "jobId": "job-1",
        "tenantId": "tenant-a",
        "type": "email",
        "plan": "startup",
        "seenAttempts": 2,
        "priority": 5,
        "payload": EMAIL,
    }


def test_given_priority_and_acceptance_time_when_round_tripped_then_both_travel() -> None:
    original = JobMessage(
        "job-3", "tenant-a", Channel.EMAIL, "indie", 0, EMAIL_REQUEST, 1, "2026-11-30T12:00:00.000Z"
    )

    assert decode_message(encode_message(original)) == original


def test_given_the_request_that_queued_a_job_when_round_tripped_then_its_id_travels_and_is_optional() -> None:
    message = JobMessage("job-1", "tenant-a", Channel.EMAIL, "startup", 0, None, correlation_id="req-9")

    assert json.loads(encode_message(message))["correlationId"] == "req-9"
    assert decode_message(encode_message(message)) == message
    without = JobMessage("job-1", "tenant-a", Channel.EMAIL, "startup", 0, None)
    assert "correlationId" not in json.loads(encode_message(without))
    assert decode_message(encode_message(without)).correlation_id is None


def test_given_a_webhook_with_unicode_when_round_tripped_then_the_payload_is_identical() -> None:
    payload = {"url": "https://hooks.example.com/x", "payload": {"note": "café ✓ 💌", "n": [1, 2.5, None]}}
    request = request_from_document(Channel.WEBHOOK, payload)
    original = JobMessage("job-2", "tenant-a", Channel.WEBHOOK, "indie", 0, request)

    assert decode_message(encode_message(original)) == original
    assert json.loads(encode_message(original))["payload"] == {**payload, "method": "POST"}


def test_given_a_payload_at_the_inline_limit_when_encoded_then_it_travels_in_the_message() -> None:
    request = request_of(INLINE_PAYLOAD_LIMIT)

    assert decode_message(encode_message(message(request))).request == request


def test_given_a_payload_over_the_inline_limit_when_encoded_then_it_is_left_out_for_the_store() -> None:
    encoded = encode_message(message(request_of(INLINE_PAYLOAD_LIMIT + 1)))

    assert "payload" not in json.loads(encoded)
    assert len(encoded) < 1024
    decoded = decode_message(encoded)
    assert decoded.request is None
    assert (decoded.job_id, decoded.seen_attempts) == ("job-1", 2)


@pytest.mark.parametrize(
    "raw",
    [
        '{"v":2,"jobId":"j","tenantId":"t","type":"email","plan":"free","seenAttempts":0}',
        '{"jobId":"j","tenantId":"t","type":"email","plan":"free","seenAttempts":0}',
    ],
    ids=["future-version", "no-version"],
)
def test_given_an_unknown_version_when_decoded_then_it_is_rejected(raw: str) -> None:
    with pytest.raises(ValueError, match="unsupported job message version"):
        decode_message(raw)


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[1, 2]",
        '"a string"',
        "42",
        "null",
        '{"v":1,"jobId":"j","tenantId":"t","type":"sms","plan":"free","seenAttempts":0}',
        '{"v":1,"tenantId":"t","type":"email","plan":"free","seenAttempts":0}',
        '{"v":1,"jobId":"j","tenantId":"t","type":"email","plan":"free","seenAttempts":null}',
        '{"v":1,"jobId":"j","tenantId":"t","type":"email","plan":"free","seenAttempts":0,"payload":[1]}',
        '{"v":1,"jobId":"j","tenantId":"t","type":"email","plan":"free","seenAttempts":0,"payload":{"a":1}}',
    ],
    ids=[
        "not-json",
        "array",
        "string",
        "number",
        "null",
        "unknown-type",
        "no-job-id",
        "null-attempts",
        "payload-not-object",
        "payload-not-an-email",
    ],
)
def test_given_a_malformed_body_when_decoded_then_it_raises_an_error_the_worker_dead_letters(
    raw: str,
) -> None:
    with pytest.raises((ValueError, KeyError, TypeError)):
        decode_message(raw)
