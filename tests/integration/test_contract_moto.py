"""The contract a client reads: the OpenAPI document the API serves (and the Swagger page that shows
it), checked against the routes the template serves and the one error table, and the exact sentences
invalid input gets, through the real ApiFunction against moto."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from openapi_spec_validator import validate

from herald.domain.errors import ErrorCode
from herald.http.error_table import status_of
from herald.http.routes import ROUTES_ELSEWHERE
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import HeraldInMoto, herald_in_moto
from tests.support.api_docs import documented_routes

WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "order.paid"}}
SUCCESS = {
    ("post", "/api/v1/notifications/email"): "202",
    ("post", "/api/v1/notifications/webhook"): "202",
    ("post", "/api/v1/notifications/jobs/{id}/retry"): "201",
    ("post", "/api/v1/account/webhook-secret"): "201",
    ("post", "/api/v1/account/domains"): "201",
    ("put", "/api/v1/account/providers/{provider}"): "201",
    ("post", "/api/v1/account/checkout"): "201",
    ("post", "/api/v1/account/billing/portal"): "201",
    ("post", "/api/v1/account/keys"): "201",
    ("post", "/api/v1/account/members"): "201",
    ("post", "/api/v1/templates"): "201",
    ("post", "/api/v1/event-types"): "201",
    ("post", "/api/v1/events"): "202",
    ("post", "/api/v1/subscriptions"): "201",
    ("post", "/api/v1/portal-links"): "201",
}
PUBLIC = {"/api/v1/ping", "/api/v1/info", "/api/v1/health", "/api/v1/providers"}


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        resolve_publicly(monkeypatch)  # no DNS here: the webhook hosts of these tests resolve publicly
        with herald_in_moto(monkeypatch) as stack:
            yield stack


@pytest.fixture(scope="module")
def document(herald: HeraldInMoto) -> dict[str, Any]:
    answer = herald.api("GET", "/api/v1/openapi.json")
    assert answer.status == 200
    return answer.body


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _schema_name(response: dict[str, Any]) -> str:
    schema = response["content"]["application/json"]["schema"]
    reference = schema["allOf"][0]["$ref"] if "allOf" in schema else schema["$ref"]
    return str(reference).rsplit("/", 1)[1]


def test_the_served_document_is_valid_openapi_and_swagger_shows_that_very_document(
    herald: HeraldInMoto, document: dict[str, Any]
) -> None:
    validate(document)
    schemas = document["components"]["schemas"]
    assert {ref.rsplit("/", 1)[1] for ref in _refs(document)} <= set(schemas)
    assert not {"HTTPValidationError", "ValidationError", "ResponseValidationError"} & set(schemas)

    page = herald.api("GET", "/api/v1/docs")
    assert (page.status, page.headers["Content-Type"]) == (200, "text/html")
    embedded = re.search(r"spec: (\{.*\}),\n    presets:", page.text, re.DOTALL)
    assert embedded is not None
    assert json.loads(embedded.group(1).replace("<\\/", "</")) == document
    assert herald.api("GET", "/api/v1/docs?format=json").body == document


def test_every_route_the_template_serves_is_documented(
    herald: HeraldInMoto, document: dict[str, Any]
) -> None:
    served = {
        (route.method.lower(), route.path)
        for route in herald.topology.routes
        if route.function == "ApiFunction" and "{proxy+}" not in route.path
    }
    documented = {(method, path) for method, path, _ in _operations(document)}
    assert served <= documented
    # The API guide lists the same routes, and the two documentation routes besides.
    guide = {(method.lower(), path) for method, path in documented_routes()}
    assert guide - documented == {("get", "/api/v1/openapi.json"), ("get", "/api/v1/docs")}
    assert documented <= guide


# Routes whose success is a file or a document of its own, not an envelope: the media types they answer.
DOWNLOADS = {
    ("get", "/api/v1/notifications/jobs/export"): {"text/csv", "application/x-ndjson"},
    ("get", "/api/v1/event-types/openapi.json"): {"application/json"},
}


def test_every_route_answers_in_an_envelope_with_its_real_success_status(document: dict[str, Any]) -> None:
    for method, path, operation in _operations(document):
        statuses = operation["responses"]
        successes = {status: response for status, response in statuses.items() if int(status) < 300}
        expected = SUCCESS.get((method, path), "200")
        assert expected in successes, (method, path)
        for response in successes.values():
            if (method, path) in DOWNLOADS:
                # A file to save, not an envelope; its errors are envelopes like every route's.
                assert set(response["content"]) == DOWNLOADS[(method, path)], (method, path)
                continue
            assert _schema_name(response).endswith("Response"), (method, path)
        assert all(
            _schema_name(response) == "ErrorEnvelope"
            for status, response in statuses.items()
            if int(status) >= 400 and path != "/api/v1/health"
        ), (method, path)


def test_each_error_status_lists_codes_the_error_table_gives_that_status(document: dict[str, Any]) -> None:
    seen: set[ErrorCode] = set()
    for method, path, operation in _operations(document):
        for status, response in operation["responses"].items():
            if "application/json" not in response["content"]:
                continue  # a download (DOWNLOADS)
            schema = response["content"]["application/json"]["schema"]
            if "allOf" not in schema:
                continue
            codes = [ErrorCode(code) for code in schema["allOf"][1]["properties"]["code"]["enum"]]
            assert {status_of(code) for code in codes} == {int(status)}, (method, path, status)
            seen.update(codes)
        if path not in PUBLIC:
            assert {"401", "403", "503"} <= set(operation["responses"]), (method, path)
    assert ErrorCode.RATE_LIMIT_EXCEEDED in seen
    email = document["paths"]["/api/v1/notifications/email"]["post"]["responses"]
    assert email["429"]["headers"]["Retry-After"]["required"] is True
    assert {"400", "401", "403", "409", "413", "422", "429", "503"} <= set(email)


def test_the_document_describes_what_a_subscription_receives_as_webhooks(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    [(name, item)] = document["webhooks"].items()
    operation = item["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert (name, body["required"]) == ("event", ["id", "type", "timestamp", "data"])
    assert body["properties"]["timestamp"]["format"] == "date-time"
    assert body["properties"]["data"]["type"] == "object"
    headers = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert set(headers) == {
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "X-Webhook-Timestamp",
        "X-Webhook-Signature",
    }
    assert all(parameter["in"] == "header" and parameter["required"] for parameter in headers.values())
    assert set(operation["responses"]) == {"2XX", "default"}


def test_the_key_schemes_are_declared_once_and_public_routes_need_none(document: dict[str, Any]) -> None:
    assert document["components"]["securitySchemes"] == {
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        "bearer": {"type": "http", "scheme": "bearer", "description": "The API key as a bearer token"},
    }
    assert document["security"] == [{"apiKey": []}, {"bearer": []}]
    public = {path for method, path, operation in _operations(document) if operation.get("security") == []}
    assert public == PUBLIC


# ---------------------------------------------------------------- what invalid input reads


def test_a_header_name_ending_in_a_line_break_is_refused_at_acceptance(herald: HeraldInMoto) -> None:
    answer = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "headers": {"X-A\n": "1"}}, key=herald.new_key()
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: headers: invalid header name 'X-A\n'.",
    )


def test_every_field_problem_is_in_the_sentence_in_details_and_in_the_message_list(
    herald: HeraldInMoto,
) -> None:
    answer = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": "not-an-address", "subject": "two\nlines", "body": "<p>x</p>", "cc": "x@example.com"},
        key=herald.new_key(),
    )
    assert answer.status == 400
    lines = [
        "to: An email address must have an @-sign",
        "subject: must not contain line breaks",
        "cc: Unknown field 'cc'",
    ]
    assert answer.body["error"] == f"Invalid request: {'; '.join(lines)}."
    assert answer.body["message"] == lines
    assert [problem["field"] for problem in answer.body["details"]] == ["to", "subject", "cc"]


@pytest.mark.parametrize("value", ["", "k" * 256, "tab\there", "ключ", "key\n"])
def test_the_idempotency_key_field_reads_like_the_header(herald: HeraldInMoto, value: str) -> None:
    """One rule and one sentence for the body field and the header (whose test is with the hostile
    requests), and the document states that rule for both."""
    answer = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "idempotencyKey": value}, key=herald.new_key()
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: idempotencyKey: must be 1-255 printable ASCII characters.",
    )


@pytest.mark.parametrize("media_type", ["multipart/form-data", "application/x-www-form-urlencoded"])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/v1/notifications/email"),
        ("PUT", "/api/v1/account/providers/SENDGRID"),
        ("PATCH", "/api/v1/account/providers/SENDGRID"),
    ],
)
def test_form_data_is_415_like_any_body_that_is_not_json(
    herald: HeraldInMoto, media_type: str, method: str, path: str
) -> None:
    """Powertools parses form data itself (and crashed on multipart): Herald refuses it first."""
    for key in (None, herald.new_key()):
        answer = herald.api(method, path, b"apiKey=a", key=key, content_type=media_type)
        assert (answer.status, answer.body["code"], answer.body["error"]) == (
            415,
            "unsupported_media_type",
            f"Request bodies must be JSON (Content-Type: application/json); this one is {media_type}.",
        )


@pytest.mark.parametrize("media_type", ["text/plain", "multipart/form-data"])
def test_an_empty_body_declared_as_anything_but_json_is_415(herald: HeraldInMoto, media_type: str) -> None:
    """Powertools parses even an empty body by its declared type (and crashed on multipart)."""
    for method, path in (
        ("PUT", "/api/v1/account/providers/SENDGRID"),
        ("POST", "/api/v1/notifications/jobs/x/retry"),
    ):
        answer = herald.api(method, path, key=herald.new_key(), content_type=media_type)
        assert (answer.status, answer.body["code"]) == (415, "unsupported_media_type")


def test_an_empty_body_sent_as_json_or_undeclared_is_read(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    for media_type in ("application/json; charset=utf-8", None):
        missing = herald.api("PUT", "/api/v1/account/providers/SENDGRID", key=key, content_type=media_type)
        assert (missing.status, missing.body["code"]) == (400, "validation_error")
        retry = herald.api("POST", "/api/v1/notifications/jobs/x/retry", key=key, content_type=media_type)
        assert (retry.status, retry.body["code"]) == (404, "job_not_retryable")


@pytest.mark.parametrize(
    "api_key", ["SG.key\nX-Injected: 1", "clé-é", "tab\tkey", " sandbox-key", "sandbox-key ", "   "]
)
def test_a_provider_key_no_http_header_can_carry_is_400_before_any_provider_call(
    herald: HeraldInMoto, api_key: str
) -> None:
    answer = herald.api(
        "PUT", "/api/v1/account/providers/SENDGRID", {"apiKey": api_key}, key=herald.new_key()
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: apiKey: must be printable ASCII without a space at either end "
        "(it is sent in an HTTP header).",
    )


def test_the_405_route_table_is_the_templates_and_the_resolvers(herald: HeraldInMoto) -> None:
    """A 405's Allow comes from two tables: the API function's resolver, and the inbound routes it
    answers the other methods of. Both agree with the template: every route the template gives the
    API function is the resolver's, every route of the resolver reaches it (through the catch-all
    under /api/v1 if not by its own), and the routes elsewhere are exactly the template's others
    under /api/v1 (the console's pages under /console never reach the API function)."""
    app = herald.handler_module("ApiFunction").app
    app.include_deferred()  # the account routes, otherwise included by the first request to one
    resolver = {
        (route.method, re.sub(r"<(\w+)>", r"{\1}", route.path))
        for route in (*app._static_routes, *app._dynamic_routes)
    }
    template = {(route.method, route.path, route.function) for route in herald.topology.routes}
    catch_all = ("ANY", "/api/v1/{proxy+}", "ApiFunction")
    assert catch_all in template
    own = {(method, path) for method, path, function in template - {catch_all} if function == "ApiFunction"}
    others = {
        (method, path)
        for method, path, function in template
        if function != "ApiFunction" and path.startswith("/api/v1/")
    }
    assert own <= resolver
    assert all(path.startswith("/api/v1/") for _, path in resolver)
    assert others == set(ROUTES_ELSEWHERE)


@pytest.mark.parametrize(
    ("to", "problem"),
    [
        # A '"' reads to an address parser as an unclosed quoted local part swallowing the @-sign.
        ('fail-500+"><script>@example.com', "'\"', '<', '>'"),
        # A '<' or '>' reads as the display-name form, "Name <address>".
        ("fail-500+><script>@example.com", "'<', '>'"),
        ("x<y>@example.com", "'<', '>'"),
        ("two words@example.com", "SPACE"),
        ("tab\there@example.com", "U+0009"),
    ],
)
def test_an_address_with_characters_a_local_part_cannot_hold_is_told_which(
    herald: HeraldInMoto, to: str, problem: str
) -> None:
    answer = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": to, "subject": "s", "body": "<p>x</p>"},
        key=herald.new_key(),
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        f"Invalid request: to: The email address contains invalid characters before the @-sign: {problem}.",
    )


@pytest.mark.parametrize("domain", ["not a domain", "localhost", "-mail.example.com", "mail.example.c0m"])
def test_a_domain_that_is_not_a_domain_name_is_told_what_one_looks_like(
    herald: HeraldInMoto, domain: str
) -> None:
    answer = herald.api("POST", "/api/v1/account/domains", {"domain": domain}, key=herald.new_key())
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: domain: must be a domain name such as mail.example.com: names of letters,"
        " digits and hyphens joined by dots, none starting or ending with a hyphen, the last one of two"
        " or more letters.",
    )


def test_a_day_filter_that_is_not_a_day_is_told_how_to_write_one(herald: HeraldInMoto) -> None:
    answer = herald.api("GET", "/api/v1/notifications/jobs?day=4.12.2026", key=herald.new_key())
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: day: must be a UTC day written YYYY-MM-DD, such as 2026-12-04.",
    )


def test_a_code_that_is_not_six_digits_is_told_so(herald: HeraldInMoto) -> None:
    answer = herald.api(
        "POST",
        "/api/v1/signin/verify",
        {"email": "ada@example.com", "code": "12345a"},
        headers={"origin": herald.origin},
    )
    assert (answer.status, answer.body["error"]) == (
        400,
        "Invalid request: code: must be the six digits of the emailed code.",
    )
