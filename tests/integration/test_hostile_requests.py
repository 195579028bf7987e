"""Hostile input to the real ApiFunction (moto resources from template.yaml): every request that once
answered 500, or was accepted and failed later, answers a 4xx in the error envelope and stores
nothing; a storage timeout answers 503."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError
from pynamodb.connection.base import Connection

from herald.http.guards import MAX_JSON_DEPTH
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, herald_in_moto
from herald_harness.inbound_samples import polar_subscription
from herald_harness.inbound_signers import POLAR_PRODUCT_INDIE, polar_headers

EMAIL = {"to": "user@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "order.paid"}}
POST_ROUTES = [
    "/api/v1/notifications/email",
    "/api/v1/notifications/webhook",
    "/api/v1/account/api-key/rotate",
    "/api/v1/account/domains",
]


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        resolve_publicly(monkeypatch)
        with herald_in_moto(monkeypatch) as stack:
            yield stack


def refused(answer: ApiAnswer, status: int, code: str) -> str:
    assert (answer.status, answer.body["success"], answer.body["code"]) == (status, False, code), answer.body
    assert answer.body["timestamp"].endswith("Z")
    message: str = answer.body["error"]
    return message


def jobs_of(herald: HeraldInMoto, key: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = herald.api("GET", "/api/v1/notifications/jobs", key=key).data["data"]
    return listed


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize("media_type", ["text/plain", "application/xml", "application/merge-patch+json"])
@pytest.mark.parametrize("with_key", [True, False])
def test_a_body_that_is_not_json_is_415_on_every_post_route(
    herald: HeraldInMoto, route: str, media_type: str, with_key: bool
) -> None:
    key = herald.new_key() if with_key else None
    answer = herald.api("POST", route, b'{"to":"x@example.com"}', key=key, content_type=media_type)
    message = refused(answer, 415, "unsupported_media_type")
    assert (
        message == f"Request bodies must be JSON (Content-Type: application/json); this one is {media_type}."
    )


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 256, 10_000])
def test_a_body_nested_too_deep_is_400_and_nothing_is_stored(herald: HeraldInMoto, depth: int) -> None:
    key = herald.new_key()
    nested = b'{"url":"https://hooks.example.com/in","payload":{"a":' + b"[" * depth + b"]" * depth + b"}}"
    message = refused(
        herald.api("POST", "/api/v1/notifications/webhook", nested, key=key), 400, "invalid_json"
    )
    assert message == f"The request body is nested more than {MAX_JSON_DEPTH} levels deep."
    assert jobs_of(herald, key) == []


def test_a_body_nested_to_the_limit_is_still_read(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    inner: Any = 1
    for _ in range(MAX_JSON_DEPTH - 2):
        inner = [inner]
    answer = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "payload": {"a": inner}}, key=key
    )
    assert answer.status == 202, answer.body


def test_an_integer_of_thousands_of_digits_is_400(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    body = b'{"to":"user@example.com","subject":"s","body":"b","priority":' + b"9" * 5000 + b"}"
    message = refused(herald.api("POST", "/api/v1/notifications/email", body, key=key), 400, "invalid_json")
    assert message.startswith("The request body is not valid JSON: Exceeds the limit (4300 digits)")


@pytest.mark.parametrize("body", [b"\xff\xfe\x00garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"])
def test_bytes_that_are_not_utf8_are_400(herald: HeraldInMoto, body: bytes) -> None:
    refused(
        herald.api("POST", "/api/v1/notifications/email", body, key=herald.new_key()), 400, "invalid_json"
    )


@pytest.mark.parametrize("cursor", ["!!!!", "%00", "%F0%9F%9A%80", "", "eA", "MjAyNi0xMS0zMA"])
def test_a_cursor_herald_did_not_hand_out_is_400(herald: HeraldInMoto, cursor: str) -> None:
    answer = herald.api("GET", f"/api/v1/notifications/jobs?cursor={cursor}", key=herald.new_key())
    if cursor == "":
        assert answer.status == 200  # an empty cursor is no cursor
        return
    assert refused(answer, 400, "invalid_cursor") == "The cursor is not valid."


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ({"X-A": "a\x00b"}, "header 'X-A' holds a control character or a character outside Latin-1"),
        ({"X-A": "a\x07b"}, "header 'X-A' holds a control character or a character outside Latin-1"),
        ({"X-A": "é🚀"}, "header 'X-A' holds a control character or a character outside Latin-1"),
        ({"X-A": "a\r\nX-B: c"}, "header 'X-A' contains a line break"),
        ({"Webhook-Id": "x"}, "header 'Webhook-Id' is set by Herald"),
        ({"X Bad": "x"}, "invalid header name 'X Bad'"),
    ],
)
def test_webhook_headers_no_http_stack_can_send_are_refused_at_acceptance(
    herald: HeraldInMoto, headers: dict[str, str], problem: str
) -> None:
    key = herald.new_key()
    answer = herald.api("POST", "/api/v1/notifications/webhook", {**WEBHOOK, "headers": headers}, key=key)
    assert refused(answer, 400, "validation_error") == f"Invalid request: headers: {problem}."
    assert answer.body["details"] == [{"field": "headers", "message": problem}]
    assert jobs_of(herald, key) == []


def test_a_latin1_header_value_is_accepted(herald: HeraldInMoto) -> None:
    answer = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "headers": {"X-A": "café"}}, key=herald.new_key()
    )
    assert answer.status == 202, answer.body


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_in_a_payload_are_400(herald: HeraldInMoto, number: bytes) -> None:
    key = herald.new_key()
    body = b'{"url":"https://hooks.example.com/in","payload":{"x":' + number + b"}}"
    answer = herald.api("POST", "/api/v1/notifications/webhook", body, key=key)
    assert (
        refused(answer, 400, "validation_error")
        == "Invalid request: payload: NaN and Infinity are not JSON numbers."
    )
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize("value", ["k" * 256, "a\tb", "k" * 5000, "ключ"])
def test_the_idempotency_key_header_follows_the_fields_rule(herald: HeraldInMoto, value: str) -> None:
    key = herald.new_key()
    answer = herald.api(
        "POST", "/api/v1/notifications/email", EMAIL, key=key, headers={"Idempotency-Key": value}
    )
    assert refused(answer, 400, "validation_error") == (
        "Invalid request: Idempotency-Key: must be 1-255 printable ASCII characters."
    )
    assert jobs_of(herald, key) == []


def test_a_paid_tenant_without_a_provider_is_403_at_acceptance(herald: HeraldInMoto) -> None:
    key = herald.new_tenant("indie", providers=()).api_key
    message = refused(
        herald.api("POST", "/api/v1/notifications/email", EMAIL, key=key), 403, "provider_required"
    )
    assert "PUT /api/v1/account/providers/{provider}" in message
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    ("operation", "route", "body"),
    [("PutItem", "/api/v1/notifications/webhook", WEBHOOK), ("GetItem", "/api/v1/notifications/jobs", None)],
)
def test_a_storage_timeout_is_503_not_500(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch, operation: str, route: str, body: Any
) -> None:
    """PynamoDB's own error code lookup fails on a read timeout; Herald's must not. The job write
    (PutItem) and the API key lookup (GetItem of a key not yet cached) each time out."""
    key = herald.new_key()
    real_call = Connection._make_api_call

    def timing_out(connection: Connection, name: str, params: Any) -> Any:
        if name == operation:
            raise ReadTimeoutError(endpoint_url="http://dynamodb.test")
        return real_call(connection, name, params)

    monkeypatch.setattr(Connection, "_make_api_call", timing_out)
    answer = herald.api("POST" if body else "GET", route, body, key=key)
    monkeypatch.undo()

    assert answer.status == 503, answer.body
    assert answer.body["code"] in {"storage_unavailable", "dependency_unavailable"}
    assert jobs_of(herald, key) == []


# ---------------------------------------------------------------- the second probe (issue 20)


@pytest.mark.parametrize("route", POST_ROUTES)
@pytest.mark.parametrize(
    "media_type", ["APPLICATION/JSON", "Application/Json", "Application/JSON; charset=UTF-8"]
)
def test_a_json_media_type_in_any_letter_case_is_json(
    herald: HeraldInMoto, route: str, media_type: str
) -> None:
    """Once a 500 internal_error on every POST, with a key or without: media types are
    case-insensitive, and the resolver's body parser only knew the lower-case spelling."""
    anonymous = herald.api("POST", route, {}, content_type=media_type)
    assert refused(anonymous, 401, "missing_api_key")
    answer = herald.api("POST", route, {"unknown": 1}, key=herald.new_key(), content_type=media_type)
    assert refused(answer, 400, "validation_error")


def test_an_email_sent_as_upper_case_json_is_accepted(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    answer = herald.api(
        "POST", "/api/v1/notifications/email", EMAIL, key=key, content_type="APPLICATION/JSON"
    )
    assert answer.status == 202, answer.body
    assert [job["id"] for job in jobs_of(herald, key)] == [answer.data["jobId"]]


def test_a_subject_in_bytes_that_are_not_utf8_is_400_and_nothing_is_stored(herald: HeraldInMoto) -> None:
    """Once 202, stored and sent as caf\ufffd: the local gateway replaced the byte, so the function saw
    valid JSON. The gateway now hands such a body over base64-encoded, as a JSON event must."""
    key = herald.new_key()
    body = b'{"to":"user@example.com","subject":"caf\xe9","body":"<p>Hi</p>"}'
    answer = herald.api("POST", "/api/v1/notifications/email", body, key=key)
    assert refused(answer, 400, "invalid_json") == "The request body is not UTF-8 text."
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    ("subject", "found"),
    [
        ("a\x00b", "U+0000"),
        ("a\tb", "U+0009"),
        ("a\u2028b", "U+2028"),
        ("a\u2029b", "U+2029"),
        ("a\x85b", "U+0085"),
    ],
)
def test_a_subject_with_a_control_character_or_line_separator_is_refused(
    herald: HeraldInMoto, subject: str, found: str
) -> None:
    key = herald.new_key()
    answer = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "subject": subject}, key=key)
    assert refused(answer, 400, "validation_error") == (
        f"Invalid request: subject: must not contain control characters or line separators ({found})."
    )
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/hooks/crlf\r\nX-Injected:1", "U+000D"),
        ("/hooks/t\tab", "U+0009"),
        ("/hooks/ls\u2028", "U+2028"),
        ("/hooks/nel\x85", "U+0085"),
    ],
)
def test_a_webhook_url_with_a_control_character_or_line_separator_is_refused(
    herald: HeraldInMoto, path: str, found: str
) -> None:
    """Once accepted: the URL parser dropped tab, CR and LF, and ".../crlf\r\nX-Injected:1" was
    delivered to ".../crlfX-Injected:1"; U+2028 crashed the worker."""
    key = herald.new_key()
    answer = herald.api(
        "POST",
        "/api/v1/notifications/webhook",
        {**WEBHOOK, "url": f"https://hooks.example.com{path}"},
        key=key,
    )
    assert refused(answer, 400, "url_not_allowed") == (
        f"The webhook URL is not allowed: the URL contains spaces or control characters ({found}); "
        "percent-encode them"
    )
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    "name",
    [
        "Connection",
        "upgrade",
        "TE",
        "Trailer",
        "Expect",
        "Keep-Alive",
        "Proxy-Authorization",
        "proxy-connection",
    ],
)
def test_a_hop_by_hop_header_is_refused_at_acceptance(herald: HeraldInMoto, name: str) -> None:
    key = herald.new_key()
    answer = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "headers": {name: "h2c"}}, key=key
    )
    problem = f"header '{name}' is hop-by-hop: it concerns the connection, not the receiver"
    assert refused(answer, 400, "validation_error") == f"Invalid request: headers: {problem}."
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/api/v1/ping", "GET"),
        ("TRACE", "/api/v1/ping", "GET"),
        ("POST", "/api/v1/account", "GET"),
        ("POST", "/api/v1/account/providers/SENDGRID", "DELETE, PATCH, PUT"),
        ("GET", "/api/v1/notifications/jobs/job-1/retry", "POST"),
        ("OPTIONS", "/api/v1/notifications/jobs/recover", "POST"),
        ("GET", "/api/v1/account/endpoints/hooks.example/enable", "POST"),
        ("DELETE", "/api/v1/notifications/email", "POST"),
        ("GET", "/api/v1/webhooks/sendgrid/6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71", "POST"),
        ("PUT", "/api/v1/payments/polar/webhook", "POST"),
    ],
)
def test_a_path_asked_with_a_method_it_does_not_take_is_405_with_exactly_its_methods(
    herald: HeraldInMoto, method: str, path: str, allowed: str
) -> None:
    """Once 404 "No route" (PUT /ping), and TRACE's Allow listed PUT, which then 404ed."""
    answer = herald.api(method, path, key=herald.new_key())
    assert refused(answer, 405, "method_not_allowed") == f"{path} does not accept {method} requests."
    assert answer.headers["Allow"] == allowed
    for method_allowed in allowed.split(", "):
        assert herald.api(method_allowed, path).status != 405


def test_a_path_no_route_serves_is_still_404(herald: HeraldInMoto) -> None:
    answer = herald.api("PUT", "/api/v1/pong")
    assert refused(answer, 404, "not_found") == "No route PUT /api/v1/pong."
    assert "Allow" not in answer.headers


def test_integral_numbers_are_integers_as_the_document_says(herald: HeraldInMoto) -> None:
    """{"priority": 2.0} was refused although the schema says "integer", which 2.0 is."""
    key = herald.new_key()
    moved = herald.api("PATCH", "/api/v1/account/providers/SENDGRID", {"priority": 1.0}, key=key)
    assert moved.status == 200, moved.body
    sent = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "priority": 10.0}, key=key)
    assert sent.status == 202, sent.body
    [job] = jobs_of(herald, key)
    assert job["priority"] == 10
    fraction = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "priority": 5.5}, key=key)
    assert (
        refused(fraction, 400, "validation_error")
        == "Invalid request: priority: Input should be a valid integer."
    )


def test_a_local_part_over_64_characters_is_refused(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    longest = herald.api(
        "POST", "/api/v1/notifications/email", {**EMAIL, "to": f"{'a' * 64}@example.com"}, key=key
    )
    assert longest.status == 202, longest.body
    answer = herald.api(
        "POST", "/api/v1/notifications/email", {**EMAIL, "to": f"{'a' * 65}@example.com"}, key=key
    )
    message = refused(answer, 400, "validation_error")
    assert message.startswith("Invalid request: to: The email address is too long before the @-sign")
    assert len(jobs_of(herald, key)) == 1


# ---------------------------------------------------------------- the third probe's requests

EDGE_TIMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:30:00+00:31"]
NOT_RFC3339 = [
    "2026-12-24T08:00:00Z\u0000junk",
    "2026-W52-1T00:00:00Z",
    "2026-12-24T08Z",
    "2026-12-24T08:00:00+01:00:30",
    "2026-12-24T08:00:00,5Z",
    "20261224T080000Z",
    "2026-12-24 08:00:00Z",
    "2026-12-24T08:00:00",
]
SEND_ROUTES = [("/api/v1/notifications/email", EMAIL), ("/api/v1/notifications/webhook", WEBHOOK)]


@pytest.mark.parametrize(("route", "body"), SEND_ROUTES)
@pytest.mark.parametrize("send_at", EDGE_TIMES)
def test_a_send_at_no_calendar_holds_in_utc_is_401_without_a_key_and_400_with_one(
    herald: HeraldInMoto, route: str, body: dict[str, Any], send_at: str
) -> None:
    """Converting these to UTC raised OverflowError: a 500 for anyone, before the key was read."""
    assert refused(herald.api("POST", route, {**body, "sendAt": send_at}), 401, "missing_api_key")
    key = herald.new_key()
    message = refused(
        herald.api("POST", route, {**body, "sendAt": send_at}, key=key), 400, "send_at_out_of_range"
    )
    assert (
        message
        == "sendAt must lie between now and 30 days ahead; it lies outside the years 0001-9999 in UTC."
    )
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize("edge", EDGE_TIMES)
def test_a_recovery_window_edge_no_calendar_holds_in_utc_is_400(
    herald: HeraldInMoto, field: str, edge: str
) -> None:
    key = herald.new_key()
    body = {"since": "2026-01-01T00:00:00Z", field: edge}
    answer = herald.api("POST", "/api/v1/notifications/jobs/recover", body, key=key)
    assert refused(answer, 400, "validation_error") == (
        f"Invalid request: {field}: lies outside the years 0001-9999 in UTC."
    )


@pytest.mark.parametrize("send_at", NOT_RFC3339)
def test_a_send_at_outside_rfc_3339_is_refused_not_read_leniently(herald: HeraldInMoto, send_at: str) -> None:
    """Python's parser took each of these (the first as if the NUL and what follows were not there)."""
    key = herald.new_key()
    answer = herald.api("POST", "/api/v1/notifications/webhook", {**WEBHOOK, "sendAt": send_at}, key=key)
    assert refused(answer, 400, "validation_error") == (
        "Invalid request: sendAt: must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:30:00Z."
    )
    recover = herald.api("POST", "/api/v1/notifications/jobs/recover", {"since": send_at}, key=key)
    assert refused(recover, 400, "validation_error").startswith("Invalid request: since: must be an RFC 3339")
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize("day", ["0001-01-01", "9999-12-31"])
def test_a_listing_of_a_day_at_either_end_of_the_calendar_is_empty(herald: HeraldInMoto, day: str) -> None:
    key = herald.new_key()
    answer = herald.api("GET", f"/api/v1/notifications/jobs?day={day}", key=key)
    assert (answer.status, answer.data["data"], answer.data["pagination"]["total"]) == (200, [], 0)


def test_a_field_named_twice_is_400_and_neither_value_is_taken(herald: HeraldInMoto) -> None:
    """Python kept the last of two "to" fields; a proxy that reads the first would have judged another
    recipient than the one mailed."""
    key = herald.new_key()
    body = b'{"to":"evil@example.com","to":"someone@example.com","subject":"Hi","body":"<p>Hi</p>"}'
    answer = herald.api("POST", "/api/v1/notifications/email", body, key=key)
    assert refused(answer, 400, "invalid_json") == (
        "The request body names 'to' twice in one object; names must be unique."
    )
    nested = b'{"url":"https://hooks.example.com/in","payload":{"amount":1,"amount":1000}}'
    answer = herald.api("POST", "/api/v1/notifications/webhook", nested, key=key)
    assert refused(answer, 400, "invalid_json").startswith("The request body names 'amount' twice")
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize("hidden", ["\u200b", "\ufeff", "\u202e", "\u2066", "\U000e0001"])
def test_a_subject_with_an_invisible_or_bidirectional_format_character_is_refused(
    herald: HeraldInMoto, hidden: str
) -> None:
    key = herald.new_key()
    subject = f"Invoice{hidden} paid"
    answer = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "subject": subject}, key=key)
    assert refused(answer, 400, "validation_error") == (
        "Invalid request: subject: must not contain invisible or bidirectional format characters"
        f" (U+{ord(hidden):04X})."
    )
    assert jobs_of(herald, key) == []


@pytest.mark.parametrize(
    "edge", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00+14:00", "2026-13-01T00:00:00Z"]
)
def test_a_payment_whose_period_ends_at_the_calendars_edge_is_taken_without_that_time(
    herald: HeraldInMoto, edge: str
) -> None:
    """A paid-until of 9999-12-31 broke the grace period's arithmetic: a 500, which the processor
    retries for days. A time no month can follow is read as no time: the period runs a month."""
    tenant = herald.new_tenant("free", providers=())
    event = json.loads(
        polar_subscription("subscription.active", tenant_id=tenant.tenant_id, product_id=POLAR_PRODUCT_INDIE)
    )
    event["data"]["current_period_end"] = edge
    body = json.dumps(event).encode()

    answer = herald.api(
        "POST",
        "/api/v1/payments/polar/webhook",
        body,
        headers=polar_headers(body, int(time.time()), f"evt-{uuid.uuid4()}"),
    )

    assert (answer.status, answer.data["recorded"]) == (200, 1)
    account = herald.api("GET", "/api/v1/account", key=tenant.api_key).data
    assert (account["plan"], account["periodStart"]) == ("indie", "2026-11-30T07:58:10.000Z")
    assert account["billing"]["paidUntil"] == "2026-12-30T07:58:10.000Z"
