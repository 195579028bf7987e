"""SES adapter: the platform send through boto3 sesv2 and the translation of botocore errors
(as the SES v2 API names them), with botocore's Stubber and, for network failures, real sockets."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from herald.adapters.providers.ses import SesProvider
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import ProviderName
from tests.support.ports import refusing_port

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

SENDER = "notifications@herald.test"
# Tenants bring no SES key: whatever credential arrives must be ignored.
IGNORED = Credential("not-used-for-ses")

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="someone@tenant.test")

P, M, T = FailureKind.PROVIDER_PERMANENT, FailureKind.MESSAGE_PERMANENT, FailureKind.TRANSIENT


def ses_client(endpoint_url: str | None = None, timeout: float = 3.0) -> SESV2Client:
    client: SESV2Client = boto3.session.Session().client(
        "sesv2",
        region_name="us-east-1",
        endpoint_url=endpoint_url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(connect_timeout=timeout, read_timeout=timeout, retries={"total_max_attempts": 1}),
    )
    return client


@pytest.fixture(scope="module")
def client() -> SESV2Client:
    # Building a client costs a fifth of a second; a fresh Stubber per test keeps tests apart.
    return ses_client()


@pytest.fixture
def stubber(client: SESV2Client) -> Iterator[Stubber]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


@pytest.fixture
def ses(client: SESV2Client) -> SesProvider:
    return SesProvider(lambda: client, SENDER)


def expected_request(**overrides: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "FromEmailAddress": SENDER,
        "Destination": {"ToAddresses": ["ada@example.org"]},
        "Content": {
            "Simple": {
                "Subject": {"Data": "Welcome", "Charset": "UTF-8"},
                "Body": {
                    "Html": {"Data": "<p>Hi</p>", "Charset": "UTF-8"},
                    "Text": {"Data": "Hi", "Charset": "UTF-8"},
                },
            }
        },
        "EmailTags": [
            {"Name": "herald_job_id", "Value": "job-0001"},
            {"Name": "herald_tenant_id", "Value": "tenant-42"},
        ],
        # Every free tenant sends through its own SES tenant.
        "TenantName": "herald-tenant-42",
    }
    request.update(overrides)
    return request


# ---------------------------------------------------------------- send


def test_given_an_email_when_sent_then_ses_gets_the_platform_sender_and_the_job_tags(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_response("send_email", {"MessageId": "0100018c-ses-id"}, expected_request())

    delivered = ses.send(EMAIL, ROUTING, IGNORED)

    assert delivered.provider is ProviderName.SES
    assert delivered.provider_message_id == "0100018c-ses-id"


def test_given_a_sender_name_and_reply_to_then_they_are_sent_with_the_platform_address(
    stubber: Stubber, ses: SesProvider
) -> None:
    email = EmailNotification(
        to="ada@example.org", subject="Welcome", body="<p>Hi</p>", reply_to="support@acme.test"
    )
    routing = Routing(
        job_id="job-0001", tenant_id="tenant-42", from_address="ignored@tenant.test", from_name="Acme"
    )
    request = expected_request(FromEmailAddress=f"Acme <{SENDER}>", ReplyToAddresses=["support@acme.test"])
    request["Content"]["Simple"]["Body"] = {"Html": {"Data": "<p>Hi</p>", "Charset": "UTF-8"}}
    stubber.add_response("send_email", {"MessageId": "m-2"}, request)

    assert ses.send(email, routing, IGNORED).provider_message_id == "m-2"


@pytest.mark.parametrize(
    ("code", "status", "message", "kind"),
    [
        pytest.param(
            "MessageRejected",
            400,
            "Email address is not verified. The following identities failed the check in region US-EAST-1: "
            "notifications@herald.test",
            P,
            id="rejected-sender-not-verified",
        ),
        pytest.param("MessageRejected", 400, "Message contains a virus.", M, id="rejected-content"),
        pytest.param("MailFromDomainNotVerifiedException", 400, "MAIL FROM domain not verified", P),
        pytest.param("AccountSuspendedException", 400, "Account suspended", P, id="account-suspended"),
        pytest.param("TooManyRequestsException", 429, "Maximum sending rate exceeded.", T, id="rate"),
        pytest.param("LimitExceededException", 400, "Daily message quota exceeded.", T, id="daily-quota"),
        pytest.param("BadRequestException", 400, "Illegal address", M, id="bad-request"),
        pytest.param("AccessDeniedException", 403, "User is not authorized to perform ses:SendEmail", P),
        pytest.param("UnrecognizedClientException", 403, "The security token included is invalid.", P),
        pytest.param("InvalidSignatureException", 403, "Signature expired", P, id="signature"),
        pytest.param(
            "ExpiredTokenException", 403, "The security token included in the request is expired", P
        ),
        pytest.param("ThrottlingException", 400, "Rate exceeded", T, id="throttling"),
        pytest.param("InternalFailure", 500, "Internal failure", T, id="internal-failure"),
        pytest.param("ServiceUnavailable", 503, "Service unavailable", T, id="unavailable"),
        pytest.param("SomethingNewException", 502, "A new fault", T, id="unknown-5xx"),
        pytest.param("SomethingNewException", 400, "A new refusal", M, id="unknown-4xx"),
    ],
)
def test_given_an_ses_error_when_sent_then_it_is_classified_per_the_fact_sheet(
    stubber: Stubber, ses: SesProvider, *, code: str, status: int, message: str, kind: FailureKind
) -> None:
    stubber.add_client_error("send_email", code, message, http_status_code=status)

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, IGNORED)

    failure = caught.value
    assert failure.provider is ProviderName.SES
    assert failure.kind is kind
    assert failure.code == code
    assert failure.status == status
    assert failure.reason == message
    assert failure.suppress_recipient is False


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A local port with nothing listening on it (connections are refused)."""
    with refusing_port() as port:
        yield port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local port that accepts connections (kernel backlog) but never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_given_ses_cannot_be_reached_then_the_failure_is_transient(refused_port: int) -> None:
    ses = SesProvider(lambda: ses_client(f"http://127.0.0.1:{refused_port}"), SENDER)

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, IGNORED)

    assert caught.value.kind is T
    assert caught.value.status is None


def test_given_ses_does_not_answer_in_time_then_the_failure_is_transient(silent_port: int) -> None:
    ses = SesProvider(lambda: ses_client(f"http://127.0.0.1:{silent_port}", timeout=0.3), SENDER)

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, IGNORED)

    assert caught.value.kind is T


# ---------------------------------------------------------------- account check


def account(sending_enabled: bool) -> dict[str, Any]:
    return {
        "DedicatedIpAutoWarmupEnabled": False,
        "EnforcementStatus": "HEALTHY",
        "ProductionAccessEnabled": True,
        "SendQuota": {"Max24HourSend": 50000.0, "MaxSendRate": 14.0, "SentLast24Hours": 120.0},
        "SendingEnabled": sending_enabled,
    }


def test_given_an_enabled_account_then_the_check_says_valid_with_its_quota(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_response("get_account", account(sending_enabled=True), {})

    check = ses.check_key(IGNORED)

    assert check.valid is True
    assert check.details == {
        "sending_enabled": True,
        "production_access": True,
        "enforcement_status": "HEALTHY",
        "max_24_hour_send": 50000.0,
        "max_send_rate": 14.0,
        "sent_last_24_hours": 120.0,
    }


def test_given_sending_is_disabled_then_the_check_says_invalid(stubber: Stubber, ses: SesProvider) -> None:
    stubber.add_response("get_account", account(sending_enabled=False), {})

    check = ses.check_key(IGNORED)

    assert check.valid is False
    assert check.reason == "sending is disabled for the SES account"


def test_given_the_platform_role_is_denied_then_the_check_says_invalid(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_client_error("get_account", "AccessDeniedException", "not authorized", http_status_code=403)

    check = ses.check_key(IGNORED)

    assert check.valid is False
    assert check.reason == "not authorized"


def test_given_ses_is_throttling_then_the_check_raises_transient(stubber: Stubber, ses: SesProvider) -> None:
    stubber.add_client_error("get_account", "TooManyRequestsException", "slow down", http_status_code=429)

    with pytest.raises(ProviderFailure) as caught:
        ses.check_key(IGNORED)

    assert caught.value.kind is T


def test_given_no_platform_credentials_then_the_failure_is_provider_permanent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, refused_port: int
) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    client = boto3.session.Session().client(
        "sesv2", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{refused_port}"
    )

    with pytest.raises(ProviderFailure) as caught:
        SesProvider(lambda: client, SENDER).send(EMAIL, ROUTING, IGNORED)

    assert caught.value.kind is P
    assert caught.value.reason == "no AWS credentials for SES"
