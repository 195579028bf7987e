"""Properties of the request rules, over inputs hypothesis makes up:

- the rules the OpenAPI document states (idempotency keys, provider keys) accept exactly what the
  validators accept, so a client that follows the document is never refused and the fuzzer's
  "valid" data is valid;
- a valid body survives the round trip to the job (dumped with the SDK's field names, read again);
- every webhook header Herald could not send as given (reserved names, line breaks, control and
  non-Latin-1 characters) is refused at acceptance, and every other one is kept;
- a payload is accepted exactly when it is finite JSON of at most 10 240 compact bytes;
- however many fields are wrong, the one sentence a client reads names each of them.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jsonschema_rs import Draft202012Validator
from pydantic import BaseModel, ValidationError

from herald.domain.jobs import compact_json
from herald.domain.notifications import format_character, line_breaking_character
from herald.domain.webhooks import (
    HERALD_HEADER_PREFIXES,
    HERALD_HEADERS,
    HOP_BY_HOP_HEADERS,
    HOP_BY_HOP_PREFIXES,
    reserved_header,
)
from herald.http.account_requests import ProviderKeyRequest, SignUpRequest
from herald.http.requests import (
    IDEMPOTENCY_KEY_RULE,
    MAX_WEBHOOK_PAYLOAD_BYTES,
    EmailRequest,
    WebhookRequest,
)
from herald.http.responses import validation_error
from tests.unit.test_notification_requests import EMAIL, WEBHOOK
from tests.unit.test_notification_requests import _errors as refusal

TOKEN_CHARS = "!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits

any_text = st.text(st.characters(codec="utf-8"), max_size=300)
header_names = st.text(TOKEN_CHARS, min_size=1, max_size=30).filter(
    lambda name: reserved_header(name) is None
)
# What an HTTP/1.1 header value may carry: visible Latin-1, space and tab.
sendable_values = st.text(
    st.sampled_from("\t" + "".join(map(chr, [*range(0x20, 0x7F), *range(0xA0, 0x100)])))
)
finite_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=20), children, max_size=5)
    ),
    max_leaves=30,
)


def _follows_documented_rule(value: str, rule: dict[str, Any]) -> bool:
    # As JSON Schema reads a pattern: its "$" is the very end, never before a final line break.
    pattern = rule["pattern"].removesuffix("$") + r"\Z"
    return rule["minLength"] <= len(value) <= rule["maxLength"] and re.search(pattern, value) is not None


def _accepts(model: type[BaseModel], body: dict[str, Any]) -> bool:
    try:
        model.model_validate(body)
    except ValidationError:
        return False
    return True


@given(any_text)
def test_an_idempotency_key_is_accepted_exactly_when_it_follows_the_documented_rule(value: str) -> None:
    accepted = _accepts(EmailRequest, {**EMAIL, "idempotencyKey": value})
    assert accepted == _follows_documented_rule(value, IDEMPOTENCY_KEY_RULE)


@given(any_text)
def test_a_provider_key_is_accepted_exactly_when_it_follows_the_documented_rule(value: str) -> None:
    rule = ProviderKeyRequest.model_json_schema()["properties"]["apiKey"]
    assert _accepts(ProviderKeyRequest, {"apiKey": value}) == _follows_documented_rule(value, rule)


@given(
    subject=st.text(min_size=1, max_size=998).filter(
        lambda text: line_breaking_character(text) is None and format_character(text) is None
    ),
    body=st.text(min_size=1, max_size=2000),
    priority=st.sampled_from([None, 1, 5, 10]),
    key=st.none() | st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=255),
)
def test_a_valid_email_survives_the_round_trip_to_the_job(
    subject: str, body: str, priority: int | None, key: str | None
) -> None:
    request = {**EMAIL, "subject": subject, "body": body, "priority": priority, "idempotencyKey": key}
    stored = EmailRequest.model_validate(request).model_dump(by_alias=True, exclude_none=True, mode="json")
    assert stored == {name: value for name, value in request.items() if value is not None}
    assert (
        EmailRequest.model_validate(stored).model_dump(by_alias=True, exclude_none=True, mode="json")
        == stored
    )


@given(st.text(max_size=30), st.sampled_from(["\r", "\n", "\r\n"]), st.text(max_size=30))
def test_a_subject_with_a_line_break_is_always_refused(before: str, line_break: str, after: str) -> None:
    errors = refusal(EmailRequest, {**EMAIL, "subject": before + line_break + after})
    assert [error["loc"][0] for error in errors] == ["subject"]


@given(st.integers() | st.floats() | st.text(max_size=3) | st.booleans())
def test_a_priority_is_one_of_the_sdks_three_integers_and_nothing_else(priority: object) -> None:
    """As JSON Schema reads "integer": 5 and 5.0 are the same number; "5" and true are no numbers."""
    whole = type(priority) is int or (isinstance(priority, float) and priority.is_integer())
    valid = whole and priority in (1, 5, 10)
    assert _accepts(EmailRequest, {**EMAIL, "priority": priority}) == valid


PROVIDER_CHOICES = st.sampled_from([None, "absent", "SENDGRID", "RESEND", "POSTMARK"])


@given(provider=PROVIDER_CHOICES, fallback=PROVIDER_CHOICES)
def test_the_documented_schema_and_the_validator_agree_on_provider_and_fallback(
    provider: str | None, fallback: str | None
) -> None:
    """A fallback needs a provider and differs from it; null is as good as leaving a field out."""
    body = {**EMAIL, "provider": provider, "fallback": fallback}
    body = {name: value for name, value in body.items() if value != "absent"}
    schema = Draft202012Validator(EmailRequest.model_json_schema())
    assert schema.is_valid(body) == _accepts(EmailRequest, body)


@given(st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]), max_size=40))
def test_the_documented_subject_pattern_and_the_validator_agree(subject: str) -> None:
    """On the Basic Multilingual Plane: ECMA-262 patterns have no spelling for the format characters
    beyond it, which the validator refuses too (the next test)."""
    rule = EmailRequest.model_json_schema()["properties"]["subject"]
    follows = 1 <= len(subject) <= 998 and re.search(rule["pattern"].removesuffix("$") + r"\Z", subject)
    assert _accepts(EmailRequest, {**EMAIL, "subject": subject}) == bool(follows)


# Unicode 15 added these format characters; Python 3.11's unicodedata (Unicode 14) lacks them.
UNICODE_15_FORMAT = set(range(0x13439, 0x13440))
JOINERS = {0x200C, 0x200D}


def test_every_format_character_but_the_joiners_is_refused_in_a_subject() -> None:
    """The refused set is Unicode's category Cf, as this Python knows it, but for the two joiners."""
    refused = {code for code in range(0x110000) if format_character(chr(code)) is not None}
    category_cf = {code for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"}

    assert refused - category_cf <= UNICODE_15_FORMAT
    assert category_cf - refused == JOINERS
    for code in (0x200B, 0xFEFF, 0x202E, 0x2066, 0xE0001):
        [error] = refusal(EmailRequest, {**EMAIL, "subject": f"Your order{chr(code)} shipped"})
        assert error["msg"] == f"must not contain invisible or bidirectional format characters (U+{code:04X})"
    assert _accepts(
        EmailRequest, {**EMAIL, "subject": "\u0645\u06cc\u200c\u0631\u0648\u0645 \U0001f468\u200d\U0001f469"}
    )


@given(st.dictionaries(header_names, sendable_values, max_size=20))
def test_every_header_herald_can_send_as_given_is_kept(headers: dict[str, str]) -> None:
    assume(sum(len(name.encode()) + len(value.encode()) for name, value in headers.items()) <= 8 * 1024)
    assert WebhookRequest.model_validate({**WEBHOOK, "headers": headers}).headers == headers


@given(
    name=st.sampled_from(
        sorted(HERALD_HEADERS | HOP_BY_HOP_HEADERS)
        + [f"{prefix}x" for prefix in HERALD_HEADER_PREFIXES + HOP_BY_HOP_PREFIXES]
    ),
    casing=st.sampled_from([str.lower, str.upper, str.title]),
)
def test_a_header_herald_sets_is_refused_in_any_letter_case(name: str, casing: Any) -> None:
    errors = refusal(WebhookRequest, {**WEBHOOK, "headers": {casing(name): "v"}})
    assert [error["type"] for error in errors] == ["reserved_header"]


@given(
    prefix=sendable_values,
    bad=st.characters(codec="utf-8").filter(
        lambda char: (ord(char) < 0x20 and char != "\t") or 0x7F <= ord(char) < 0xA0 or ord(char) > 0xFF
    ),
    suffix=sendable_values,
)
def test_a_header_value_with_a_byte_no_header_can_carry_is_refused(
    prefix: str, bad: str, suffix: str
) -> None:
    errors = refusal(WebhookRequest, {**WEBHOOK, "headers": {"X-A": prefix + bad + suffix}})
    assert [error["type"] for error in errors] == ["invalid_header"]


@settings(max_examples=200)
@given(st.dictionaries(st.text(max_size=20), finite_json, max_size=6), st.integers(9_000, 10_300))
def test_a_payload_is_accepted_exactly_when_its_compact_json_fits(
    payload: dict[str, Any], padding: int
) -> None:
    # Padding brings the payload around the limit, from either side.
    payload = {**payload, "padding": "é" * (padding // 2)}
    fits = len(compact_json(payload)) <= MAX_WEBHOOK_PAYLOAD_BYTES
    assert _accepts(WebhookRequest, {**WEBHOOK, "payload": payload}) == fits


@given(finite_json, st.sampled_from([math.nan, math.inf, -math.inf]))
def test_a_payload_holding_nan_or_infinity_anywhere_is_refused(value: Any, number: float) -> None:
    errors = refusal(WebhookRequest, {**WEBHOOK, "payload": {"a": [value, {"b": number}]}})
    assert [error["type"] for error in errors] == ["invalid_number"]


@given(
    st.lists(
        st.sampled_from(
            [
                ("to", "not-an-address"),
                ("subject", ""),
                ("body", ""),
                ("priority", 3),
                ("replyTo", "x"),
                ("idempotencyKey", "tab\there"),
                ("provider", "SPARKPOST"),
                ("cc", "extra@example.com"),
            ]
        ),
        min_size=1,
        unique_by=lambda pair: pair[0],
    )
)
def test_the_one_sentence_a_client_reads_names_every_wrong_field(wrong: list[tuple[str, Any]]) -> None:
    with pytest.raises(ValidationError) as caught:
        EmailRequest.model_validate({**EMAIL, **dict(wrong)})
    # As the API's validation reports them: located in the body.
    error = validation_error(
        [{**problem, "loc": ("body", *problem["loc"])} for problem in caught.value.errors()]
    )
    assert sorted(problem.field for problem in error.details) == sorted(field for field, _ in wrong)
    assert all(f"{problem.field}: {problem.message}" in error.message for problem in error.details)
    assert error.extra["message"] == [f"{problem.field}: {problem.message}" for problem in error.details]


@pytest.mark.parametrize("hidden", ["\u200b", "\ufeff", "\u202e", "\u2066", "\u00ad", "\U000e0041", "\x00"])
def test_an_account_name_holds_no_invisible_control_or_format_character(hidden: str) -> None:
    """The account's name is shown to its members and written into Herald's emails to them."""
    [error] = refusal(SignUpRequest, {"email": "ada@example.com", "name": f"Acme{hidden} Inc"})
    assert (error["loc"], error["msg"]) == (("name",), "Value error, must be one line of visible text")
    assert SignUpRequest.model_validate({"email": "ada@example.com", "name": " Acme Inc "}).name == "Acme Inc"
