"""Mailgun adapter: form-encoded sends with Basic auth, the region a key chooses, error
classification, the key check and domains, against a faked HTTP layer (``responses``)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
import requests
import responses

from herald.adapters.providers.mailgun import MailgunProvider, dns_records
from herald.adapters.providers.transport import MAX_RETRY_AFTER_SECONDS, TIMEOUT
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import ProviderName, vendor_of

US = "https://api.mailgun.net"
EU = "https://api.eu.mailgun.net"
KEY = "key-0123456789abcdef0123456789abcdef"
CREDENTIAL = Credential(KEY)
EU_CREDENTIAL = Credential(f"eu:{KEY}")
MESSAGES = f"{US}/v3/acme.test/messages"

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="01J9Z3W7K8QH3V5Y2C4D6F8G0H", tenant_id="tenant-42", from_address="hello@acme.test")

P, M, T = FailureKind.PROVIDER_PERMANENT, FailureKind.MESSAGE_PERMANENT, FailureKind.TRANSIENT


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock() as rsps:
        yield rsps


@pytest.fixture
def mailgun() -> MailgunProvider:
    return MailgunProvider(US, EU, clock=lambda: 1_700_000_000.0)


def basic(key: str) -> str:
    return "Basic " + base64.b64encode(f"api:{key}".encode()).decode()


def form_of(call: Any) -> dict[str, list[str]]:
    body = call.request.body
    return parse_qs(body if isinstance(body, str) else body.decode())


def failure_of(mailgun: MailgunProvider, credential: Credential = CREDENTIAL) -> ProviderFailure:
    with pytest.raises(ProviderFailure) as caught:
        mailgun.send(EMAIL, ROUTING, credential)
    return caught.value


def domain_body(state: str = "unverified", valid: str = "unknown") -> dict[str, Any]:
    return {
        "domain": {"name": "mail.acme.test", "state": state},
        "sending_dns_records": [
            {
                "record_type": "TXT",
                "name": "mail.acme.test",
                "value": "v=spf1 include:mailgun.org ~all",
                "valid": valid,
            },
            {
                "record_type": "TXT",
                "name": "k1._domainkey.mail.acme.test",
                "value": "k=rsa; p=MIGf",
                "valid": valid,
            },
            {"record_type": "CNAME", "name": "email.mail.acme.test", "value": "mailgun.org", "valid": valid},
        ],
        "receiving_dns_records": [
            {"record_type": "MX", "priority": "10", "value": "mxa.mailgun.org", "valid": valid}
        ],
    }


# ---------------------------------------------------------------- send


def test_given_an_email_when_sent_then_mailgun_gets_a_form_with_basic_auth_and_heralds_ids(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(
        responses.POST, MESSAGES, json={"id": "<20261130.1@acme.test>", "message": "Queued. Thank you."}
    )

    delivered = mailgun.send(EMAIL, ROUTING, CREDENTIAL)

    request = mocked.calls[0].request
    assert request.headers["Authorization"] == basic(KEY)
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.req_kwargs["timeout"] == TIMEOUT  # type: ignore[attr-defined]  # set by responses
    assert form_of(mocked.calls[0]) == {
        "from": ["hello@acme.test"],
        "to": ["ada@example.org"],
        "subject": ["Welcome"],
        "html": ["<p>Hi</p>"],
        "text": ["Hi"],
        "v:herald_job_id": [ROUTING.job_id],
        "v:herald_tenant_id": ["tenant-42"],
    }
    assert (delivered.provider, delivered.provider_message_id) == (
        ProviderName.MAILGUN,
        "<20261130.1@acme.test>",
    )


def test_a_reply_to_is_a_custom_header_and_a_sender_name_makes_from_a_mailbox(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.POST, MESSAGES, json={"id": "<m@acme.test>"})
    email = EmailNotification(
        to="ada@example.org", subject="S", body="<b>x</b>", reply_to="support@acme.test"
    )
    routing = Routing(job_id="j", tenant_id="t", from_address="hello@acme.test", from_name="Acme, Inc.")

    mailgun.send(email, routing, CREDENTIAL)

    form = form_of(mocked.calls[0])
    assert (form["from"], form["h:Reply-To"]) == (['"Acme, Inc." <hello@acme.test>'], ["support@acme.test"])
    assert "text" not in form


def test_a_key_of_an_eu_account_is_sent_to_the_eu_api_without_its_region(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.POST, f"{EU}/v3/acme.test/messages", json={"id": "<m@acme.test>"})
    mocked.add(responses.GET, f"{EU}/v4/domains", json={"items": [], "total_count": 0})

    mailgun.send(EMAIL, ROUTING, EU_CREDENTIAL)
    check = mailgun.check_key(EU_CREDENTIAL)

    assert [call.request.headers["Authorization"] for call in mocked.calls] == [basic(KEY), basic(KEY)]
    assert (check.valid, check.details) == (True, {"region": "eu"})


def test_the_table_names_mailguns_regions_in_the_order_the_adapter_takes_their_urls() -> None:
    regions = vendor_of(ProviderName.MAILGUN).regions

    assert [region.name for region in regions] == ["us", "eu"]


@pytest.mark.parametrize("key", ["us:" + KEY, "xx:" + KEY, KEY], ids=["us", "unknown region", "none"])
def test_a_key_without_the_eu_region_goes_to_the_us_api(
    mocked: responses.RequestsMock, mailgun: MailgunProvider, key: str
) -> None:
    mocked.add(responses.POST, MESSAGES, json={"id": "<m@acme.test>"})

    mailgun.send(EMAIL, ROUTING, Credential(key))

    expected = key.removeprefix("us:") if key.startswith("us:") else key
    assert mocked.calls[0].request.headers["Authorization"] == basic(expected)


# ---------------------------------------------------------------- failure classification


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, {"message": "to parameter is not a valid address. please check documentation"}, M),
        (401, "Forbidden", P),
        (402, {"message": "Domain acme.test is disabled"}, P),
        (403, {"message": "Domain acme.test is not allowed to send"}, P),
        (404, {"message": "Domain not found"}, P),
        (408, {"message": "Request timeout"}, T),
        (429, {"message": "Too many requests"}, T),
        (500, {"message": "Internal Server Error"}, T),
        (503, "<html>Service Unavailable</html>", T),
    ],
)
def test_given_a_mailgun_error_when_sent_then_it_is_classified(
    mocked: responses.RequestsMock, mailgun: MailgunProvider, status: int, body: Any, kind: FailureKind
) -> None:
    if isinstance(body, dict):
        mocked.add(responses.POST, MESSAGES, status=status, json=body)
    else:
        content = "text/plain" if status == 401 else "text/html"
        mocked.add(responses.POST, MESSAGES, status=status, body=body, content_type=content)

    failure = failure_of(mailgun)

    assert (failure.kind, failure.status, failure.provider) == (kind, status, ProviderName.MAILGUN)
    assert "<html>" not in failure.reason


def test_a_429_is_retried_after_what_retry_after_says_within_the_bounds(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(
        responses.POST, MESSAGES, status=429, json={"message": "slow down"}, headers={"Retry-After": "7"}
    )
    mocked.add(responses.POST, MESSAGES, status=503, json={"message": "x"}, headers={"Retry-After": "99999"})
    mocked.add(responses.POST, MESSAGES, status=400, json={"message": "x"}, headers={"Retry-After": "7"})

    assert failure_of(mailgun).retry_after_seconds == 7.0
    assert failure_of(mailgun).retry_after_seconds == MAX_RETRY_AFTER_SECONDS
    assert failure_of(mailgun).retry_after_seconds is None


def test_a_timeout_is_transient(mocked: responses.RequestsMock, mailgun: MailgunProvider) -> None:
    mocked.add(responses.POST, MESSAGES, body=requests.ReadTimeout("slow"))

    assert failure_of(mailgun).kind is T


def test_the_key_never_reaches_a_reason_even_without_its_region(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.POST, f"{EU}/v3/acme.test/messages", status=400, json={"message": f"bad key {KEY}"})

    failure = failure_of(mailgun, EU_CREDENTIAL)

    assert KEY not in failure.reason
    assert KEY not in str(failure)


# ---------------------------------------------------------------- key check


def test_a_key_mailgun_knows_is_valid(mocked: responses.RequestsMock, mailgun: MailgunProvider) -> None:
    mocked.add(responses.GET, f"{US}/v4/domains", json={"items": [], "total_count": 0})

    check = mailgun.check_key(CREDENTIAL)

    assert (check.valid, check.details) == (True, {"region": "us"})
    assert mocked.calls[0].request.headers["Authorization"] == basic(KEY)


def test_a_key_mailgun_refuses_with_401_is_invalid(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.GET, f"{US}/v4/domains", status=401, body="Forbidden", content_type="text/plain")

    check = mailgun.check_key(CREDENTIAL)

    assert (check.valid, check.reason) == (False, "Forbidden")


def test_a_mailgun_that_cannot_answer_the_key_check_raises(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.GET, f"{US}/v4/domains", status=502, body="")

    with pytest.raises(ProviderFailure) as caught:
        mailgun.check_key(CREDENTIAL)
    assert caught.value.kind is T


# ---------------------------------------------------------------- domains


def test_a_registered_domain_has_its_sending_and_receiving_records(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.POST, f"{US}/v4/domains", json=domain_body())

    registration = mailgun.register_domain("mail.acme.test", CREDENTIAL)

    assert form_of(mocked.calls[0]) == {"name": ["mail.acme.test"]}
    assert (registration.provider_domain_id, registration.verified) == ("mail.acme.test", False)
    assert [(r.type, r.host, r.purpose, r.priority, r.status) for r in registration.records] == [
        ("TXT", "mail.acme.test", "spf", None, "pending"),
        ("TXT", "k1._domainkey.mail.acme.test", "dkim", None, "pending"),
        ("CNAME", "email.mail.acme.test", "tracking", None, "pending"),
        ("MX", "mail.acme.test", "receiving", 10, "pending"),
    ]


def test_verifying_asks_mailgun_to_check_again_and_an_active_domain_is_verified(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.PUT, f"{US}/v4/domains/mail.acme.test/verify", json=domain_body("active", "valid"))

    verification = mailgun.verify_domain("mail.acme.test", CREDENTIAL)

    assert verification.verified
    assert {record.status for record in verification.records} == {"verified"}


def test_a_domain_is_deleted_and_one_already_gone_counts_as_deleted(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(
        responses.DELETE, f"{EU}/v3/domains/mail.acme.test", json={"message": "Domain has been deleted"}
    )
    mocked.add(
        responses.DELETE, f"{EU}/v3/domains/gone.acme.test", status=404, json={"message": "Domain not found"}
    )

    mailgun.delete_domain("mail.acme.test", EU_CREDENTIAL)
    mailgun.delete_domain("gone.acme.test", EU_CREDENTIAL)

    assert len(mocked.calls) == 2


def test_an_answer_without_a_domain_is_retried_later(
    mocked: responses.RequestsMock, mailgun: MailgunProvider
) -> None:
    mocked.add(responses.POST, f"{US}/v4/domains", json={"message": "ok"})

    with pytest.raises(ProviderFailure) as caught:
        mailgun.register_domain("mail.acme.test", CREDENTIAL)
    assert caught.value.kind is T


def test_records_mailgun_marks_invalid_are_failed() -> None:
    assert {record.status for record in dns_records(domain_body(valid="invalid"))} == {"failed"}
