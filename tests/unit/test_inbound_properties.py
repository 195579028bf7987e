"""Properties of every inbound verifier and parser, over inputs hypothesis makes up:

- whatever arrives in the headers, a request that was not signed with the tenant's credentials is
  refused, with InvalidSignature and nothing else;
- a genuine signature over any body verifies, and the same signature over any other body does not;
- on any bytes, and on any JSON however shaped, a parser returns events or raises MalformedPayload.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from herald.domain.inbound import (
    DeliveryEvent,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    SubscriptionEvent,
)
from herald_harness.inbound_signers import SENDERS
from herald_harness.senders import Parse, Sender

NOW = 1_796_025_600
MESSAGE_ID = "msg_property"
HEADERS = {"svix-id": MESSAGE_ID, "webhook-id": MESSAGE_ID}

# One sender per parser (both Polar senders share theirs).
PARSERS = {sender.name.split("-", 1)[0]: sender.parse for sender in SENDERS}
# The field each parser branches on, and names that lead past that first lookup.
EVENT_NAMES = {
    "sendgrid": ("event", ["bounce", "delivered", "dropped", "click", "processed", "group_resubscribe"]),
    "resend": ("type", ["email.bounced", "email.delivered", "email.clicked", "email.failed", "email.sent"]),
    "postmark": ("RecordType", ["Bounce", "Delivery", "SubscriptionChange", "SpamComplaint", "Open"]),
    "paystack": (
        "event",
        ["invoice.update", "charge.success", "subscription.create", "subscription.expiring_cards"],
    ),
    "polar": ("type", ["subscription.canceled", "order.paid", "subscription.active", "checkout.created"]),
    "mailgun": ("event", ["failed", "delivered", "clicked", "complained", "accepted", "stored"]),
}


def enveloped(provider: str, report: dict[str, object]) -> object:
    """The body holding one report: SendGrid's is a batch, Mailgun's is under event-data."""
    return {"sendgrid": [report], "mailgun": {"event-data": report}}.get(provider, report)


# Fields the parsers read, at the top or one level down.
FIELDS = [
    "email", "timestamp", "type", "sg_event_id", "sg_message_id", "reason", "herald_job_id", "to", "tags",
    "bounce", "created_at", "Recipient", "Email", "ID", "Type", "Inactive", "Metadata", "SuppressSending",
    "DeliveredAt", "paid", "plan", "metadata", "customer", "subscription", "billing_reason", "cancel_at_period_end",
    "current_period_start", "period_end", "product_id", "recipient", "severity", "user-variables",
    "delivery-status", "id", "message", "signature",
]  # fmt: skip

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=15), children, max_size=4)
    ),
    max_leaves=20,
)
# Random values next to the ones the parsers single out.
field_values = (
    json_values
    | st.sampled_from(
        ["Permanent", "blocked", "HardBounce", "subscription_cycle", "2026-11-30T08:00:00Z", ""]
    )
    | st.sampled_from([True, 1_796_025_600, -1e300, 10**30])
)


def reports(name_field: str, names: list[str]) -> st.SearchStrategy[dict[str, object]]:
    fields = {field: field_values for field in FIELDS if field != name_field}
    nested = st.fixed_dictionaries({}, optional=fields)
    return st.fixed_dictionaries(
        {name_field: st.sampled_from(names), "data": nested | json_values}, optional=fields
    )


def parses_or_refuses(parse: Parse, body: bytes) -> None:
    try:
        events = parse(body, HEADERS)
    except MalformedPayload:
        return
    assert all(isinstance(event, DeliveryEvent | SubscriptionEvent | IgnoredEvent) for event in events)


def utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


by_name = pytest.mark.parametrize("sender", SENDERS, ids=lambda sender: sender.name)
# The senders that sign in headers (one that signs inside the body has no header to make up).
by_header_signer = pytest.mark.parametrize(
    "sender", [sender for sender in SENDERS if not sender.signed_in_body], ids=lambda sender: sender.name
)


@by_header_signer
@given(data=st.data(), made_up=st.text(max_size=120))
@settings(max_examples=60)
def test_a_genuine_request_with_any_one_header_made_up_is_refused(
    sender: Sender, data: st.DataObject, made_up: str
) -> None:
    header = data.draw(st.sampled_from(sender.headers))
    headers = sender.sign(b"{}", NOW, MESSAGE_ID)
    assume(headers[header].strip(" \t") != made_up.strip(" \t"))

    with pytest.raises(InvalidSignature):
        sender.verify(headers | {header: made_up}, b"{}", NOW)


@by_name
@given(
    headers=st.dictionaries(st.text(max_size=40), st.text(max_size=80), max_size=6),
    body=st.binary(max_size=200),
)
@settings(max_examples=60)
def test_made_up_headers_are_refused(sender: Sender, headers: dict[str, str], body: bytes) -> None:
    with pytest.raises(InvalidSignature):
        sender.verify(headers, body, NOW)


@by_header_signer
@given(data=st.data())
@settings(max_examples=60)
def test_a_genuine_signature_over_any_body_verifies_and_covers_that_body_only(
    sender: Sender, data: st.DataObject
) -> None:
    bodies = st.binary(max_size=300) if sender.signs_bytes else st.text(max_size=300).map(str.encode)
    body = data.draw(bodies)
    headers = sender.sign(body, NOW, MESSAGE_ID)

    sender.verify(headers, body, NOW)
    if sender.signs_body:
        other = data.draw(bodies.filter(lambda other: other != body))
        with pytest.raises(InvalidSignature):
            sender.verify(headers, other, NOW)


@pytest.mark.parametrize("provider", PARSERS)
@given(body=st.binary(max_size=300))
@settings(max_examples=100)
def test_parsers_take_any_bytes(provider: str, body: bytes) -> None:
    parses_or_refuses(PARSERS[provider], body)


@pytest.mark.parametrize("provider", PARSERS)
@given(value=json_values)
@settings(max_examples=150)
def test_parsers_take_any_json(provider: str, value: object) -> None:
    parses_or_refuses(PARSERS[provider], json.dumps(value).encode())


@pytest.mark.parametrize("provider", PARSERS)
@given(data=st.data())
@settings(max_examples=200)
def test_parsers_take_any_report_of_a_known_type(provider: str, data: st.DataObject) -> None:
    report = data.draw(reports(*EVENT_NAMES[provider]))
    body = json.dumps(enveloped(provider, report)).encode()

    parses_or_refuses(PARSERS[provider], body)


@pytest.mark.parametrize("provider", PARSERS)
@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b"1" * 5000, b'"\\ud800"', b"NaN", b"\xef\xbb\xbf{}"],
    ids=["deep nesting", "huge integer", "lone surrogate", "NaN", "UTF-8 BOM"],
)
def test_parsers_survive_json_edge_cases(provider: str, body: bytes) -> None:
    parses_or_refuses(PARSERS[provider], body)
