"""The sandbox's Mailgun: form sends with Basic auth (user ``api``, a sandbox key), Mailgun's error
shapes for the failures recipients choose, and its domains with their DNS records."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from herald_local.sandbox import SandboxServer

TIMEOUT = 5
GOOD_KEY = "sandbox-mg-test-key"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(slow_seconds=0.2) as server:
        yield server


def auth(key: str = GOOD_KEY, user: str = "api") -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()}


def form(to: str) -> dict[str, str]:
    return {
        "from": "Acme <hello@acme.test>",
        "to": to,
        "subject": "Hello",
        "html": "<p>Hi</p>",
        "v:herald_job_id": "job-mg",
    }


def send(
    sandbox: SandboxServer, fields: dict[str, str], headers: dict[str, str] | None = None
) -> requests.Response:
    return requests.post(
        f"{sandbox.provider_base_url('mailgun')}/v3/acme.test/messages",
        data=fields,
        headers=auth() if headers is None else headers,
        timeout=TIMEOUT,
    )


def call(sandbox: SandboxServer, method: str, path: str, **options: Any) -> requests.Response:
    options.setdefault("headers", auth())
    return requests.request(
        method, f"{sandbox.provider_base_url('mailgun')}{path}", timeout=TIMEOUT, **options
    )


def test_an_accepted_send_answers_mailguns_id_and_keeps_the_message_without_the_key(
    sandbox: SandboxServer,
) -> None:
    answer = send(sandbox, form("ada@example.com"))

    assert answer.status_code == 200
    assert answer.json()["message"] == "Queued. Thank you."
    [message] = requests.get(
        f"{sandbox.base_url}/_sandbox/messages", params={"jobId": "job-mg"}, timeout=TIMEOUT
    ).json()
    assert (message["provider"], message["id"], message["from"]) == (
        "mailgun",
        answer.json()["id"],
        "hello@acme.test",
    )
    assert message["headers"]["Authorization"] == "[redacted]"


@pytest.mark.parametrize(
    "headers",
    [auth("not-a-sandbox-key"), auth(user="someone"), {}, {"Authorization": "Basic !!"}],
    ids=["key", "user", "none", "not base64"],
)
def test_a_key_mailgun_does_not_know_gets_a_plain_forbidden(
    sandbox: SandboxServer, headers: dict[str, str]
) -> None:
    answer = send(sandbox, form("ada@example.com"), headers)

    assert (answer.status_code, answer.text, answer.headers["Content-Type"]) == (
        401,
        "Forbidden",
        "text/plain; charset=utf-8",
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"from": ""}, "from parameter is missing"),
        ({"to": ""}, "to parameter is missing"),
        ({"to": "not an address"}, "to parameter is not a valid address. please check documentation"),
        ({"html": ""}, "Need at least one of 'text', 'html' or 'template' parameters specified"),
    ],
)
def test_a_malformed_send_is_refused_as_mailgun_refuses_it(
    sandbox: SandboxServer, fields: dict[str, str], message: str
) -> None:
    answer = send(sandbox, form("ada@example.com") | fields)

    assert (answer.status_code, answer.json()) == (400, {"message": message})


@pytest.mark.parametrize("status", [400, 402, 403, 404, 429, 500, 503])
def test_a_recipient_chooses_mailguns_failure(sandbox: SandboxServer, status: int) -> None:
    answer = send(sandbox, form(f"fail-{status}-mailgun@example.com"))

    assert answer.status_code == status
    assert isinstance(answer.json()["message"], str)
    assert ("Retry-After" in answer.headers) is (status == 429)


def test_a_failure_naming_another_provider_leaves_mailgun_alone(sandbox: SandboxServer) -> None:
    assert send(sandbox, form("fail-500-sendgrid@example.com")).status_code == 200


def test_the_key_check_lists_domains_with_a_known_key_only(sandbox: SandboxServer) -> None:
    assert call(sandbox, "GET", "/v4/domains").status_code == 200
    assert call(sandbox, "GET", "/v4/domains", headers=auth("wrong")).status_code == 401


def test_a_domain_is_created_verified_and_deleted_with_its_records(sandbox: SandboxServer) -> None:
    created = call(sandbox, "POST", "/v4/domains", data={"name": "Mail.Acme.test"})

    assert created.status_code == 200
    body = created.json()
    assert (body["domain"]["name"], body["domain"]["state"]) == ("mail.acme.test", "unverified")
    kinds = [(record["record_type"], record["valid"]) for record in body["sending_dns_records"]]
    assert kinds == [("TXT", "unknown"), ("TXT", "unknown"), ("CNAME", "unknown")]
    assert {record["record_type"] for record in body["receiving_dns_records"]} == {"MX"}
    assert call(sandbox, "POST", "/v4/domains", data={"name": "mail.acme.test"}).status_code == 400

    verified = call(sandbox, "PUT", "/v4/domains/mail.acme.test/verify").json()
    assert verified["domain"]["state"] == "active"
    assert {record["valid"] for record in verified["sending_dns_records"]} == {"valid"}
    assert call(sandbox, "GET", "/v4/domains/mail.acme.test").json()["domain"]["state"] == "active"

    assert call(sandbox, "DELETE", "/v3/domains/mail.acme.test").json() == {
        "message": "Domain has been deleted"
    }
    assert call(sandbox, "GET", "/v4/domains/mail.acme.test").status_code == 404


def test_a_pending_domain_stays_unverified(sandbox: SandboxServer) -> None:
    call(sandbox, "POST", "/v4/domains", data={"name": "pending.acme.test"})

    assert (
        call(sandbox, "PUT", "/v4/domains/pending.acme.test/verify").json()["domain"]["state"] == "unverified"
    )


def test_another_key_cannot_read_a_domain(sandbox: SandboxServer) -> None:
    call(sandbox, "POST", "/v4/domains", data={"name": "keyed.acme.test"})

    assert call(sandbox, "GET", "/v4/domains/keyed.acme.test", headers=auth("wrong")).status_code == 401
