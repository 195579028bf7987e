"""The HTTP edge of the inbound functions: what a sender gets back for each outcome, from an API
Gateway v2 event whose body may come base64-encoded."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.http.inbound import MAX_BODY_BYTES, platform_webhook, tenant_webhook
from herald.services.inbound import InboundRequest, Outcome, Receipt

TENANT = "6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71"


def event(body: bytes, *, encoded: bool = False, tenant_id: str = TENANT) -> dict[str, Any]:
    return {
        "headers": {"x-paystack-signature": "abc"},
        "body": base64.b64encode(body).decode() if encoded else body.decode(),
        "isBase64Encoded": encoded,
        "pathParameters": {"tenantId": tenant_id},
    }


def answer(result: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    document: dict[str, Any] = json.loads(result["body"])
    return result["statusCode"], document


@pytest.mark.parametrize("encoded", [False, True])
def test_the_receiver_gets_the_exact_bytes_and_the_sender_what_they_brought(encoded: bool) -> None:
    seen: list[tuple[str, InboundRequest]] = []
    body = '[{"email":"å@example.org"}]'.encode()

    def receive(tenant_id: str, request: InboundRequest) -> Receipt:
        seen.append((tenant_id, request))
        receipt = Receipt()
        receipt.add(Outcome.RECORDED)
        return receipt

    status, document = answer(tenant_webhook(event(body, encoded=encoded), receive))

    assert (status, document["success"], document["data"]) == (
        200,
        True,
        {"received": True, "recorded": 1, "duplicate": 0, "ignored": 0},
    )
    assert seen == [(TENANT, InboundRequest({"x-paystack-signature": "abc"}, body))]


@pytest.mark.parametrize("tenant_id", ["", "TENANT#x", TENANT.upper(), TENANT + "0"])
def test_a_path_that_names_no_tenant_is_404_without_a_lookup(tenant_id: str) -> None:
    def receive(_tenant: str, _request: InboundRequest) -> Receipt:
        raise AssertionError("no lookup for a malformed tenant id")

    status, document = answer(tenant_webhook(event(b"[]", tenant_id=tenant_id), receive))

    assert (status, document["code"]) == (404, "webhook_not_found")


@pytest.mark.parametrize(
    ("failure", "status", "code"),
    [
        (
            HeraldError("The webhook is not verified: bad.", ErrorCode.INVALID_SIGNATURE),
            401,
            "invalid_signature",
        ),
        (DependencyError("table write failed: Throttled"), 503, "dependency_unavailable"),
        (RuntimeError("a bug"), 500, "internal_error"),
    ],
)
def test_failures_answer_in_the_error_envelope_and_never_echo_the_cause(
    failure: Exception, status: int, code: str
) -> None:
    def receive(_request: InboundRequest) -> Receipt:
        raise failure

    got, document = answer(platform_webhook(event(b"{}"), receive))

    assert (got, document["success"], document["code"]) == (status, False, code)
    assert "Throttled" not in document["error"]
    assert "a bug" not in document["error"]


def test_a_body_over_the_limit_is_413_and_never_reaches_the_receiver() -> None:
    def receive(_request: InboundRequest) -> Receipt:
        raise AssertionError("not read")

    status, document = answer(platform_webhook(event(b"x" * (MAX_BODY_BYTES + 1), encoded=True), receive))

    assert (status, document["code"]) == (413, "payload_too_large")


def test_a_body_that_claims_base64_but_is_not_is_400() -> None:
    broken = {**event(b"{}"), "body": "not base64!", "isBase64Encoded": True}

    status, document = answer(platform_webhook(broken, lambda _request: Receipt()))

    assert (status, document["code"]) == (400, "validation_error")
