"""Resend's webhooks: Svix signatures checked against the svix library's own signing, and Resend's
event types mapped to Herald's."""

from __future__ import annotations

import json
import time

import pytest
import svix.webhooks

from herald.adapters.inbound import resend
from herald.domain.inbound import (
    DeliveryEvent,
    DeliveryEventType,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    UnusableSecret,
)
from herald.domain.vendors import ProviderName
from herald_harness.senders import JOB_ID, STRANGER_SECRET, TENANT_ID, fixture
from herald_harness.vendors.resend import RESEND_SECRET, resend_headers

NOW = 1_796_025_600
MESSAGE_ID = "msg_2pXK7dQ0resendDelivered"
T = DeliveryEventType


def delivered_headers(message_id: str = MESSAGE_ID) -> dict[str, str]:
    return resend_headers(fixture("resend-delivered"), NOW, message_id)


def with_data(name: str, **changes: object) -> bytes:
    payload = json.loads(fixture(name))
    payload["data"].update(changes)
    return json.dumps(payload).encode()


def test_the_svix_library_accepts_what_herald_accepts() -> None:
    # Cross-check on the same request; the library reads the clock itself, so sign for now.
    body = fixture("resend-delivered")
    now = int(time.time())
    headers = resend_headers(body, now, MESSAGE_ID)

    resend.verify(headers, body, RESEND_SECRET, now)
    svix.webhooks.Webhook(RESEND_SECRET).verify(body, headers)  # raises unless it verifies


def test_given_the_signature_of_another_svix_message_then_it_is_refused() -> None:
    headers = delivered_headers("msg_other") | {"svix-id": MESSAGE_ID}

    with pytest.raises(InvalidSignature, match="no svix-signature value matches the body"):
        resend.verify(headers, fixture("resend-delivered"), RESEND_SECRET, NOW)


@pytest.mark.parametrize("stored", [RESEND_SECRET, STRANGER_SECRET], ids=["old secret", "new secret"])
def test_during_a_secret_rotation_either_stored_secret_verifies(stored: str) -> None:
    # Svix signs with both secrets while a rotation lasts, space-separated in one header.
    body = fixture("resend-delivered")
    old = resend_headers(body, NOW, MESSAGE_ID, RESEND_SECRET)["svix-signature"]
    new = resend_headers(body, NOW, MESSAGE_ID, STRANGER_SECRET)["svix-signature"]
    headers = delivered_headers() | {"svix-signature": f"{old} {new}"}

    resend.verify(headers, body, stored, NOW)


def test_signatures_of_other_versions_are_skipped() -> None:
    body = fixture("resend-delivered")
    genuine = delivered_headers()["svix-signature"]
    headers = delivered_headers() | {"svix-signature": f"v1a,c2lnbmVk v2,{genuine[3:]} broken {genuine}"}

    resend.verify(headers, body, RESEND_SECRET, NOW)


def test_given_only_signatures_of_other_versions_then_it_is_refused() -> None:
    genuine = delivered_headers()["svix-signature"]
    headers = delivered_headers() | {"svix-signature": f"v2,{genuine[3:]} v1, v1a,{genuine[3:]}"}

    with pytest.raises(InvalidSignature, match="svix-signature header holds no v1 signature"):
        resend.verify(headers, fixture("resend-delivered"), RESEND_SECRET, NOW)


def test_an_unpadded_secret_is_the_same_secret() -> None:
    body = fixture("resend-delivered")

    resend.verify(delivered_headers(), body, RESEND_SECRET.rstrip("="), NOW)


@pytest.mark.parametrize(
    "secret",
    ["", "whsec_", "whsec_not base64!", "whsec_A"],
    ids=["empty", "prefix only", "garbled", "truncated"],
)
def test_given_an_unusable_secret_then_verification_cannot_start(secret: str) -> None:
    with pytest.raises(UnusableSecret, match="not whsec_ followed by base64"):
        resend.verify(delivered_headers(), fixture("resend-delivered"), secret, NOW)


def test_a_delivered_email_maps_to_delivered_with_the_svix_id_as_event_id() -> None:
    events = resend.parse(fixture("resend-delivered"), delivered_headers())

    assert events == [
        DeliveryEvent(
            provider=ProviderName.RESEND,
            event_id=MESSAGE_ID,
            type=T.DELIVERED,
            recipient="ada.lovelace@example.org",
            occurred_at="2026-11-30T07:59:58.412Z",
            job_id=JOB_ID,
            tenant_id=TENANT_ID,
            provider_message_id="56761188-7520-42d8-8898-ff6fc54ce618",
        )
    ]


@pytest.mark.parametrize(
    ("bounce_type", "expected"),
    [("Permanent", T.BOUNCED), ("Transient", T.SOFT_BOUNCED), ("Undetermined", T.SOFT_BOUNCED)],
)
def test_a_bounce_is_hard_only_when_permanent(bounce_type: str, expected: DeliveryEventType) -> None:
    bounce = {"type": bounce_type, "subType": "General", "message": "The recipient's mailbox said no."}
    (event,) = resend.parse(with_data("resend-bounced", bounce=bounce), delivered_headers())

    assert isinstance(event, DeliveryEvent)
    assert (event.type, event.reason) == (expected, "The recipient's mailbox said no.")
    assert event.suppresses_recipient is (expected is T.BOUNCED)


@pytest.mark.parametrize(
    ("name", "extra", "expected", "reason"),
    [
        ("email.delivery_delayed", {}, T.DEFERRED, None),
        ("email.complained", {}, T.COMPLAINED, None),
        ("email.opened", {"open": {"userAgent": "Mozilla/5.0"}}, T.OPENED, None),
        (
            "email.clicked",
            {"click": {"link": "https://shop.example.com/orders/1001"}},
            T.CLICKED,
            "https://shop.example.com/orders/1001",
        ),
        ("email.failed", {"failed": {"reason": "reached_daily_quota"}}, T.DROPPED, "reached_daily_quota"),
        (
            "email.suppressed",
            {"suppressed": {"type": "OnAccountSuppressionList", "reason": "previous_bounce"}},
            T.DROPPED,
            "previous_bounce",
        ),
    ],
)
def test_resend_event_types_map_to_herald_types(
    name: str, extra: dict[str, object], expected: DeliveryEventType, reason: str | None
) -> None:
    payload = json.loads(fixture("resend-delivered")) | {"type": name}
    payload["data"].update(extra)

    (event,) = resend.parse(json.dumps(payload).encode(), delivered_headers())

    assert isinstance(event, DeliveryEvent)
    assert (event.type, event.reason) == (expected, reason)


@pytest.mark.parametrize(
    "name", ["email.sent", "email.scheduled", "email.received", "contact.created", "domain.updated", ""]
)
def test_events_herald_does_not_record_are_ignored(name: str) -> None:
    body = json.dumps(json.loads(fixture("resend-delivered")) | {"type": name}).encode()

    assert resend.parse(body, delivered_headers()) == [
        IgnoredEvent(source="RESEND", name=name, reason="not a Herald event type")
    ]


@pytest.mark.parametrize(
    "to", [[], None, [42], "Solo@Example.org"], ids=["empty list", "missing", "not text", "plain string"]
)
def test_the_recipient_comes_from_the_first_to_address(to: object) -> None:
    (event,) = resend.parse(with_data("resend-delivered", to=to), delivered_headers())

    if isinstance(to, str):
        assert isinstance(event, DeliveryEvent)
        assert event.recipient == "solo@example.org"
    else:
        assert event == IgnoredEvent(source="RESEND", name="email.delivered", reason="no recipient")


def test_parse_needs_the_svix_id_the_signature_covered() -> None:
    with pytest.raises(InvalidSignature, match="missing svix-id header"):
        resend.parse(fixture("resend-delivered"), {})


@pytest.mark.parametrize("body", [b"", b"[]", b'"text"', b"{", b"\x00"])
def test_a_body_that_is_not_a_json_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        resend.parse(body, delivered_headers())
