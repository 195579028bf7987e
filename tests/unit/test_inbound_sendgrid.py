"""SendGrid's Signed Event Webhook: the verification key, and batches mapped to Herald's events."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from herald.adapters.inbound import sendgrid
from herald.domain.inbound import (
    DeliveryEvent,
    DeliveryEventType,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    UnusableSecret,
)
from herald.domain.vendors import ProviderName
from herald_harness.senders import JOB_ID, TENANT_ID, fixture, verification_key
from herald_harness.vendors.sendgrid import SENDGRID_VERIFICATION_KEY, sendgrid_headers

NOW = 1_796_025_600
T = DeliveryEventType


def spki(public_key: ec.EllipticCurvePublicKey | rsa.RSAPublicKey) -> str:
    return base64.b64encode(public_key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).decode()


def test_given_a_signature_over_another_timestamp_then_it_is_refused() -> None:
    # SendGrid signs the timestamp with the body; moving one without the other breaks it.
    body = fixture("sendgrid-bounce")
    headers = sendgrid_headers(body, NOW - 10) | {sendgrid.TIMESTAMP_HEADER: str(NOW)}

    with pytest.raises(InvalidSignature, match="does not match the body"):
        sendgrid.verify(headers, body, SENDGRID_VERIFICATION_KEY, NOW)


def test_a_pem_wrapped_key_is_refused_because_tenants_store_the_base64_der_sendgrid_shows() -> None:
    body = fixture("sendgrid-bounce")

    sendgrid.verify(sendgrid_headers(body, NOW), body, SENDGRID_VERIFICATION_KEY, NOW)
    pem = f"-----BEGIN PUBLIC KEY-----\n{SENDGRID_VERIFICATION_KEY}\n-----END PUBLIC KEY-----"
    with pytest.raises(UnusableSecret):
        sendgrid.verification_key(pem)


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "not base64 of a DER public key"),
        ("not a key!", "not base64 of a DER public key"),
        (base64.b64encode(b"\x30\x03\x02\x01\x01").decode(), "not base64 of a DER public key"),
        (spki(ec.generate_private_key(ec.SECP384R1()).public_key()), "not a P-256 public key"),
        (
            spki(rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()),
            "not a P-256 public key",
        ),
    ],
    ids=["empty", "not base64", "not a key", "P-384", "RSA"],
)
def test_given_an_unusable_verification_key_then_verification_cannot_start(key: str, reason: str) -> None:
    body = fixture("sendgrid-bounce")

    with pytest.raises(UnusableSecret, match=reason) as caught:
        sendgrid.verify(sendgrid_headers(body, NOW), body, key, NOW)
    assert key not in caught.value.reason or not key


def test_given_the_key_of_another_p256_pair_then_it_is_refused() -> None:
    body = fixture("sendgrid-bounce")
    other = verification_key(ec.generate_private_key(ec.SECP256R1()))

    with pytest.raises(InvalidSignature, match="does not match the body"):
        sendgrid.verify(sendgrid_headers(body, NOW), body, other, NOW)


def test_a_hard_bounce_becomes_a_suppressing_bounced_event_tied_to_the_job() -> None:
    (event,) = sendgrid.parse(fixture("sendgrid-bounce"))

    assert event == DeliveryEvent(
        provider=ProviderName.SENDGRID,
        event_id="6g4ZI7SA-xmRDv57GoPIPw==",
        type=T.BOUNCED,
        recipient="ada.lovelace@example.org",
        occurred_at="2026-11-30T07:59:50.000Z",
        job_id=JOB_ID,
        tenant_id=TENANT_ID,
        provider_message_id="14c5d75ce93",
        reason="550 5.1.1 The email account that you tried to reach does not exist.",
    )
    assert isinstance(event, DeliveryEvent)
    assert event.suppresses_recipient


def test_a_batch_maps_every_sendgrid_event_name() -> None:
    events = sendgrid.parse(fixture("sendgrid-batch"))

    kinds = [event.type if isinstance(event, DeliveryEvent) else event.name for event in events]
    assert kinds == [
        "processed",
        T.DELIVERED,
        T.OPENED,
        T.CLICKED,
        T.DEFERRED,
        T.SOFT_BOUNCED,  # bounce of type "blocked"
        T.DROPPED,
        T.COMPLAINED,
        T.UNSUBSCRIBED,
        T.UNSUBSCRIBED,
        "group_resubscribe",
        "account_status_change",
    ]
    acted_on = [
        (event.type, event.suppresses_recipient, event.unsubscribes_recipient)
        for event in events
        if isinstance(event, DeliveryEvent) and event.concerns_recipient
    ]
    # The spam report suppresses; both unsubscribes unsubscribe; the blocked bounce is only recorded.
    assert acted_on == [
        (T.COMPLAINED, True, False),
        (T.UNSUBSCRIBED, False, True),
        (T.UNSUBSCRIBED, False, True),
    ]


def test_each_event_keeps_its_own_id_job_and_description() -> None:
    events = [
        event for event in sendgrid.parse(fixture("sendgrid-batch")) if isinstance(event, DeliveryEvent)
    ]

    assert len({event.event_id for event in events}) == len(events)
    by_type = {event.type: event for event in events}
    assert by_type[T.CLICKED].reason == "https://shop.example.com/orders/1001"
    assert by_type[T.DEFERRED].reason == "400 4.2.2 Mailbox full, try again later"
    assert by_type[T.DEFERRED].job_id == "5d0c1a9e-7b1f-4a08-8e3c-2f9d4b6a1c20"
    assert by_type[T.DROPPED].reason == "Bounced Address"
    assert by_type[T.DELIVERED].provider_message_id == "MsgAAAAAAAAAAAAAAAAAAA"


def test_unknown_and_unusable_events_are_ignored_not_refused() -> None:
    body = json.dumps(
        [
            {"event": "processed", "email": "a@example.org"},
            {"event": "delivered"},
            "not an object",
            {"event": "newfangled", "email": "a@example.org"},
        ]
    ).encode()

    assert sendgrid.parse(body) == [
        IgnoredEvent(source="SENDGRID", name="processed", reason="not a Herald event type"),
        IgnoredEvent(source="SENDGRID", name="delivered", reason="no recipient"),
        IgnoredEvent(source="SENDGRID", name="", reason="not a Herald event type"),
        IgnoredEvent(source="SENDGRID", name="newfangled", reason="not a Herald event type"),
    ]


def test_an_event_without_sg_event_id_gets_a_stable_derived_id() -> None:
    event = {"event": "delivered", "email": "a@example.org", "timestamp": NOW}
    reordered = dict(reversed(event.items()))

    first = sendgrid.parse(json.dumps([event]).encode())[0]
    again = sendgrid.parse(json.dumps([{"event": "open", "email": "b@example.org"}, reordered]).encode())[1]

    assert isinstance(first, DeliveryEvent)
    assert isinstance(again, DeliveryEvent)
    assert first.event_id.startswith("sha256:")
    assert first.event_id == again.event_id


def test_an_event_without_herald_tags_or_time_keeps_none() -> None:
    (event,) = sendgrid.parse(b'[{"event":"delivered","email":"A@B.example","timestamp":"yesterday"}]')

    assert isinstance(event, DeliveryEvent)
    assert (event.recipient, event.job_id, event.tenant_id, event.occurred_at) == (
        "a@b.example",
        None,
        None,
        None,
    )


@pytest.mark.parametrize("body", [b"", b"{not json", b'{"event":"delivered"}', b"\xff\xfe", b"null"])
def test_a_body_that_is_not_a_json_array_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        sendgrid.parse(body)
