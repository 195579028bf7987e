"""Postmark adapter: the request it sends, classification by Postmark's ErrorCode, the
server/account token checks and domains with the account token, against ``responses``."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import responses
from responses import matchers

from herald.adapters.providers.postmark import DOMAINS_NEED_ACCOUNT_KEY, SANDBOX_REASON, PostmarkProvider
from herald.adapters.providers.transport import TIMEOUT
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import ProviderName

BASE = "https://api.postmarkapp.com"
EMAIL_URL = f"{BASE}/email"
SERVER_URL = f"{BASE}/server"
DOMAINS_URL = f"{BASE}/domains"
SERVER_TOKEN = "pm-server-token-1b2c3d4e-0000"
ACCOUNT_TOKEN = "pm-account-token-9f8e7d6c-0000"
SERVER_ONLY = Credential(SERVER_TOKEN)
BOTH_TOKENS = Credential(SERVER_TOKEN, ACCOUNT_TOKEN)

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="hello@acme.test")

P, M, T = FailureKind.PROVIDER_PERMANENT, FailureKind.MESSAGE_PERMANENT, FailureKind.TRANSIENT


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as rsps:
        yield rsps


@pytest.fixture
def postmark() -> PostmarkProvider:
    return PostmarkProvider(base_url=BASE, clock=lambda: 1_700_000_000.0)


def api_error(code: int, message: str) -> dict[str, Any]:
    return {"ErrorCode": code, "Message": message}


def failure_of(postmark: PostmarkProvider) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as caught:
        postmark.send(EMAIL, ROUTING, SERVER_ONLY)
    return caught.value


def sent_json(rsps: responses.RequestsMock) -> Any:
    body = rsps.calls[0].request.body
    assert isinstance(body, bytes)
    return json.loads(body)


# ---------------------------------------------------------------- send


def test_given_an_email_when_sent_then_postmark_gets_the_server_token_json_headers_and_metadata(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(
        responses.POST,
        EMAIL_URL,
        json={
            "To": "ada@example.org",
            "SubmittedAt": "2026-11-30T06:00:00.0000000-05:00",
            "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
            "ErrorCode": 0,
            "Message": "OK",
        },
    )

    delivered = postmark.send(EMAIL, ROUTING, SERVER_ONLY)

    request = mocked.calls[0].request
    assert request.headers["X-Postmark-Server-Token"] == SERVER_TOKEN
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Content-Type"] == "application/json"
    assert "Authorization" not in request.headers
    assert request.req_kwargs["timeout"] == TIMEOUT  # type: ignore[attr-defined]  # set by responses
    assert sent_json(mocked) == {
        "From": "hello@acme.test",
        "To": "ada@example.org",
        "Subject": "Welcome",
        "HtmlBody": "<p>Hi</p>",
        "TextBody": "Hi",
        "Metadata": {"herald_job_id": "job-0001", "herald_tenant_id": "tenant-42"},
        "MessageStream": "outbound",
    }
    assert delivered.provider is ProviderName.POSTMARK
    assert delivered.provider_message_id == "b7bc2f4a-e38e-4336-af7d-e6c392c2f817"


def test_given_a_sender_name_and_reply_to_then_both_are_sent(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.POST, EMAIL_URL, json={"MessageID": "m-1", "ErrorCode": 0, "Message": "OK"})
    email = EmailNotification(
        to="ada@example.org", subject="S", body="<b>x</b>", reply_to="support@acme.test"
    )
    routing = Routing(job_id="j", tenant_id="t", from_address="hello@acme.test", from_name="Acme")

    postmark.send(email, routing, SERVER_ONLY)

    sent = sent_json(mocked)
    assert sent["From"] == "Acme <hello@acme.test>"
    assert sent["ReplyTo"] == "support@acme.test"
    assert "TextBody" not in sent


# ---------------------------------------------------------------- failure classification


@pytest.mark.parametrize(
    ("status", "code", "message", "kind", "suppress"),
    [
        pytest.param(401, 10, "Bad or missing API token", P, False, id="401-10-bad-token"),
        pytest.param(
            422,
            300,
            "Error parsing 'To': Illegal email address 'ada'. It must contain the '@' symbol.",
            M,
            False,
            id="300-bad-recipient",
        ),
        pytest.param(422, 300, "Zero recipients specified", M, False, id="300-no-recipient"),
        pytest.param(
            422,
            300,
            "Invalid 'From' address: 'hello@acme.test' is not a verified sender signature.",
            P,
            False,
            id="300-from-not-verified",
        ),
        pytest.param(
            422,
            300,
            "The 'From' address you supplied (hello@acme.test) is not a Sender Signature on your account.",
            P,
            False,
            id="300-from-not-a-signature",
        ),
        pytest.param(422, 400, "Sender Signature not found", P, False, id="400-signature-missing"),
        pytest.param(422, 401, "Sender signature not confirmed", P, False, id="401-signature-unconfirmed"),
        pytest.param(422, 402, "Invalid JSON", M, False, id="402-invalid-json"),
        pytest.param(422, 403, "Incompatible JSON", M, False, id="403-incompatible-json"),
        pytest.param(
            422, 405, "Not allowed to send: you have run out of credits.", P, False, id="405-credits"
        ),
        pytest.param(
            422,
            406,
            "You tried to send to a recipient that has been marked as inactive.",
            M,
            True,
            id="406-inactive",
        ),
        pytest.param(422, 409, "JSON required", M, False, id="409-json-required"),
        pytest.param(422, 410, "Too many batch messages", M, False, id="410-batch"),
        pytest.param(422, 411, "Forbidden attachment type", M, False, id="411-attachment"),
        pytest.param(422, 412, "Account is Pending", P, False, id="412-pending"),
        pytest.param(422, 413, "Account May Not Send", P, False, id="413-suspended"),
        pytest.param(422, 429, "Rate Limit Exceeded", T, False, id="422-429-rate"),
        pytest.param(429, 429, "Rate Limit Exceeded", T, False, id="http-429"),
        pytest.param(500, 0, "Internal server error", T, False, id="500"),
        pytest.param(503, 0, "Service unavailable", T, False, id="503"),
        pytest.param(200, 406, "Inactive recipient", M, True, id="200-with-error-code"),
    ],
)
def test_given_a_postmark_error_when_sent_then_the_error_code_decides_per_the_fact_sheet(
    mocked: responses.RequestsMock,
    postmark: PostmarkProvider,
    *,
    status: int,
    code: int,
    message: str,
    kind: FailureKind,
    suppress: bool,
) -> None:
    mocked.add(responses.POST, EMAIL_URL, status=status, json=api_error(code, message))

    failure = failure_of(postmark)

    assert failure.kind is kind
    assert failure.code == str(code)
    assert failure.status == status
    assert failure.suppress_recipient is suppress
    assert failure.reason == message


@pytest.mark.parametrize(
    ("status", "body", "kind", "reason"),
    [
        pytest.param(
            403,
            "<html><head><title>403 Forbidden</title></head><body>Request blocked.</body></html>",
            P,
            "blocked by Postmark's network security layer",
            id="403-html-network-layer",
        ),
        pytest.param(
            413,
            "<html><body>413 Request Entity Too Large</body></html>",
            M,
            "HTTP 413 without a readable error message",
            id="413-html-too-large",
        ),
        pytest.param(502, "", T, "HTTP 502 without a readable error message", id="502-empty"),
    ],
)
def test_given_a_non_json_error_then_the_status_decides_without_crashing(
    mocked: responses.RequestsMock,
    postmark: PostmarkProvider,
    *,
    status: int,
    body: str,
    kind: FailureKind,
    reason: str,
) -> None:
    mocked.add(responses.POST, EMAIL_URL, status=status, body=body, content_type="text/html")

    failure = failure_of(postmark)

    assert failure.kind is kind
    assert failure.code is None
    assert failure.reason == reason


def test_given_a_429_with_retry_after_then_the_wait_is_reported(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(
        responses.POST,
        EMAIL_URL,
        status=429,
        json=api_error(429, "Rate limit"),
        headers={"Retry-After": "30"},
    )

    assert failure_of(postmark).retry_after_seconds == 30.0


def test_given_a_read_timeout_then_it_is_transient(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.POST, EMAIL_URL, body=requests.exceptions.ReadTimeout("read timed out"))

    assert failure_of(postmark).kind is T


def test_given_an_error_that_echoes_the_token_then_neither_failure_text_nor_logs_contain_it(
    mocked: responses.RequestsMock, postmark: PostmarkProvider, caplog: pytest.LogCaptureFixture
) -> None:
    mocked.add(responses.POST, EMAIL_URL, status=401, json=api_error(10, f"Bad token {SERVER_TOKEN}"))
    caplog.set_level(logging.DEBUG)

    failure = failure_of(postmark)

    for text in (str(failure), repr(failure), failure.reason, repr(BOTH_TOKENS), caplog.text):
        assert SERVER_TOKEN not in text
        assert ACCOUNT_TOKEN not in text


# ---------------------------------------------------------------- key check


def server(delivery_type: str) -> dict[str, Any]:
    return {
        "ID": 1,
        "Name": "Acme",
        "ApiTokens": [SERVER_TOKEN],
        "Color": "red",
        "SmtpApiActivated": True,
        "DeliveryType": delivery_type,
        "InboundAddress": "yourhash@inbound.postmarkapp.com",
        "InboundHookUrl": "",
        "BounceHookUrl": "https://user:pass@hooks.acme.test/bounce",
    }


def test_given_a_live_server_token_then_the_check_says_valid_and_keeps_nothing_of_the_server_object(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, json=server("Live"))

    check = postmark.check_key(SERVER_ONLY)

    assert mocked.calls[0].request.headers["X-Postmark-Server-Token"] == SERVER_TOKEN
    assert check.valid is True
    assert check.reason is None
    assert check.details == {"delivery_type": "Live"}
    assert SERVER_TOKEN not in repr(check)
    assert "pass@" not in repr(check)


def test_given_a_sandbox_server_then_the_check_is_valid_but_flags_it(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, json=server("Sandbox"))

    check = postmark.check_key(SERVER_ONLY)

    assert check.valid is True
    assert check.reason == SANDBOX_REASON
    assert check.details["delivery_type"] == "Sandbox"


def test_given_a_bad_server_token_then_the_check_says_invalid(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, status=401, json=api_error(10, "Bad or missing API token"))

    check = postmark.check_key(BOTH_TOKENS)

    assert check.valid is False
    assert check.reason == "the server token was refused: Bad or missing API token"
    assert len(mocked.calls) == 1


def test_given_an_account_token_then_it_is_checked_with_its_own_header(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, json=server("Live"))
    mocked.add(
        responses.GET,
        DOMAINS_URL,
        json={"TotalCount": 0, "Domains": []},
        match=[
            matchers.query_param_matcher({"count": "1", "offset": "0"}),
            matchers.header_matcher({"X-Postmark-Account-Token": ACCOUNT_TOKEN}),
        ],
    )

    check = postmark.check_key(BOTH_TOKENS)

    assert check.valid is True
    assert check.details == {"delivery_type": "Live", "account_token": True}
    assert "X-Postmark-Server-Token" not in mocked.calls[1].request.headers


def test_given_a_bad_account_token_then_the_check_says_invalid_naming_it(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, json=server("Live"))
    mocked.add(responses.GET, DOMAINS_URL, status=401, json=api_error(10, "Bad or missing API token"))

    check = postmark.check_key(BOTH_TOKENS)

    assert check.valid is False
    assert check.reason == "the account token was refused: Bad or missing API token"


def test_given_postmark_is_down_then_the_check_raises_a_transient_failure(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.GET, SERVER_URL, status=503, body="")

    with pytest.raises(ProviderFailure) as caught:
        postmark.check_key(SERVER_ONLY)

    assert caught.value.kind is T


# ---------------------------------------------------------------- domains


def domain_details(dkim_verified: bool, return_path_verified: bool) -> dict[str, Any]:
    return {
        "ID": 36735,
        "Name": "acme.test",
        "SPFVerified": False,
        "SPFHost": "acme.test",
        "SPFTextValue": "v=spf1 a mx include:spf.mtasv.net ~all",
        "DKIMVerified": dkim_verified,
        "WeakDKIM": False,
        "DKIMHost": "",
        "DKIMTextValue": "",
        "DKIMPendingHost": "20261130pm._domainkey.acme.test",
        "DKIMPendingTextValue": "k=rsa;p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCFn",
        "DKIMRevokedHost": "",
        "DKIMRevokedTextValue": "",
        "SafeToRemoveRevokedKeyFromDNS": False,
        "DKIMUpdateStatus": "Pending",
        "ReturnPathDomain": "pm-bounces.acme.test",
        "ReturnPathDomainVerified": return_path_verified,
        "ReturnPathDomainCNAMEValue": "pm.mtasv.net",
    }


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda p: p.register_domain("acme.test", SERVER_ONLY), id="register"),
        pytest.param(lambda p: p.verify_domain("36735", SERVER_ONLY), id="verify"),
        pytest.param(lambda p: p.delete_domain("36735", SERVER_ONLY), id="delete"),
    ],
)
def test_given_no_account_token_then_domain_management_fails_provider_permanent_without_a_call(
    mocked: responses.RequestsMock, postmark: PostmarkProvider, call: Any
) -> None:
    with pytest.raises(ProviderFailure) as caught:
        call(postmark)

    assert caught.value.kind is P
    assert caught.value.reason == DOMAINS_NEED_ACCOUNT_KEY
    assert len(mocked.calls) == 0


def test_given_a_domain_when_registered_then_dkim_and_return_path_records_are_labelled(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(
        responses.POST,
        DOMAINS_URL,
        json=domain_details(dkim_verified=False, return_path_verified=False),
        match=[matchers.header_matcher({"X-Postmark-Account-Token": ACCOUNT_TOKEN})],
    )

    registration = postmark.register_domain("acme.test", BOTH_TOKENS)

    assert sent_json(mocked) == {"Name": "acme.test", "ReturnPathDomain": "pm-bounces.acme.test"}
    assert registration.provider is ProviderName.POSTMARK
    assert registration.provider_domain_id == "36735"
    assert registration.verified is False
    assert [(r.type, r.host, r.value, r.purpose, r.status) for r in registration.records] == [
        (
            "TXT",
            "20261130pm._domainkey.acme.test",
            "k=rsa;p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCFn",
            "dkim",
            "pending",
        ),
        ("CNAME", "pm-bounces.acme.test", "pm.mtasv.net", "return-path", "pending"),
    ]


def test_given_a_domain_when_verified_then_dkim_and_return_path_are_both_checked(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.PUT, f"{DOMAINS_URL}/36735/verifyDkim", json=domain_details(True, False))
    mocked.add(responses.PUT, f"{DOMAINS_URL}/36735/verifyReturnPath", json=domain_details(True, True))

    verification = postmark.verify_domain("36735", BOTH_TOKENS)

    assert verification.verified is True
    assert [r.status for r in verification.records] == ["verified", "verified"]


def test_given_only_dkim_verified_then_the_domain_is_not_yet_verified(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.PUT, f"{DOMAINS_URL}/36735/verifyDkim", json=domain_details(True, False))
    mocked.add(responses.PUT, f"{DOMAINS_URL}/36735/verifyReturnPath", json=domain_details(True, False))

    verification = postmark.verify_domain("36735", BOTH_TOKENS)

    assert verification.verified is False
    assert [r.status for r in verification.records] == ["verified", "pending"]


@pytest.mark.parametrize(
    ("status", "body"), [(200, {"ErrorCode": 0, "Message": "Domain acme.test removed."}), (404, {})]
)
def test_given_a_domain_deleted_or_already_gone_then_delete_succeeds(
    mocked: responses.RequestsMock, postmark: PostmarkProvider, status: int, body: dict[str, Any]
) -> None:
    mocked.add(responses.DELETE, f"{DOMAINS_URL}/36735", status=status, json=body)

    postmark.delete_domain("36735", BOTH_TOKENS)

    assert mocked.calls[0].request.headers["X-Postmark-Account-Token"] == ACCOUNT_TOKEN


def test_given_a_bad_account_token_when_registering_then_it_raises_provider_permanent(
    mocked: responses.RequestsMock, postmark: PostmarkProvider
) -> None:
    mocked.add(responses.POST, DOMAINS_URL, status=401, json=api_error(10, "Bad or missing API token"))

    with pytest.raises(ProviderFailure) as caught:
        postmark.register_domain("acme.test", BOTH_TOKENS)

    assert caught.value.kind is P
    assert caught.value.code == "10"
