"""SendGrid adapter: the request it sends, how it reads answers, and how it classifies failures
as SendGrid's v3 API documents them, against a faked HTTP layer (``responses``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import responses

from herald.adapters.providers.sendgrid import SendGridProvider
from herald.adapters.providers.transport import TIMEOUT
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import ProviderName

BASE = "https://api.sendgrid.com"
SEND_URL = f"{BASE}/v3/mail/send"
NOW = 1_700_000_000.0
KEY = "SG.secret-key-value-0123456789"
CREDENTIAL = Credential(KEY)

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="hello@acme.test")


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as rsps:
        yield rsps


@pytest.fixture
def sendgrid() -> SendGridProvider:
    return SendGridProvider(base_url=BASE, clock=lambda: NOW)


def errors(message: str, field: str | None = None) -> dict[str, Any]:
    return {"errors": [{"message": message, "field": field, "help": None}]}


def sent_json(rsps: responses.RequestsMock, index: int = 0) -> Any:
    body = rsps.calls[index].request.body
    assert isinstance(body, bytes)
    return json.loads(body)


def failure_of(sendgrid: SendGridProvider) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as caught:
        sendgrid.send(EMAIL, ROUTING, CREDENTIAL)
    return caught.value


# ---------------------------------------------------------------- send


def test_given_an_email_when_sent_then_sendgrid_gets_the_bearer_key_and_the_exact_mail_body(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, SEND_URL, status=202, headers={"X-Message-Id": "sg-msg-1"})

    delivered = sendgrid.send(EMAIL, ROUTING, CREDENTIAL)

    request = mocked.calls[0].request
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Accept"] == "application/json"
    assert sent_json(mocked) == {
        "personalizations": [
            {
                "to": [{"email": "ada@example.org"}],
                "custom_args": {"herald_job_id": "job-0001", "herald_tenant_id": "tenant-42"},
            }
        ],
        "from": {"email": "hello@acme.test"},
        "subject": "Welcome",
        "content": [{"type": "text/plain", "value": "Hi"}, {"type": "text/html", "value": "<p>Hi</p>"}],
    }
    assert delivered.provider is ProviderName.SENDGRID
    assert delivered.provider_message_id == "sg-msg-1"


def test_given_a_reply_to_a_sender_name_and_no_text_when_sent_then_only_html_content_is_sent(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, SEND_URL, status=202)
    email = EmailNotification(
        to="ada@example.org", subject="S", body="<b>x</b>", reply_to="support@acme.test"
    )
    routing = Routing(job_id="j", tenant_id="t", from_address="hello@acme.test", from_name="Acme, Inc.")

    delivered = sendgrid.send(email, routing, CREDENTIAL)

    body = sent_json(mocked)
    assert body["from"] == {"email": "hello@acme.test", "name": "Acme, Inc."}
    assert body["reply_to"] == {"email": "support@acme.test"}
    assert body["content"] == [{"type": "text/html", "value": "<b>x</b>"}]
    assert delivered.provider_message_id is None


def test_every_call_is_bounded_by_connect_and_read_timeouts(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, SEND_URL, status=202)

    sendgrid.send(EMAIL, ROUTING, CREDENTIAL)

    assert mocked.calls[0].request.req_kwargs["timeout"] == TIMEOUT  # type: ignore[attr-defined]  # set by responses


def test_given_the_sandbox_prefix_as_base_url_then_the_real_path_is_appended(
    mocked: responses.RequestsMock,
) -> None:
    mocked.add(responses.POST, "http://127.0.0.1:8765/sendgrid/v3/mail/send", status=202)

    SendGridProvider(base_url="http://127.0.0.1:8765/sendgrid/").send(EMAIL, ROUTING, CREDENTIAL)

    assert len(mocked.calls) == 1


# ---------------------------------------------------------------- failure classification

NGINX_413 = "<html><head><title>413 Request Entity Too Large</title></head><body>nginx</body></html>"
HTML_503 = "<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>"

P, M, T = FailureKind.PROVIDER_PERMANENT, FailureKind.MESSAGE_PERMANENT, FailureKind.TRANSIENT


@pytest.mark.parametrize(
    ("status", "body", "kind", "reason_part"),
    [
        pytest.param(401, errors("authorization required"), P, "authorization required", id="401-bad-key"),
        pytest.param(
            401,
            errors("The provided authorization grant is invalid, expired, or revoked"),
            P,
            "revoked",
            id="401-revoked",
        ),
        pytest.param(401, errors("Maximum credits exceeded"), P, "Maximum credits", id="401-credits"),
        pytest.param(401, errors("Authenticated user is not authorized to send mail"), P, "not authorized"),
        pytest.param(403, errors("access forbidden"), P, "access forbidden", id="403-scope"),
        pytest.param(
            403,
            errors(
                "The from address does not match a verified Sender Identity. Mail cannot be sent until this "
                "error is resolved.",
                "from",
            ),
            P,
            "(field from)",
            id="403-unverified-sender",
        ),
        pytest.param(
            403, errors("Too many bad requests. Temporary block"), T, "Temporary block", id="403-block"
        ),
        pytest.param(
            400,
            errors("Does not contain a valid address.", "personalizations.0.to.0.email"),
            M,
            "personalizations.0.to.0.email",
            id="400-recipient",
        ),
        pytest.param(
            400,
            errors("The text/plain content type must be first, then text/html.", "content"),
            M,
            "text/plain",
            id="400-content",
        ),
        pytest.param(406, errors("Not Acceptable"), M, "Not Acceptable", id="406-accept"),
        pytest.param(413, errors("content too large"), M, "content too large", id="413-json"),
        pytest.param(413, NGINX_413, M, "HTTP 413", id="413-html"),
        pytest.param(451, errors("Unavailable for legal reasons"), P, "legal", id="451-residency"),
        pytest.param(404, "", P, "HTTP 404", id="404-wrong-base-url"),
        pytest.param(408, "", T, "HTTP 408", id="408"),
        pytest.param(500, errors("internal server error"), T, "internal server error", id="500"),
        pytest.param(503, HTML_503, T, "HTTP 503", id="503-html"),
        pytest.param(302, "", T, "HTTP 302", id="302-not-followed"),
    ],
)
def test_given_a_sendgrid_error_when_sent_then_it_is_classified_per_the_fact_sheet(
    mocked: responses.RequestsMock,
    sendgrid: SendGridProvider,
    *,
    status: int,
    body: dict[str, Any] | str,
    kind: FailureKind,
    reason_part: str,
) -> None:
    if isinstance(body, dict):
        mocked.add(responses.POST, SEND_URL, status=status, json=body)
    else:
        mocked.add(responses.POST, SEND_URL, status=status, body=body, content_type="text/html")

    failure = failure_of(sendgrid)

    assert failure.provider is ProviderName.SENDGRID
    assert failure.kind is kind
    assert failure.status == status
    assert reason_part in failure.reason
    assert failure.suppress_recipient is False
    assert "<html" not in failure.reason


@pytest.mark.parametrize(
    ("reset_header", "expected"),
    [
        pytest.param(str(int(NOW) + 42), 42.0, id="window-resets-in-42s"),
        pytest.param(str(int(NOW) - 5), 0.0, id="already-reset"),
        pytest.param(str(int(NOW) + 86_400), 3600.0, id="bounded-to-an-hour"),
        pytest.param("soon", None, id="unreadable"),
    ],
)
def test_given_a_429_then_the_wait_is_the_rate_limit_reset_epoch_minus_now(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, reset_header: str, expected: float | None
) -> None:
    headers = {"X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset_header}
    mocked.add(responses.POST, SEND_URL, status=429, json=errors("too many requests"), headers=headers)

    failure = failure_of(sendgrid)

    assert failure.kind is T
    assert failure.retry_after_seconds == expected


def test_given_a_permanent_failure_then_no_wait_is_suggested(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(
        responses.POST,
        SEND_URL,
        status=401,
        json=errors("authorization required"),
        headers={"Retry-After": "9"},
    )

    assert failure_of(sendgrid).retry_after_seconds is None


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(requests.exceptions.ConnectTimeout("connect timed out"), id="connect-timeout"),
        pytest.param(requests.exceptions.ReadTimeout("read timed out"), id="read-timeout"),
        pytest.param(requests.exceptions.ConnectionError("connection refused"), id="connection-error"),
    ],
)
def test_given_a_network_failure_when_sent_then_it_is_transient(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, error: Exception
) -> None:
    mocked.add(responses.POST, SEND_URL, body=error)

    failure = failure_of(sendgrid)

    assert failure.kind is T
    assert failure.status is None


def test_given_a_redirect_then_it_is_not_followed_and_the_key_never_reaches_the_target(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, SEND_URL, status=307, headers={"Location": "https://attacker.test/collect"})

    failure = failure_of(sendgrid)

    assert failure.kind is T
    assert [call.request.url for call in mocked.calls] == [SEND_URL]


def test_given_an_error_that_echoes_the_key_then_neither_failure_text_nor_logs_contain_it(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, caplog: pytest.LogCaptureFixture
) -> None:
    mocked.add(responses.POST, SEND_URL, status=401, json=errors(f"authorization grant {KEY} is revoked"))
    caplog.set_level(logging.DEBUG)

    failure = failure_of(sendgrid)

    assert "[redacted]" in failure.reason
    for text in (str(failure), repr(failure), failure.reason, repr(CREDENTIAL), str(CREDENTIAL), caplog.text):
        assert KEY not in text


def test_given_a_very_long_multiline_message_then_the_reason_is_one_trimmed_line(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, SEND_URL, status=400, json=errors("bad\nrequest " + "x" * 5000))

    reason = failure_of(sendgrid).reason

    assert "\n" not in reason
    assert reason.startswith("bad request x")
    assert len(reason) <= 200


# ---------------------------------------------------------------- key check

SCOPES_URL = f"{BASE}/v3/scopes"
DOMAIN_SCOPES = ["whitelabel.create", "whitelabel.delete", "whitelabel.read", "whitelabel.update"]


def test_given_a_key_with_mail_send_and_domain_scopes_then_the_key_is_valid(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.GET, SCOPES_URL, json={"scopes": ["mail.send", *DOMAIN_SCOPES]})

    check = sendgrid.check_key(CREDENTIAL)

    assert mocked.calls[0].request.headers["Authorization"] == f"Bearer {KEY}"
    assert check.valid is True
    assert check.reason is None
    assert check.details["domain_management"] is True
    assert "mail.send" in check.details["scopes"]  # type: ignore[operator]


def test_given_a_send_only_key_then_it_is_valid_with_a_note_about_domains(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.GET, SCOPES_URL, json={"scopes": ["mail.send"]})

    check = sendgrid.check_key(CREDENTIAL)

    assert check.valid is True
    assert check.details["domain_management"] is False
    assert check.reason is not None
    assert "domains" in check.reason


def test_given_a_key_without_mail_send_then_it_is_invalid(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.GET, SCOPES_URL, json={"scopes": ["stats.read", *DOMAIN_SCOPES]})

    check = sendgrid.check_key(CREDENTIAL)

    assert check.valid is False
    assert check.reason == "the SendGrid key lacks the mail.send scope"


@pytest.mark.parametrize("status", [401, 403])
def test_given_a_refused_key_then_the_check_says_invalid(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, status: int
) -> None:
    mocked.add(responses.GET, SCOPES_URL, status=status, json=errors("authorization required"))

    check = sendgrid.check_key(CREDENTIAL)

    assert check.valid is False
    assert check.reason == "authorization required"


@pytest.mark.parametrize("status", [429, 500, 503])
def test_given_sendgrid_cannot_answer_then_the_check_raises_a_transient_failure(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, status: int
) -> None:
    mocked.add(responses.GET, SCOPES_URL, status=status, body="")

    with pytest.raises(ProviderFailure) as caught:
        sendgrid.check_key(CREDENTIAL)

    assert caught.value.kind is T


# ---------------------------------------------------------------- domains

DOMAINS_URL = f"{BASE}/v3/whitelabel/domains"


def authenticated_domain(valid: bool) -> dict[str, Any]:
    return {
        "id": 302183,
        "user_id": 1446226,
        "subdomain": "em1234",
        "domain": "acme.test",
        "username": "acme",
        "default": False,
        "automatic_security": True,
        "valid": valid,
        "dns": {
            "mail_cname": {
                "valid": valid,
                "type": "cname",
                "host": "em1234.acme.test",
                "data": "u1446226.wl227.sendgrid.net",
            },
            "dkim1": {
                "valid": valid,
                "type": "cname",
                "host": "s1._domainkey.acme.test",
                "data": "s1.domainkey.x",
            },
            "dkim2": {
                "valid": False,
                "type": "cname",
                "host": "s2._domainkey.acme.test",
                "data": "s2.domainkey.x",
            },
        },
    }


def test_given_a_domain_when_registered_then_automatic_security_records_are_returned(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, DOMAINS_URL, status=201, json=authenticated_domain(valid=False))

    registration = sendgrid.register_domain("acme.test", CREDENTIAL)

    assert sent_json(mocked) == {"domain": "acme.test", "automatic_security": True}
    assert registration.provider is ProviderName.SENDGRID
    assert registration.provider_domain_id == "302183"
    assert registration.verified is False
    assert [(r.type, r.host, r.value, r.purpose, r.priority) for r in registration.records] == [
        ("CNAME", "em1234.acme.test", "u1446226.wl227.sendgrid.net", "return-path", None),
        ("CNAME", "s1._domainkey.acme.test", "s1.domainkey.x", "dkim", None),
        ("CNAME", "s2._domainkey.acme.test", "s2.domainkey.x", "dkim", None),
    ]


def test_given_a_refused_domain_then_registration_raises_a_classified_failure(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.POST, DOMAINS_URL, status=400, json=errors("invalid domain name", "domain"))

    with pytest.raises(ProviderFailure) as caught:
        sendgrid.register_domain("acme", CREDENTIAL)

    assert caught.value.kind is M


def test_given_a_registered_domain_when_verified_then_sendgrid_validates_and_reports_each_record(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(
        responses.POST,
        f"{DOMAINS_URL}/302183/validate",
        json={
            "id": 302183,
            "valid": True,
            "validation_results": {
                "mail_cname": {"valid": True, "reason": None},
                "dkim1": {"valid": True, "reason": None},
                "dkim2": {"valid": True, "reason": None},
            },
        },
    )
    mocked.add(responses.GET, f"{DOMAINS_URL}/302183", json=authenticated_domain(valid=True))

    verification = sendgrid.verify_domain("302183", CREDENTIAL)

    assert verification.verified is True
    assert [r.status for r in verification.records] == ["verified", "verified", "pending"]


def test_given_a_hostile_reference_then_it_stays_one_path_segment(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.DELETE, f"{DOMAINS_URL}/..%2F..%2Fuser%2Fprofile", status=204)

    sendgrid.delete_domain("../../user/profile", CREDENTIAL)

    assert mocked.calls[0].request.url == f"{DOMAINS_URL}/..%2F..%2Fuser%2Fprofile"


@pytest.mark.parametrize("status", [204, 404])
def test_given_a_domain_deleted_or_already_gone_then_delete_succeeds(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, status: int
) -> None:
    mocked.add(responses.DELETE, f"{DOMAINS_URL}/302183", status=status)

    sendgrid.delete_domain("302183", CREDENTIAL)

    assert len(mocked.calls) == 1


def test_given_sendgrid_fails_the_delete_then_it_raises(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider
) -> None:
    mocked.add(responses.DELETE, f"{DOMAINS_URL}/302183", status=500, json=errors("internal server error"))

    with pytest.raises(ProviderFailure) as caught:
        sendgrid.delete_domain("302183", CREDENTIAL)

    assert caught.value.kind is T


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("SG.valid-looking\r\nX-Injected: yes", id="header-injection"),
        pytest.param("SG.smart‘quote’-key", id="not-latin-1"),
    ],
)
def test_given_a_key_that_cannot_be_a_header_then_nothing_is_sent_and_the_key_is_not_echoed(
    mocked: responses.RequestsMock, sendgrid: SendGridProvider, key: str
) -> None:
    with pytest.raises(ProviderFailure) as caught:
        sendgrid.send(EMAIL, ROUTING, Credential(key))

    failure = caught.value
    assert failure.kind is P
    assert failure.__cause__ is None
    assert failure.__context__ is None
    assert key not in str(failure)
    assert key not in repr(failure)
    assert len(mocked.calls) == 0
