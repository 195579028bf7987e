"""Postmark's webhooks: Basic auth against the tenant's stored credentials, and Postmark's record
types mapped to Herald's."""

from __future__ import annotations

import base64
import json

import pytest

from herald.adapters.inbound import postmark
from herald.adapters.inbound.postmark import BasicCredentials
from herald.domain.inbound import (
    DeliveryEvent,
    DeliveryEventType,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    UnusableSecret,
)
from herald.domain.vendors import ProviderName
from herald_harness.senders import JOB_ID, TENANT_ID, fixture
from herald_harness.vendors.postmark import POSTMARK_CREDENTIALS, postmark_headers

NOW = 1_796_025_600
T = DeliveryEventType
BODY = fixture("postmark-delivery")


def basic(pair: bytes) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


def test_given_the_right_password_but_another_user_name_then_it_is_refused() -> None:
    headers = postmark_headers(BasicCredentials(password=POSTMARK_CREDENTIALS.password, username="intruder"))

    with pytest.raises(InvalidSignature, match="wrong user name or password"):
        postmark.verify(headers, BODY, POSTMARK_CREDENTIALS, NOW)


@pytest.mark.parametrize("user", ["", "postmark", "anything at all"])
@pytest.mark.parametrize("stored_user", [None, ""], ids=["no user name", "empty user name"])
def test_without_a_stored_user_name_any_user_name_with_the_password_passes(
    user: str, stored_user: str | None
) -> None:
    stored = BasicCredentials(password="s3cret:with:colons", username=stored_user)

    postmark.verify(basic(f"{user}:s3cret:with:colons".encode()), BODY, stored, NOW)


def test_a_password_outside_ascii_is_compared_as_utf8() -> None:
    stored = BasicCredentials(password="pässwörd-🔑", username="herald")

    postmark.verify(basic("herald:pässwörd-🔑".encode()), BODY, stored, NOW)
    with pytest.raises(InvalidSignature, match="wrong user name or password"):
        postmark.verify(basic("herald:passwort-🔑".encode()), BODY, stored, NOW)


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        ("Bearer aGVyYWxkOnB3", "Authorization header is not Basic auth"),
        ("Basic", "Authorization header holds no user:password pair"),
        ("Basic aGVyYWxkOnB3!", "Authorization header is not base64"),
        ("Basic aGVyYWxkOnB", "Authorization header is not base64"),
        ("Basic " + base64.b64encode(b"herald-without-colon").decode(), "holds no user:password pair"),
        ("Basic " + base64.b64encode(b"\xff\xfe:\x00").decode(), "wrong user name or password"),
    ],
    ids=["other scheme", "no credentials", "not base64", "truncated base64", "no colon", "binary pair"],
)
def test_given_a_malformed_authorization_header_then_it_is_refused(authorization: str, reason: str) -> None:
    with pytest.raises(InvalidSignature, match=reason):
        postmark.verify({"Authorization": authorization}, BODY, POSTMARK_CREDENTIALS, NOW)


def test_the_scheme_name_is_case_insensitive() -> None:
    header = postmark_headers()["Authorization"].replace("Basic", "bAsIc")

    postmark.verify({"authorization": header}, BODY, POSTMARK_CREDENTIALS, NOW)


def test_given_an_empty_stored_password_then_nothing_can_pass() -> None:
    with pytest.raises(UnusableSecret, match="Postmark webhook password is empty"):
        postmark.verify(basic(b"herald:"), BODY, BasicCredentials(password=""), NOW)


def test_the_credentials_never_show_in_a_repr() -> None:
    assert POSTMARK_CREDENTIALS.password not in repr(POSTMARK_CREDENTIALS)
    assert "herald" not in repr(POSTMARK_CREDENTIALS)


def test_a_hard_bounce_maps_to_a_suppressing_bounced_event_with_postmarks_bounce_id() -> None:
    assert postmark.parse(fixture("postmark-bounce")) == [
        DeliveryEvent(
            provider=ProviderName.POSTMARK,
            event_id="4323372036854775807",
            type=T.BOUNCED,
            recipient="ada.lovelace@example.org",
            occurred_at="2026-11-30T07:59:58.907Z",
            job_id=JOB_ID,
            tenant_id=TENANT_ID,
            provider_message_id="883953f4-6105-42a2-a16a-77a8eac79483",
            reason="smtp;550 5.1.1 The email account that you tried to reach does not exist.",
        )
    ]


@pytest.mark.parametrize(
    ("bounce_type", "inactive", "expected"),
    [
        ("HardBounce", False, T.BOUNCED),
        ("BadEmailAddress", False, T.BOUNCED),
        ("SoftBounce", False, T.SOFT_BOUNCED),
        ("Transient", False, T.SOFT_BOUNCED),
        ("DnsError", False, T.SOFT_BOUNCED),
        ("Blocked", False, T.SOFT_BOUNCED),
        ("AutoResponder", False, T.SOFT_BOUNCED),
        ("ManuallyDeactivated", True, T.BOUNCED),
        ("SpamComplaint", True, T.COMPLAINED),
    ],
)
def test_bounce_types_decide_hard_soft_or_complaint(
    bounce_type: str, inactive: bool, expected: DeliveryEventType
) -> None:
    record = json.loads(fixture("postmark-bounce")) | {"Type": bounce_type, "Inactive": inactive}

    (event,) = postmark.parse(json.dumps(record).encode())

    assert isinstance(event, DeliveryEvent)
    assert event.type is expected


@pytest.mark.parametrize(
    ("name", "expected", "reason", "occurred_at"),
    [
        ("postmark-delivery", T.DELIVERED, "smtp;250 2.0.0 OK", "2026-11-30T07:59:57.123Z"),
        ("postmark-spam-complaint", T.COMPLAINED, "Test spam complaint details", "2026-11-30T08:10:00.000Z"),
        ("postmark-open", T.OPENED, None, "2026-11-30T08:05:00.000Z"),
        ("postmark-click", T.CLICKED, "https://shop.example.com/orders/1001", "2026-11-30T08:06:00.000Z"),
        ("postmark-subscription-change", T.UNSUBSCRIBED, "ManualSuppression", "2026-11-30T08:07:00.000Z"),
    ],
)
def test_record_types_map_to_herald_types(
    name: str, expected: DeliveryEventType, reason: str | None, occurred_at: str
) -> None:
    (event,) = postmark.parse(fixture(name))

    assert isinstance(event, DeliveryEvent)
    assert (event.type, event.reason, event.occurred_at) == (expected, reason, occurred_at)
    assert (event.recipient, event.job_id, event.tenant_id) == ("ada.lovelace@example.org", JOB_ID, TENANT_ID)


def test_records_without_an_id_get_the_body_hash_so_a_retry_is_a_duplicate() -> None:
    (first,) = postmark.parse(fixture("postmark-delivery"))
    (again,) = postmark.parse(fixture("postmark-delivery"))
    (open_event,) = postmark.parse(fixture("postmark-open"))

    assert isinstance(first, DeliveryEvent)
    assert isinstance(again, DeliveryEvent)
    assert isinstance(open_event, DeliveryEvent)
    assert first.event_id.startswith("sha256:")
    assert first.event_id == again.event_id != open_event.event_id


def test_a_subscription_change_that_lifts_the_suppression_is_ignored() -> None:
    record = json.loads(fixture("postmark-subscription-change")) | {"SuppressSending": False}

    assert postmark.parse(json.dumps(record).encode()) == [
        IgnoredEvent(source="POSTMARK", name="SubscriptionChange", reason="not a Herald event type")
    ]


@pytest.mark.parametrize("record_type", ["InboundMessage", "SMTPApiError", ""])
def test_other_record_types_are_ignored(record_type: str) -> None:
    record = json.loads(fixture("postmark-delivery")) | {"RecordType": record_type}

    assert postmark.parse(json.dumps(record).encode()) == [
        IgnoredEvent(source="POSTMARK", name=record_type, reason="not a Herald event type")
    ]


@pytest.mark.parametrize("body", [b"", b"[{}]", b"true", b"{'RecordType': 'Delivery'}"])
def test_a_body_that_is_not_a_json_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedPayload):
        postmark.parse(body)
