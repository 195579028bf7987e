"""Mailgun's webhooks: the signature inside the body (hex HMAC-SHA256 of timestamp and token with the
webhook signing key) attacked every way a header signature is, and Mailgun's events mapped to
Herald's."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import pytest

from herald.adapters.inbound import mailgun
from herald.adapters.inbound.verification import TOLERANCE_SECONDS
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
from herald_harness.vendors.mailgun import (
    MAILGUN_SIGNING_KEY,
    STRANGER_MAILGUN_KEY,
    mailgun_body,
    mailgun_signature,
)

NOW = 1_796_025_600
TOKEN = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a697887"
T = DeliveryEventType


def event_data(name: str = "mailgun-failed", **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture(name))["event-data"]
    return {**data, **changes}


def signed(at: int = NOW, key: str = MAILGUN_SIGNING_KEY, **changes: Any) -> dict[str, Any]:
    return {"signature": mailgun_signature(at, TOKEN, key), "event-data": event_data(**changes)}


def body_of(document: Any) -> bytes:
    return json.dumps(document).encode()


def refused(document: Any, now: float = NOW) -> str:
    body = document if isinstance(document, bytes) else body_of(document)
    with pytest.raises(InvalidSignature) as caught:
        mailgun.verify({}, body, MAILGUN_SIGNING_KEY, now)
    reason = caught.value.reason
    assert MAILGUN_SIGNING_KEY not in reason
    assert TOKEN not in reason
    return reason


# ---------------------------------------------------------------- verification


def test_a_genuine_request_verifies_as_mailguns_documented_check_computes_it() -> None:
    document = signed()
    digest = hmac.new(MAILGUN_SIGNING_KEY.encode(), f"{NOW}{TOKEN}".encode(), hashlib.sha256).hexdigest()

    assert document["signature"]["signature"] == digest
    mailgun.verify({}, body_of(document), MAILGUN_SIGNING_KEY, NOW)


@pytest.mark.parametrize("name", ["mailgun-delivered", "mailgun-failed"])
def test_the_sample_payloads_are_signed_with_the_test_key_at_the_samples_time(name: str) -> None:
    mailgun.verify({}, fixture(name), MAILGUN_SIGNING_KEY, NOW)


def test_a_forged_signature_is_refused() -> None:
    document = signed()
    digest = document["signature"]["signature"]
    document["signature"]["signature"] = ("0" if digest[0] != "0" else "1") + digest[1:]

    assert refused(document) == "the signature does not match its timestamp and token"


def test_a_signature_made_with_another_accounts_key_or_the_api_key_is_refused() -> None:
    for key in (STRANGER_MAILGUN_KEY, "key-0123456789abcdef0123456789abcdef"):
        assert refused(signed(key=key)) == "the signature does not match its timestamp and token"


def test_an_old_signature_with_a_fresh_timestamp_is_refused() -> None:
    document = signed(at=NOW - 3600)
    document["signature"]["timestamp"] = str(NOW)

    assert refused(document) == "the signature does not match its timestamp and token"


def test_another_token_under_a_genuine_signature_is_refused() -> None:
    document = signed()
    document["signature"]["token"] = TOKEN[::-1]

    assert refused(document) == "the signature does not match its timestamp and token"


@pytest.mark.parametrize(
    ("skew", "reason"),
    [
        (-(TOLERANCE_SECONDS + 1), "signature timestamp is more than 300 seconds old"),
        (-86_400, "signature timestamp is more than 300 seconds old"),
        (TOLERANCE_SECONDS + 1, "signature timestamp is more than 300 seconds in the future"),
    ],
    ids=["just too old", "a day old", "from the future"],
)
def test_a_genuine_signature_outside_five_minutes_is_refused(skew: int, reason: str) -> None:
    assert refused(signed(at=NOW + skew)) == reason


@pytest.mark.parametrize("skew", [-TOLERANCE_SECONDS, TOLERANCE_SECONDS])
def test_a_signature_at_the_edge_of_the_window_verifies(skew: int) -> None:
    mailgun.verify({}, body_of(signed(at=NOW + skew)), MAILGUN_SIGNING_KEY, NOW)


@pytest.mark.parametrize("timestamp", ["1796025600.0", "-1796025600", "+1796025600", "1_796_025_600", "17e8"])
def test_a_timestamp_that_is_not_unix_seconds_is_refused(timestamp: str) -> None:
    document = signed()
    document["signature"]["timestamp"] = timestamp

    assert refused(document) == "signature timestamp is not Unix seconds"


@pytest.mark.parametrize("field", ["timestamp", "token", "signature"])
@pytest.mark.parametrize(
    "value", [None, "", 1_796_025_600, ["x"]], ids=["missing", "empty", "number", "list"]
)
def test_a_signature_object_without_a_field_as_text_is_refused_naming_it(field: str, value: object) -> None:
    document = signed()
    if value is None:
        del document["signature"][field]
    else:
        document["signature"][field] = value

    assert refused(document) == f"the signature object holds no {field}"


@pytest.mark.parametrize("field", ["timestamp", "token", "signature"])
@pytest.mark.parametrize("garbage", ["ünïcödé", "v1\u2028", "a\x00b"], ids=["accents", "sep", "nul"])
def test_non_ascii_garbage_in_the_signature_object_is_refused(field: str, garbage: str) -> None:
    document = signed()
    document["signature"][field] = garbage

    assert refused(document) == f"the signature's {field} is not printable ASCII"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "the body is not JSON, so it holds no signature"),
        (b"\xff\xfe", "the body is not JSON, so it holds no signature"),
        (b"[]", "the body holds no signature object"),
        (b'{"event-data": {}}', "the body holds no signature object"),
        (b'{"signature": "abc"}', "the body holds no signature object"),
    ],
)
def test_a_body_without_a_signature_object_is_refused(body: bytes, reason: str) -> None:
    assert refused(body) == reason


@pytest.mark.parametrize("cut", [1, 2, 5])
def test_a_truncated_signature_is_refused(cut: int) -> None:
    document = signed()
    document["signature"]["signature"] = document["signature"]["signature"][:-cut]

    assert refused(document) == "the signature does not match its timestamp and token"


def test_the_signing_key_must_be_usable_when_stored() -> None:
    assert mailgun.signing_key(MAILGUN_SIGNING_KEY) == MAILGUN_SIGNING_KEY.encode()
    for unusable in ("", "key\n", "\x00"):
        with pytest.raises(UnusableSecret):
            mailgun.signing_key(unusable)


def test_the_single_use_token_is_the_signed_one() -> None:
    assert mailgun.single_use_token(body_of(signed()), {}) == TOKEN


# ---------------------------------------------------------------- events


def parsed(data: dict[str, Any]) -> DeliveryEvent | IgnoredEvent:
    [event] = mailgun.parse(body_of({"signature": mailgun_signature(NOW, TOKEN), "event-data": data}), {})
    return event


def test_a_permanent_failure_is_a_hard_bounce_tied_to_its_job_and_tenant() -> None:
    event = parsed(event_data())

    assert event == DeliveryEvent(
        provider=ProviderName.MAILGUN,
        event_id="G9Bn5sl1TC6nu79C8C0bwg",
        type=T.BOUNCED,
        recipient="ada.lovelace@example.org",
        occurred_at="2026-11-30T07:59:58.500Z",
        job_id=JOB_ID,
        tenant_id=TENANT_ID,
        provider_message_id="20261130075957.2.A0B1C2D3E4F5@acme.example",
        reason="The email account that you tried to reach does not exist.",
    )
    assert event.suppresses_recipient


@pytest.mark.parametrize(
    ("changes", "kind"),
    [
        ({"severity": "temporary"}, T.SOFT_BOUNCED),
        ({"event": "delivered"}, T.DELIVERED),
        ({"event": "opened"}, T.OPENED),
        ({"event": "clicked", "url": "https://acme.example/offer"}, T.CLICKED),
        ({"event": "unsubscribed"}, T.UNSUBSCRIBED),
        ({"event": "complained"}, T.COMPLAINED),
    ],
)
def test_mailguns_events_map_to_heralds(changes: dict[str, Any], kind: DeliveryEventType) -> None:
    event = parsed(event_data(**changes))

    assert isinstance(event, DeliveryEvent)
    assert event.type is kind


def test_the_delivered_sample_is_a_delivery_with_its_recipient_in_lower_case() -> None:
    event = parsed(event_data("mailgun-delivered"))

    assert isinstance(event, DeliveryEvent)
    assert (event.type, event.recipient, event.reason) == (T.DELIVERED, "ada.lovelace@example.org", "OK")


@pytest.mark.parametrize("name", ["accepted", "stored", "list_member_uploaded", ""])
def test_events_herald_has_no_use_for_are_ignored(name: str) -> None:
    assert parsed(event_data(event=name)) == IgnoredEvent(
        source="MAILGUN", name=name, reason="not a Herald event type"
    )


def test_an_event_without_a_recipient_is_ignored() -> None:
    data = event_data()
    del data["recipient"]

    assert parsed(data) == IgnoredEvent(source="MAILGUN", name="failed", reason="no recipient")


def test_an_event_without_an_id_gets_one_from_its_bytes() -> None:
    data = event_data()
    del data["id"]
    body = body_of({"signature": mailgun_signature(NOW, TOKEN), "event-data": data})

    [first] = mailgun.parse(body, {})
    [again] = mailgun.parse(body, {})
    assert isinstance(first, DeliveryEvent)
    assert isinstance(again, DeliveryEvent)
    assert first.event_id == again.event_id
    assert first.event_id.startswith("sha256:")


def test_a_body_that_is_not_an_object_is_malformed() -> None:
    with pytest.raises(MalformedPayload):
        mailgun.parse(b"[1, 2]", {})


def test_a_fresh_body_signs_with_a_new_token_each_time() -> None:
    first, second = (json.loads(mailgun_body(event_data(), NOW)) for _ in range(2))

    assert first["signature"]["token"] != second["signature"]["token"]
