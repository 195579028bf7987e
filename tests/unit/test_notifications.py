"""What a tenant asks to send, as domain values: built once from the wire, stored and queued in one
document form (``herald.adapters.store.conversions``), shown under the same names, and told apart
under one idempotency key by the same fingerprint as before."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herald.adapters.store.conversions import fingerprint, request_document, request_from_document
from herald.domain.jobs import Channel, compact_json
from herald.domain.notifications import REDACTED, EmailNotification, NotificationRequest, WebhookNotification
from herald.domain.vendors import ProviderName
from herald.http.requests import EmailRequest, WebhookRequest

FULL_EMAIL: dict[str, Any] = {
    "to": "ada@example.com",
    "subject": "Your order",
    "body": "<p>It has shipped.</p>",
    "text": "It has shipped.",
    "from": "shop@mail.example.com",
    "replyTo": "help@example.com",
    "priority": 1,
    "idempotencyKey": "order-42",
    "provider": "POSTMARK",
    "fallback": "SENDGRID",
}
FULL_WEBHOOK: dict[str, Any] = {
    "url": "https://hooks.example.com/orders",
    "method": "PUT",
    "headers": {"Authorization": "Bearer receiver-token", "X-Ref": "7"},
    "payload": {"event": "order.paid", "id": 42, "note": "café ✓"},
    "priority": 10,
    "idempotencyKey": "hook-42",
}


EVERY_CHANNEL = pytest.mark.parametrize(
    ("model", "wire", "channel"),
    [(EmailRequest, FULL_EMAIL, Channel.EMAIL), (WebhookRequest, FULL_WEBHOOK, Channel.WEBHOOK)],
    ids=["email", "webhook"],
)


def legacy_body_hash(channel: Channel, wire: dict[str, Any]) -> str:
    """How jobs stored before the typed request were fingerprinted: the validated body as the
    client's JSON names, without its idempotency key."""
    without_key = {name: value for name, value in wire.items() if name != "idempotencyKey"}
    return hashlib.sha256(channel.value.encode() + b"\n" + compact_json(without_key)).hexdigest()


def test_an_email_request_is_built_once_from_the_wire_with_every_field() -> None:
    request = EmailRequest.model_validate(FULL_EMAIL).to_request()

    assert request == NotificationRequest(
        EmailNotification(
            to="ada@example.com",
            subject="Your order",
            body="<p>It has shipped.</p>",
            text="It has shipped.",
            sender="shop@mail.example.com",
            reply_to="help@example.com",
            provider=ProviderName.POSTMARK,
            fallback=ProviderName.SENDGRID,
        ),
        priority=1,
        idempotency_key="order-42",
    )
    assert request.channel is Channel.EMAIL
    assert isinstance(request.notification, EmailNotification)
    assert request.notification.forced_providers() == (ProviderName.POSTMARK, ProviderName.SENDGRID)


@EVERY_CHANNEL
def test_the_stored_document_is_the_accepted_request_and_reads_back_unchanged(
    model: type[EmailRequest | WebhookRequest], wire: dict[str, Any], channel: Channel
) -> None:
    request = model.model_validate(wire).to_request()

    document = request_document(request)

    assert document == wire
    assert request_from_document(channel, document) == request


@EVERY_CHANNEL
def test_the_edge_shows_a_request_under_the_names_it_is_stored_by(
    model: type[EmailRequest | WebhookRequest], wire: dict[str, Any], channel: Channel
) -> None:
    """A job's payload is written by the request models, its stored document by the adapters: the
    same fields, names and order, so a job reads as it was sent."""
    request = model.model_validate(wire).to_request()
    notification = request.notification

    if isinstance(notification, WebhookNotification):
        assert isinstance(notification.headers, dict)
        shown = WebhookRequest.of(request, notification, notification.headers).document()
    else:
        shown = EmailRequest.of(request, notification).document()

    assert list(shown.items()) == list(request_document(request).items()) == list(wire.items())


def test_absent_options_are_left_out_of_the_document_and_a_webhook_defaults_to_post() -> None:
    email = EmailRequest.model_validate({"to": "a@example.com", "subject": "s", "body": "b"}).to_request()
    webhook = WebhookRequest.model_validate({"url": "https://h.example.com/x", "payload": {}}).to_request()

    assert request_document(email) == {"to": "a@example.com", "subject": "s", "body": "b"}
    assert request_document(webhook) == {"url": "https://h.example.com/x", "method": "POST", "payload": {}}


@EVERY_CHANNEL
def test_the_fingerprint_is_the_one_jobs_stored_before_carry(
    model: type[EmailRequest | WebhookRequest], wire: dict[str, Any], channel: Channel
) -> None:
    """A client retrying with the same key across a deployment still gets 409, not 422."""
    validated = model.model_validate(wire)
    dumped = validated.model_dump(by_alias=True, exclude_none=True, mode="json")

    assert fingerprint(validated.to_request()) == legacy_body_hash(channel, dumped)


@given(
    subject=st.text(
        st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1
    ),
    text=st.none() | st.text(max_size=40),
    priority=st.none() | st.sampled_from([1, 5, 10]),
)
def test_any_email_keeps_its_fingerprint_and_document_through_the_types(
    subject: str, text: str | None, priority: int | None
) -> None:
    wire: dict[str, Any] = {"to": "ada@example.com", "subject": subject, "body": "<p>x</p>"}
    wire |= {"text": text} if text is not None else {}
    wire |= {"priority": priority} if priority is not None else {}
    validated = EmailRequest.model_validate(wire)
    request = validated.to_request()
    dumped = validated.model_dump(by_alias=True, exclude_none=True, mode="json")

    assert request_document(request) == dumped
    assert fingerprint(request) == legacy_body_hash(Channel.EMAIL, dumped)


def test_the_key_does_not_change_the_fingerprint_but_the_body_does() -> None:
    base = EmailRequest.model_validate(FULL_EMAIL).to_request()
    other_key = EmailRequest.model_validate({**FULL_EMAIL, "idempotencyKey": "x"}).to_request()
    other_body = EmailRequest.model_validate({**FULL_EMAIL, "subject": "Other"}).to_request()

    assert fingerprint(base) == fingerprint(other_key)
    assert fingerprint(base) != fingerprint(other_body)


def test_a_copy_that_leaves_herald_shows_header_names_only() -> None:
    request = WebhookRequest.model_validate(FULL_WEBHOOK).to_request()

    shown = request_document(request.redacted())

    assert shown["headers"] == {"Authorization": REDACTED, "X-Ref": REDACTED}
    assert "receiver-token" not in repr(shown)
    assert shown["payload"] == FULL_WEBHOOK["payload"]
    assert isinstance(request.notification, WebhookNotification)
    assert request.notification.headers == FULL_WEBHOOK["headers"]


@pytest.mark.parametrize(
    ("channel", "document"),
    [
        (Channel.EMAIL, {"subject": "s", "body": "b"}),
        (Channel.EMAIL, {"to": "a@example.com", "subject": "s", "body": "b", "provider": "SPARKPOST"}),
        (Channel.WEBHOOK, {"url": "https://h.example.com", "payload": [1]}),
        (Channel.WEBHOOK, {"url": "https://h.example.com", "payload": {}, "headers": "x"}),
        (Channel.WEBHOOK, {"payload": {}}),
    ],
    ids=["email-without-to", "unknown-provider", "payload-not-object", "headers-not-object", "no-url"],
)
def test_a_document_that_is_no_request_is_refused(channel: Channel, document: dict[str, Any]) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        request_from_document(channel, document)
