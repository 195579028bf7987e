"""Resend adapter: idempotent sends with byte-identical bodies, error classification by `name`,
the key check and domains, against a faked HTTP layer (``responses``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import responses

from herald.adapters.providers.resend import RESTRICTED_KEY_REASON, ResendProvider
from herald.adapters.providers.transport import TIMEOUT
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import ProviderName

BASE = "https://api.resend.com"
EMAILS_URL = f"{BASE}/emails"
DOMAINS_URL = f"{BASE}/domains"
KEY = "re_SecretKeyValue_0123456789"
CREDENTIAL = Credential(KEY)

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="01J9Z3W7K8QH3V5Y2C4D6F8G0H", tenant_id="tenant-42", from_address="hello@acme.test")

P, M, T = FailureKind.PROVIDER_PERMANENT, FailureKind.MESSAGE_PERMANENT, FailureKind.TRANSIENT


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as rsps:
        yield rsps


@pytest.fixture
def resend() -> ResendProvider:
    return ResendProvider(base_url=BASE, clock=lambda: 1_700_000_000.0)


def error(status: int, name: str, message: str) -> dict[str, Any]:
    return {"statusCode": status, "message": message, "name": name}


def failure_of(resend: ResendProvider) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as caught:
        resend.send(EMAIL, ROUTING, CREDENTIAL)
    return caught.value


# ---------------------------------------------------------------- send


def test_given_an_email_when_sent_then_resend_gets_the_key_the_job_id_as_idempotency_key_and_tags(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.POST, EMAILS_URL, json={"id": "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"})

    delivered = resend.send(EMAIL, ROUTING, CREDENTIAL)

    request = mocked.calls[0].request
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Idempotency-Key"] == ROUTING.job_id
    assert request.headers["Content-Type"] == "application/json"
    assert request.req_kwargs["timeout"] == TIMEOUT  # type: ignore[attr-defined]  # set by responses
    assert isinstance(request.body, bytes)
    assert json.loads(request.body) == {
        "from": "hello@acme.test",
        "to": ["ada@example.org"],
        "subject": "Welcome",
        "html": "<p>Hi</p>",
        "text": "Hi",
        "tags": [
            {"name": "herald_job_id", "value": ROUTING.job_id},
            {"name": "herald_tenant_id", "value": "tenant-42"},
        ],
    }
    assert delivered.provider is ProviderName.RESEND
    assert delivered.provider_message_id == "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"


def test_given_the_same_job_sent_twice_then_both_attempts_carry_byte_identical_bodies_and_key(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.POST, EMAILS_URL, status=500, json=error(500, "internal_server_error", "oops"))
    mocked.add(responses.POST, EMAILS_URL, json={"id": "e-1"})

    with pytest.raises(ProviderFailure):
        resend.send(EMAIL, ROUTING, CREDENTIAL)
    resend.send(EMAIL, ROUTING, CREDENTIAL)

    first, second = (call.request for call in mocked.calls)
    assert first.body == second.body
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"] == ROUTING.job_id


def test_given_a_sender_name_and_reply_to_then_from_is_an_rfc5322_mailbox_and_reply_to_a_list(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.POST, EMAILS_URL, json={"id": "e-1"})
    email = EmailNotification(
        to="ada@example.org", subject="S", body="<b>x</b>", reply_to="support@acme.test"
    )
    routing = Routing(job_id="j", tenant_id="t", from_address="hello@acme.test", from_name="Acme, Inc.")

    resend.send(email, routing, CREDENTIAL)

    body = mocked.calls[0].request.body
    assert isinstance(body, bytes)
    sent = json.loads(body)
    assert sent["from"] == '"Acme, Inc." <hello@acme.test>'
    assert sent["reply_to"] == ["support@acme.test"]
    assert "text" not in sent


def test_given_a_success_without_an_id_then_the_email_counts_as_delivered_without_one(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.POST, EMAILS_URL, body="")

    assert resend.send(EMAIL, ROUTING, CREDENTIAL).provider_message_id is None


# ---------------------------------------------------------------- failure classification


@pytest.mark.parametrize(
    ("status", "name", "message", "kind"),
    [
        pytest.param(
            401, "missing_api_key", "Missing API key in the authorization header.", P, id="401-missing"
        ),
        pytest.param(403, "invalid_api_key", "API key is invalid", P, id="403-invalid-key-old"),
        pytest.param(400, "validation_error", "API key is invalid", P, id="400-invalid-key-new"),
        pytest.param(401, "validation_error", "API key is invalid", P, id="401-invalid-key-send"),
        pytest.param(401, "restricted_api_key", "This API key is restricted to only send emails", P),
        pytest.param(403, "suspended_api_key", "This API key has been suspended", P, id="403-suspended"),
        pytest.param(403, "invalid_permission", "The token lacks the required scope", P, id="403-permission"),
        pytest.param(
            403,
            "validation_error",
            "The acme.test domain is not verified. Please, add and verify your domain on https://resend.com/domains",
            P,
            id="403-domain-not-verified",
        ),
        pytest.param(
            403,
            "validation_error",
            "You can only send testing emails to your own email address (owner@acme.test).",
            P,
            id="403-testing-only",
        ),
        pytest.param(403, "invalid_from_address", "Invalid `from` field.", P, id="403-from-old"),
        pytest.param(400, "validation_error", "Invalid `to` field. The email address needs to follow ...", M),
        pytest.param(422, "validation_error", "Invalid `to` field.", M, id="422-recipient"),
        pytest.param(422, "missing_required_field", "Missing `subject` field.", M, id="422-missing-field"),
        pytest.param(422, "invalid_parameter", "Invalid `scheduled_at` field.", M, id="422-parameter"),
        pytest.param(422, "invalid_attachment", "Attachment must have either a content or path.", M),
        pytest.param(400, "invalid_idempotency_key", "The key must be between 1-256 chars.", M),
        pytest.param(
            409,
            "concurrent_idempotent_requests",
            "Same idempotency key used while original request is still in progress.",
            T,
            id="409-concurrent",
        ),
        pytest.param(
            409,
            "invalid_idempotent_request",
            "Same idempotency key used with a different request payload.",
            P,
            id="409-different-payload",
        ),
        pytest.param(429, "daily_quota_exceeded", "You have reached your daily email sending quota.", T),
        pytest.param(429, "monthly_quota_exceeded", "You have reached your monthly email sending quota.", P),
        pytest.param(500, "application_error", "An unexpected error occurred.", T, id="500-application"),
        pytest.param(500, "internal_server_error", "An unexpected error occurred.", T, id="500-internal"),
        pytest.param(503, "service_unavailable", "Service unavailable.", T, id="503"),
    ],
)
def test_given_a_resend_error_when_sent_then_it_is_classified_per_the_fact_sheet(
    mocked: responses.RequestsMock,
    resend: ResendProvider,
    *,
    status: int,
    name: str,
    message: str,
    kind: FailureKind,
) -> None:
    mocked.add(responses.POST, EMAILS_URL, status=status, json=error(status, name, message))

    failure = failure_of(resend)

    assert failure.kind is kind
    assert failure.code == name
    assert failure.status == status
    assert failure.reason == message
    assert failure.suppress_recipient is False


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "2", "ratelimit-reset": "1"}, 2.0, id="retry-after-wins"),
        pytest.param({"ratelimit-reset": "1", "ratelimit-remaining": "0"}, 1.0, id="reset-is-a-delay"),
        pytest.param({"retry-after": "Tue, 14 Nov 2023 22:13:30 GMT"}, 10.0, id="http-date"),
        pytest.param({}, None, id="no-hint"),
    ],
)
def test_given_a_rate_limit_then_the_wait_comes_from_resends_headers(
    mocked: responses.RequestsMock, resend: ResendProvider, headers: dict[str, str], expected: float | None
) -> None:
    body = error(429, "rate_limit_exceeded", "Too many requests. You can only make 5 requests per second.")
    mocked.add(responses.POST, EMAILS_URL, status=429, json=body, headers=headers)

    failure = failure_of(resend)

    assert failure.kind is T
    assert failure.code == "rate_limit_exceeded"
    assert failure.retry_after_seconds == expected


def test_given_a_monthly_quota_then_no_wait_is_suggested(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    body = error(429, "monthly_quota_exceeded", "You have reached your monthly email sending quota.")
    mocked.add(responses.POST, EMAILS_URL, status=429, json=body, headers={"retry-after": "86400"})

    assert failure_of(resend).retry_after_seconds is None


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        pytest.param(502, "<html><body>Bad Gateway</body></html>", T, id="502-html"),
        pytest.param(403, "<html><body>Forbidden</body></html>", P, id="403-html"),
        pytest.param(400, "", M, id="400-empty"),
    ],
)
def test_given_a_non_json_error_body_then_the_status_decides(
    mocked: responses.RequestsMock, resend: ResendProvider, status: int, body: str, kind: FailureKind
) -> None:
    mocked.add(responses.POST, EMAILS_URL, status=status, body=body, content_type="text/html")

    failure = failure_of(resend)

    assert failure.kind is kind
    assert failure.code is None
    assert failure.reason == f"HTTP {status} without a readable error message"


@pytest.mark.parametrize(
    "error_raised",
    [requests.exceptions.ReadTimeout("read timed out"), requests.exceptions.ConnectionError("reset by peer")],
)
def test_given_a_network_failure_then_it_is_transient(
    mocked: responses.RequestsMock, resend: ResendProvider, error_raised: Exception
) -> None:
    mocked.add(responses.POST, EMAILS_URL, body=error_raised)

    assert failure_of(resend).kind is T


def test_given_an_error_that_echoes_the_key_then_neither_failure_text_nor_logs_contain_it(
    mocked: responses.RequestsMock, resend: ResendProvider, caplog: pytest.LogCaptureFixture
) -> None:
    mocked.add(
        responses.POST,
        EMAILS_URL,
        status=401,
        json=error(401, "validation_error", f"API key {KEY} is invalid"),
    )
    caplog.set_level(logging.DEBUG)

    failure = failure_of(resend)

    for text in (str(failure), repr(failure), failure.reason, repr(CREDENTIAL), caplog.text):
        assert KEY not in text


# ---------------------------------------------------------------- key check


def test_given_a_full_access_key_then_the_check_says_valid(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.GET, DOMAINS_URL, json={"object": "list", "has_more": False, "data": []})

    check = resend.check_key(CREDENTIAL)

    assert mocked.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"
    assert check.valid is True
    assert check.details == {"full_access": True}


def test_given_a_sending_only_key_then_the_check_says_invalid_for_herald_with_a_clear_reason(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    body = error(401, "restricted_api_key", "This API key is restricted to only send emails")
    mocked.add(responses.GET, DOMAINS_URL, status=401, json=body)

    check = resend.check_key(CREDENTIAL)

    assert check.valid is False
    assert check.reason == RESTRICTED_KEY_REASON
    assert check.details == {"full_access": False}


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (400, "validation_error"),
        (401, "validation_error"),
        (403, "invalid_api_key"),
        (401, "missing_api_key"),
    ],
)
def test_given_an_invalid_key_then_the_check_says_invalid(
    mocked: responses.RequestsMock, resend: ResendProvider, status: int, name: str
) -> None:
    mocked.add(responses.GET, DOMAINS_URL, status=status, json=error(status, name, "API key is invalid"))

    check = resend.check_key(CREDENTIAL)

    assert check.valid is False
    assert check.reason == "API key is invalid"


@pytest.mark.parametrize("status", [429, 500])
def test_given_resend_cannot_answer_then_the_check_raises(
    mocked: responses.RequestsMock, resend: ResendProvider, status: int
) -> None:
    mocked.add(
        responses.GET, DOMAINS_URL, status=status, json=error(status, "rate_limit_exceeded", "slow down")
    )

    with pytest.raises(ProviderFailure) as caught:
        resend.check_key(CREDENTIAL)

    assert caught.value.kind is T


# ---------------------------------------------------------------- domains

DOMAIN_ID = "4dd369bc-aa82-4ff3-97de-514ae3000ee0"


def resend_domain(status: str, dkim_status: str) -> dict[str, Any]:
    return {
        "object": "domain",
        "id": DOMAIN_ID,
        "name": "acme.test",
        "status": status,
        "region": "us-east-1",
        "records": [
            {
                "record": "SPF",
                "name": "send",
                "type": "MX",
                "ttl": "Auto",
                "status": "verified",
                "value": "feedback-smtp.us-east-1.amazonses.com",
                "priority": 10,
            },
            {
                "record": "SPF",
                "name": "send",
                "value": '"v=spf1 include:amazonses.com ~all"',
                "type": "TXT",
                "ttl": "Auto",
                "status": "temporary_failure",
            },
            {
                "record": "DKIM",
                "name": "resend._domainkey",
                "value": "p=MIGfMA0GCSqGSIb3DQEB",
                "type": "TXT",
                "status": dkim_status,
                "ttl": "Auto",
            },
        ],
    }


def test_given_a_domain_when_registered_then_records_come_back_fully_qualified(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(responses.POST, DOMAINS_URL, status=201, json=resend_domain("not_started", "not_started"))

    registration = resend.register_domain("acme.test", CREDENTIAL)

    body = mocked.calls[0].request.body
    assert isinstance(body, bytes)
    assert json.loads(body) == {"name": "acme.test"}
    assert registration.provider is ProviderName.RESEND
    assert registration.provider_domain_id == DOMAIN_ID
    assert registration.verified is False
    assert [(r.type, r.host, r.purpose, r.priority, r.status) for r in registration.records] == [
        ("MX", "send.acme.test", "mx", 10, "verified"),
        ("TXT", "send.acme.test", "spf", None, "pending"),
        ("TXT", "resend._domainkey.acme.test", "dkim", None, "pending"),
    ]


def test_given_a_domain_when_verified_then_resend_is_asked_to_verify_and_the_domain_is_read_back(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(
        responses.POST, f"{DOMAINS_URL}/{DOMAIN_ID}/verify", json={"object": "domain", "id": DOMAIN_ID}
    )
    mocked.add(responses.GET, f"{DOMAINS_URL}/{DOMAIN_ID}", json=resend_domain("verified", "verified"))

    verification = resend.verify_domain(DOMAIN_ID, CREDENTIAL)

    assert verification.verified is True
    assert verification.records[-1].status == "verified"


def test_given_a_failed_dkim_record_then_verification_reports_it(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    mocked.add(
        responses.POST, f"{DOMAINS_URL}/{DOMAIN_ID}/verify", json={"object": "domain", "id": DOMAIN_ID}
    )
    mocked.add(responses.GET, f"{DOMAINS_URL}/{DOMAIN_ID}", json=resend_domain("partially_failed", "failed"))

    verification = resend.verify_domain(DOMAIN_ID, CREDENTIAL)

    assert verification.verified is False
    assert verification.records[-1].status == "failed"


@pytest.mark.parametrize(
    ("status", "body"),
    [(200, {"object": "domain", "id": DOMAIN_ID, "deleted": True}), (404, {"name": "not_found"})],
)
def test_given_a_domain_deleted_or_already_gone_then_delete_succeeds(
    mocked: responses.RequestsMock, resend: ResendProvider, status: int, body: dict[str, Any]
) -> None:
    mocked.add(responses.DELETE, f"{DOMAINS_URL}/{DOMAIN_ID}", status=status, json=body)

    resend.delete_domain(DOMAIN_ID, CREDENTIAL)

    assert len(mocked.calls) == 1


def test_given_a_restricted_key_when_registering_a_domain_then_it_raises_provider_permanent(
    mocked: responses.RequestsMock, resend: ResendProvider
) -> None:
    body = error(401, "restricted_api_key", "This API key is restricted to only send emails")
    mocked.add(responses.POST, DOMAINS_URL, status=401, json=body)

    with pytest.raises(ProviderFailure) as caught:
        resend.register_domain("acme.test", CREDENTIAL)

    assert caught.value.kind is P
    assert caught.value.code == "restricted_api_key"
