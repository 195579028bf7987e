"""The provider sandbox answers like SendGrid, Resend and Postmark, fails on request, records what
it saw, and receives outbound webhooks with signature checks."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import requests
from standardwebhooks import Webhook

from herald_local.sandbox import SandboxServer

TIMEOUT = 5
GOOD_KEY = "sandbox-test-key"
BAD_KEY = "SG.not-a-sandbox-key"


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    server = SandboxServer(slow_seconds=30)
    server.start()
    yield server
    server.stop()


def url(sandbox: SandboxServer, path: str) -> str:
    return f"{sandbox.base_url}{path}"


# --- provider requests as Herald builds them -------------------------------------------------


def sendgrid_body(to: str, job_id: str = "job-sg", **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "personalizations": [{"to": [{"email": to}], "custom_args": {"herald_job_id": job_id}}],
        "from": {"email": "sender@herald.example", "name": "Herald"},
        "subject": "Hello",
        "content": [{"type": "text/plain", "value": "Hi"}, {"type": "text/html", "value": "<p>Hi</p>"}],
    }
    return body | overrides


def resend_body(to: str, job_id: str = "job-rs", **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "from": "Herald <sender@herald.example>",
        "to": [to],
        "subject": "Hello",
        "html": "<p>Hi</p>",
        "text": "Hi",
        "tags": [{"name": "herald_job_id", "value": job_id}],
    }
    return body | overrides


def postmark_body(to: str, job_id: str = "job-pm", **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "From": "Herald <sender@herald.example>",
        "To": to,
        "Subject": "Hello",
        "HtmlBody": "<p>Hi</p>",
        "TextBody": "Hi",
        "Metadata": {"herald_job_id": job_id},
        "MessageStream": "outbound",
    }
    return body | overrides


def send_sendgrid(
    sandbox: SandboxServer, body: dict[str, Any], key: str = GOOD_KEY, timeout: float = TIMEOUT
) -> requests.Response:
    return requests.post(
        f"{sandbox.provider_base_url('sendgrid')}/v3/mail/send",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=timeout,
    )


def send_resend(
    sandbox: SandboxServer,
    body: dict[str, Any],
    key: str = GOOD_KEY,
    idempotency_key: str | None = None,
    timeout: float = TIMEOUT,
) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return requests.post(
        f"{sandbox.provider_base_url('resend')}/emails", json=body, headers=headers, timeout=timeout
    )


def send_postmark(sandbox: SandboxServer, body: dict[str, Any], token: str = GOOD_KEY) -> requests.Response:
    headers = {"X-Postmark-Server-Token": token, "Accept": "application/json"}
    return requests.post(
        f"{sandbox.provider_base_url('postmark')}/email", json=body, headers=headers, timeout=TIMEOUT
    )


def send_all(sandbox: SandboxServer, to: str) -> dict[str, requests.Response]:
    return {
        "sendgrid": send_sendgrid(sandbox, sendgrid_body(to)),
        "resend": send_resend(sandbox, resend_body(to)),
        "postmark": send_postmark(sandbox, postmark_body(to)),
    }


def messages(sandbox: SandboxServer, **filters: str) -> list[dict[str, Any]]:
    answer = requests.get(url(sandbox, "/_sandbox/messages"), params=filters, timeout=TIMEOUT)
    result: list[dict[str, Any]] = answer.json()
    return result


def attempts(sandbox: SandboxServer, **filters: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = requests.get(
        url(sandbox, "/_sandbox/attempts"), params=filters, timeout=TIMEOUT
    ).json()
    return result


def hooks(sandbox: SandboxServer, **filters: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = requests.get(
        url(sandbox, "/_sandbox/hooks"), params=filters, timeout=TIMEOUT
    ).json()
    return result


# --- successful sends --------------------------------------------------------------------------


def test_given_a_valid_sendgrid_send_then_it_answers_202_with_a_message_id_and_keeps_the_job_id(
    sandbox: SandboxServer,
) -> None:
    answer = send_sendgrid(sandbox, sendgrid_body("ada@example.com", job_id="job-1"))

    assert answer.status_code == 202
    assert answer.content == b""
    message_id = answer.headers["X-Message-Id"]
    [message] = messages(sandbox)
    assert message["id"] == message_id
    assert message["provider"] == "sendgrid"
    assert message["recipient"] == "ada@example.com"
    assert message["from"] == "sender@herald.example"
    assert message["subject"] == "Hello"
    assert message["jobId"] == "job-1"
    assert message["body"]["content"][1]["value"] == "<p>Hi</p>"


def test_given_only_message_level_custom_args_then_sendgrid_reads_the_job_id_there(
    sandbox: SandboxServer,
) -> None:
    body = sendgrid_body("ada@example.com", custom_args={"herald_job_id": "job-top"})
    del body["personalizations"][0]["custom_args"]

    assert send_sendgrid(sandbox, body).status_code == 202
    assert messages(sandbox)[0]["jobId"] == "job-top"


def test_given_a_valid_resend_send_then_it_answers_200_with_an_id_and_keeps_the_tag_job_id(
    sandbox: SandboxServer,
) -> None:
    answer = send_resend(sandbox, resend_body("Ada <ada@example.com>", job_id="job-2"))

    assert answer.status_code == 200
    assert set(answer.json()) == {"id"}
    assert answer.headers["ratelimit-limit"]
    [message] = messages(sandbox)
    assert message["id"] == answer.json()["id"]
    assert (message["provider"], message["recipient"], message["jobId"]) == (
        "resend",
        "ada@example.com",
        "job-2",
    )


def test_given_a_valid_postmark_send_then_it_answers_the_real_success_shape_and_keeps_the_metadata_job_id(
    sandbox: SandboxServer,
) -> None:
    answer = send_postmark(sandbox, postmark_body("ada@example.com", job_id="job-3"))

    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == {"To", "SubmittedAt", "MessageID", "ErrorCode", "Message"}
    assert (body["To"], body["ErrorCode"], body["Message"]) == ("ada@example.com", 0, "OK")
    [message] = messages(sandbox)
    assert (message["id"], message["provider"], message["jobId"]) == (body["MessageID"], "postmark", "job-3")


def test_given_accepted_sends_then_the_credentials_are_redacted_from_what_is_kept(
    sandbox: SandboxServer,
) -> None:
    send_all(sandbox, "ada@example.com")

    kept = json.dumps(messages(sandbox))
    assert GOOD_KEY not in kept
    assert {
        m["headers"].get("Authorization") or m["headers"].get("X-Postmark-Server-Token")
        for m in messages(sandbox)
    } == {"[redacted]"}


def test_given_sends_to_several_providers_then_the_views_filter_by_recipient_job_and_provider(
    sandbox: SandboxServer,
) -> None:
    send_sendgrid(sandbox, sendgrid_body("one@example.com", job_id="job-a"))
    send_resend(sandbox, resend_body("two@example.com", job_id="job-b"))

    assert [m["jobId"] for m in messages(sandbox, to="TWO@example.com")] == ["job-b"]
    assert [m["recipient"] for m in messages(sandbox, jobId="job-a")] == ["one@example.com"]
    assert [m["provider"] for m in messages(sandbox, provider="resend")] == ["resend"]
    assert [a["provider"] for a in attempts(sandbox)] == ["sendgrid", "resend"]


# --- keys and tokens ------------------------------------------------------------------------------


def test_given_a_key_without_the_sandbox_prefix_then_every_provider_answers_its_real_401(
    sandbox: SandboxServer,
) -> None:
    sendgrid = send_sendgrid(sandbox, sendgrid_body("ada@example.com"), key=BAD_KEY)
    resend = send_resend(sandbox, resend_body("ada@example.com"), key="re_not_sandbox")
    postmark = send_postmark(sandbox, postmark_body("ada@example.com"), token="server-token")

    assert (sendgrid.status_code, sendgrid.json()) == (
        401,
        {"errors": [{"field": None, "message": "authorization required"}]},
    )
    assert (resend.status_code, resend.json()) == (
        401,
        {"statusCode": 401, "message": "API key is invalid", "name": "validation_error"},
    )
    assert (postmark.status_code, postmark.json()) == (
        401,
        {"ErrorCode": 10, "Message": "Bad or missing API token"},
    )
    assert messages(sandbox) == []
    assert [(a["provider"], a["status"], a["outcome"]) for a in attempts(sandbox)] == [
        ("sendgrid", 401, "rejected"),
        ("resend", 401, "rejected"),
        ("postmark", 401, "rejected"),
    ]


def test_given_no_authorization_header_then_sendgrid_and_resend_refuse(sandbox: SandboxServer) -> None:
    sendgrid = requests.post(
        f"{sandbox.provider_base_url('sendgrid')}/v3/mail/send",
        json=sendgrid_body("a@example.com"),
        timeout=TIMEOUT,
    )
    resend = requests.post(
        f"{sandbox.provider_base_url('resend')}/emails", json=resend_body("a@example.com"), timeout=TIMEOUT
    )

    assert sendgrid.status_code == 401
    assert (resend.status_code, resend.json()["name"]) == (401, "missing_api_key")


def test_given_a_bad_key_on_a_resend_non_send_endpoint_then_it_answers_403_invalid_api_key(
    sandbox: SandboxServer,
) -> None:
    answer = requests.get(
        f"{sandbox.provider_base_url('resend')}/domains",
        headers={"Authorization": "Bearer re_x"},
        timeout=TIMEOUT,
    )

    assert answer.status_code == 403
    assert answer.json() == {"statusCode": 403, "message": "API key is invalid", "name": "invalid_api_key"}


def test_given_key_checks_then_each_provider_answers_its_cheap_endpoint(sandbox: SandboxServer) -> None:
    bearer = {"Authorization": f"Bearer {GOOD_KEY}"}
    scopes = requests.get(
        f"{sandbox.provider_base_url('sendgrid')}/v3/scopes", headers=bearer, timeout=TIMEOUT
    )
    domains = requests.get(f"{sandbox.provider_base_url('resend')}/domains", headers=bearer, timeout=TIMEOUT)
    server = requests.get(
        f"{sandbox.provider_base_url('postmark')}/server",
        headers={"X-Postmark-Server-Token": GOOD_KEY},
        timeout=TIMEOUT,
    )

    assert "mail.send" in scopes.json()["scopes"]
    assert "whitelabel.create" in scopes.json()["scopes"]
    assert domains.json() == {"object": "list", "has_more": False, "data": []}
    assert server.json()["DeliveryType"] == "Live"


def test_given_only_a_server_token_then_postmark_domains_refuse(sandbox: SandboxServer) -> None:
    answer = requests.post(
        f"{sandbox.provider_base_url('postmark')}/domains",
        json={"Name": "example.com"},
        headers={"X-Postmark-Server-Token": GOOD_KEY},
        timeout=TIMEOUT,
    )

    assert (answer.status_code, answer.json()["ErrorCode"]) == (401, 10)


# --- failures chosen by the recipient ----------------------------------------------------------


def test_given_fail_500_then_every_provider_answers_500_with_its_real_body(sandbox: SandboxServer) -> None:
    answers = send_all(sandbox, "Fail-500@example.com")

    assert {name: answer.status_code for name, answer in answers.items()} == {
        "sendgrid": 500,
        "resend": 500,
        "postmark": 500,
    }
    assert answers["sendgrid"].json()["errors"][0]["message"] == "internal server error"
    assert answers["resend"].json() == {
        "statusCode": 500,
        "message": "An unexpected error occurred.",
        "name": "internal_server_error",
    }
    assert set(answers["postmark"].json()) == {"ErrorCode", "Message"}
    assert messages(sandbox) == []


def test_given_fail_500_for_sendgrid_only_then_sendgrid_fails_and_resend_succeeds(
    sandbox: SandboxServer,
) -> None:
    to = "fail-500-sendgrid+case1@example.com"
    sendgrid = send_sendgrid(sandbox, sendgrid_body(to, job_id="job-fallback"))
    resend = send_resend(sandbox, resend_body(to, job_id="job-fallback"))

    assert sendgrid.status_code == 500
    assert resend.status_code == 200
    assert [(a["provider"], a["status"], a["outcome"]) for a in attempts(sandbox, jobId="job-fallback")] == [
        ("sendgrid", 500, "rejected"),
        ("resend", 200, "accepted"),
    ]
    assert [m["provider"] for m in messages(sandbox)] == ["resend"]


def test_given_fail_422_then_each_provider_answers_its_realistic_422(sandbox: SandboxServer) -> None:
    answers = send_all(sandbox, "fail-422@example.com")

    assert {answer.status_code for answer in answers.values()} == {422}
    assert answers["resend"].json()["name"] == "validation_error"
    assert answers["postmark"].json()["ErrorCode"] == 406
    assert "fail-422@example.com" in answers["postmark"].json()["Message"]
    assert "errors" in answers["sendgrid"].json()


def test_given_fail_429_then_the_providers_send_their_real_rate_limit_headers(sandbox: SandboxServer) -> None:
    before = int(time.time())
    answers = send_all(sandbox, "fail-429@example.com")

    sendgrid, resend = answers["sendgrid"], answers["resend"]
    assert sendgrid.status_code == 429
    assert sendgrid.json()["errors"][0]["message"] == "too many requests"
    assert sendgrid.headers["X-RateLimit-Remaining"] == "0"
    assert int(sendgrid.headers["X-RateLimit-Reset"]) >= before  # an epoch second, not a delay
    assert (resend.status_code, resend.json()["name"]) == (429, "rate_limit_exceeded")
    assert int(resend.headers["retry-after"]) >= 1
    assert resend.headers["ratelimit-remaining"] == "0"
    assert answers["postmark"].status_code == 429


def test_given_fail_403_then_postmark_answers_an_html_page_without_error_code(sandbox: SandboxServer) -> None:
    answer = send_postmark(sandbox, postmark_body("fail-403-postmark@example.com"))

    assert answer.status_code == 403
    assert answer.headers["Content-Type"].startswith("text/html")


def test_given_a_timeout_recipient_then_the_client_timeout_trips_and_the_attempt_is_recorded(
    sandbox: SandboxServer,
) -> None:
    with pytest.raises(requests.Timeout):
        send_resend(sandbox, resend_body("timeout@example.com", job_id="job-slow"), timeout=0.3)

    [attempt] = attempts(sandbox, jobId="job-slow")
    assert (attempt["provider"], attempt["outcome"]) == ("resend", "timeout")
    assert messages(sandbox) == []


def wait_for_attempts(sandbox: SandboxServer, count: int) -> None:
    """Polls until ``count`` send attempts are recorded, i.e. the requests have arrived."""
    deadline = time.monotonic() + TIMEOUT
    while len(attempts(sandbox)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"fewer than {count} attempts arrived")
        time.sleep(0.01)


def test_given_a_slow_answer_in_progress_then_other_requests_are_still_served(sandbox: SandboxServer) -> None:
    def slow_call() -> None:
        with pytest.raises(requests.Timeout):
            send_sendgrid(sandbox, sendgrid_body("timeout-sendgrid@example.com"), timeout=1)

    slow = threading.Thread(target=slow_call)
    slow.start()
    wait_for_attempts(sandbox, 1)

    # Served one at a time, this would wait for the 30 s slow answer and trip its own 5 s timeout.
    fast = send_sendgrid(sandbox, sendgrid_body("ada@example.com"))
    slow.join()

    assert fast.status_code == 202


def test_given_timeout_for_postmark_only_then_sendgrid_answers_at_once(sandbox: SandboxServer) -> None:
    assert send_sendgrid(sandbox, sendgrid_body("timeout-postmark@example.com")).status_code == 202


def test_given_a_slow_answer_when_the_server_stops_then_the_waiting_request_ends(
    sandbox: SandboxServer,
) -> None:
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(
                send_sendgrid(sandbox, sendgrid_body("timeout@example.com"), timeout=20).status_code
            )
        except requests.RequestException as exc:
            outcome.append(type(exc))

    caller = threading.Thread(target=call)
    caller.start()
    wait_for_attempts(sandbox, 1)

    sandbox.stop()
    caller.join(15)

    assert not caller.is_alive()
    assert outcome == [504]


# --- request validation --------------------------------------------------------------------------


def test_given_html_before_plain_text_then_sendgrid_answers_400_on_content(sandbox: SandboxServer) -> None:
    body = sendgrid_body(
        "ada@example.com",
        content=[{"type": "text/html", "value": "<p>x</p>"}, {"type": "text/plain", "value": "x"}],
    )

    answer = send_sendgrid(sandbox, body)

    assert answer.status_code == 400
    assert [error["field"] for error in answer.json()["errors"]] == ["content"]
    assert [a["outcome"] for a in attempts(sandbox)] == ["rejected"]


def test_given_a_send_without_json_content_type_then_sendgrid_and_postmark_refuse(
    sandbox: SandboxServer,
) -> None:
    raw = json.dumps(sendgrid_body("ada@example.com"))
    sendgrid = requests.post(
        f"{sandbox.provider_base_url('sendgrid')}/v3/mail/send",
        data=raw,
        headers={"Authorization": f"Bearer {GOOD_KEY}", "Content-Type": "text/plain"},
        timeout=TIMEOUT,
    )
    postmark = requests.post(
        f"{sandbox.provider_base_url('postmark')}/email",
        data=json.dumps(postmark_body("ada@example.com")),
        headers={"X-Postmark-Server-Token": GOOD_KEY, "Content-Type": "text/plain"},
        timeout=TIMEOUT,
    )

    assert sendgrid.status_code == 400
    assert (postmark.status_code, postmark.json()["ErrorCode"]) == (422, 409)


def test_given_a_postmark_send_without_any_body_then_it_answers_422_error_code_300(
    sandbox: SandboxServer,
) -> None:
    body = postmark_body("ada@example.com")
    del body["HtmlBody"], body["TextBody"]

    answer = send_postmark(sandbox, body)

    assert answer.status_code == 422
    assert answer.json() == {
        "ErrorCode": 300,
        "Message": "Provide either email TextBody or HtmlBody or both.",
    }


def test_given_a_resend_send_without_from_then_it_answers_422_missing_required_field(
    sandbox: SandboxServer,
) -> None:
    body = resend_body("ada@example.com")
    del body["from"]

    answer = send_resend(sandbox, body)

    assert answer.json() == {
        "statusCode": 422,
        "message": "Missing `from` field.",
        "name": "missing_required_field",
    }


def test_given_a_resend_tag_with_forbidden_characters_then_it_answers_422(sandbox: SandboxServer) -> None:
    answer = send_resend(sandbox, resend_body("ada@example.com", job_id="job id with spaces"))

    assert (answer.status_code, answer.json()["name"]) == (422, "validation_error")


# --- Resend idempotency ----------------------------------------------------------------------------


def test_given_the_same_idempotency_key_and_body_then_resend_returns_the_same_id_and_keeps_one_message(
    sandbox: SandboxServer,
) -> None:
    body = resend_body("ada@example.com", job_id="job-idem")
    first = send_resend(sandbox, body, idempotency_key="job-idem")
    second = send_resend(sandbox, body, idempotency_key="job-idem")

    assert first.status_code == second.status_code == 200
    assert first.json()["id"] == second.json()["id"]
    assert len(messages(sandbox)) == 1
    assert [a["outcome"] for a in attempts(sandbox)] == ["accepted", "replayed"]


def test_given_the_same_idempotency_key_with_another_body_then_resend_answers_409(
    sandbox: SandboxServer,
) -> None:
    send_resend(sandbox, resend_body("ada@example.com", subject="One"), idempotency_key="job-x")

    answer = send_resend(sandbox, resend_body("ada@example.com", subject="Two"), idempotency_key="job-x")

    assert (answer.status_code, answer.json()["name"]) == (409, "invalid_idempotent_request")
    assert len(messages(sandbox)) == 1


def test_given_the_first_request_still_in_flight_then_resend_answers_409_concurrent(
    sandbox: SandboxServer,
) -> None:
    body = resend_body("timeout-resend@example.com")
    with pytest.raises(requests.Timeout):
        send_resend(sandbox, body, idempotency_key="job-slow", timeout=0.3)

    answer = send_resend(sandbox, body, idempotency_key="job-slow")

    assert (answer.status_code, answer.json()["name"]) == (409, "concurrent_idempotent_requests")


def test_given_a_failed_first_request_then_its_idempotency_key_can_be_used_again(
    sandbox: SandboxServer,
) -> None:
    send_resend(sandbox, resend_body("fail-503-resend@example.com"), idempotency_key="job-retry")

    answer = send_resend(sandbox, resend_body("ada@example.com"), idempotency_key="job-retry")

    assert answer.status_code == 200


# --- domains ---------------------------------------------------------------------------------------


def sendgrid_domains(sandbox: SandboxServer, method: str, path: str = "", **kwargs: Any) -> requests.Response:
    return requests.request(
        method,
        f"{sandbox.provider_base_url('sendgrid')}/v3/whitelabel/domains{path}",
        headers={"Authorization": f"Bearer {GOOD_KEY}"},
        timeout=TIMEOUT,
        **kwargs,
    )


@pytest.mark.parametrize(("domain", "valid"), [("mail.example.com", True), ("pending.example.com", False)])
def test_given_a_sendgrid_domain_then_it_gets_cname_records_and_validates_unless_pending(
    sandbox: SandboxServer, domain: str, valid: bool
) -> None:
    created = sendgrid_domains(sandbox, "POST", json={"domain": domain, "automatic_security": True})
    domain_id = created.json()["id"]

    validated = sendgrid_domains(sandbox, "POST", f"/{domain_id}/validate")
    read = sendgrid_domains(sandbox, "GET", f"/{domain_id}")
    deleted = sendgrid_domains(sandbox, "DELETE", f"/{domain_id}")

    assert created.status_code == 201
    dns = created.json()["dns"]
    assert set(dns) == {"mail_cname", "dkim1", "dkim2"}
    assert {record["type"] for record in dns.values()} == {"cname"}
    assert dns["dkim1"]["host"] == f"s1._domainkey.{domain}"
    assert validated.json()["valid"] is valid
    assert set(validated.json()["validation_results"]) == {"mail_cname", "dkim1", "dkim2"}
    assert read.json()["valid"] is valid
    assert deleted.status_code == 204
    assert sendgrid_domains(sandbox, "GET", f"/{domain_id}").status_code == 404


def test_given_manual_security_then_sendgrid_gives_mx_and_txt_records(sandbox: SandboxServer) -> None:
    created = sendgrid_domains(sandbox, "POST", json={"domain": "example.org", "automatic_security": False})

    assert {key: record["type"] for key, record in created.json()["dns"].items()} == {
        "mail_server": "mx",
        "subdomain_spf": "txt",
        "dkim": "txt",
    }


@pytest.mark.parametrize(
    ("domain", "status"), [("example.com", "verified"), ("pending-dns.example.com", "pending")]
)
def test_given_a_resend_domain_then_it_gets_spf_and_dkim_records_and_verifies_unless_pending(
    sandbox: SandboxServer, domain: str, status: str
) -> None:
    base = f"{sandbox.provider_base_url('resend')}/domains"
    headers = {"Authorization": f"Bearer {GOOD_KEY}"}
    created = requests.post(base, json={"name": domain}, headers=headers, timeout=TIMEOUT)
    domain_id = created.json()["id"]

    verify = requests.post(f"{base}/{domain_id}/verify", headers=headers, timeout=TIMEOUT)
    read = requests.get(f"{base}/{domain_id}", headers=headers, timeout=TIMEOUT)
    deleted = requests.delete(f"{base}/{domain_id}", headers=headers, timeout=TIMEOUT)

    assert created.status_code == 201
    assert created.json()["status"] == "not_started"
    records = created.json()["records"]
    assert {(r["record"], r["type"]) for r in records} == {("SPF", "MX"), ("SPF", "TXT"), ("DKIM", "TXT")}
    assert next(r for r in records if r["type"] == "MX")["priority"] == 10
    assert verify.json() == {"object": "domain", "id": domain_id}
    assert read.json()["status"] == status
    assert {r["status"] for r in read.json()["records"]} == {status}
    assert deleted.json() == {"object": "domain", "id": domain_id, "deleted": True}


@pytest.mark.parametrize(("domain", "verified"), [("example.net", True), ("pending.example.net", False)])
def test_given_a_postmark_domain_then_dkim_and_return_path_verify_unless_pending(
    sandbox: SandboxServer, domain: str, verified: bool
) -> None:
    base = f"{sandbox.provider_base_url('postmark')}/domains"
    headers = {"X-Postmark-Account-Token": GOOD_KEY, "Accept": "application/json"}
    created = requests.post(
        base,
        json={"Name": domain, "ReturnPathDomain": f"pm-bounces.{domain}"},
        headers=headers,
        timeout=TIMEOUT,
    )
    domain_id = created.json()["ID"]

    dkim = requests.put(f"{base}/{domain_id}/verifyDKIM", headers=headers, timeout=TIMEOUT)
    return_path = requests.put(f"{base}/{domain_id}/verifyreturnpath", headers=headers, timeout=TIMEOUT)
    deleted = requests.delete(f"{base}/{domain_id}", headers=headers, timeout=TIMEOUT)

    assert created.status_code == 200
    assert created.json()["DKIMPendingHost"].endswith(f"._domainkey.{domain}")
    assert created.json()["DKIMHost"] == ""
    assert created.json()["ReturnPathDomainCNAMEValue"] == "pm.mtasv.net"
    assert dkim.json()["DKIMVerified"] is verified
    assert bool(dkim.json()["DKIMHost"]) is verified
    assert return_path.json()["ReturnPathDomainVerified"] is verified
    assert deleted.json()["ErrorCode"] == 0


# --- outbound webhooks -------------------------------------------------------------------------------


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def register(sandbox: SandboxServer, secret: str) -> requests.Response:
    return requests.post(url(sandbox, "/_sandbox/secrets"), json={"secret": secret}, timeout=TIMEOUT)


def notifykit_header(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def signed_headers(
    secret: str, body: bytes, job_id: str = "job-hook", timestamp: int | None = None
) -> dict[str, str]:
    moment = datetime.now(UTC) if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
    ts = str(int(moment.timestamp()))
    return {
        "Content-Type": "application/json",
        "X-Webhook-Timestamp": ts,
        "X-Webhook-Signature": notifykit_header(secret, ts, body),
        "webhook-id": job_id,
        "webhook-timestamp": ts,
        "webhook-signature": Webhook(secret).sign(job_id, moment, body.decode()),
    }


def post_hook(sandbox: SandboxServer, name: str, body: bytes, headers: dict[str, str]) -> requests.Response:
    return requests.post(url(sandbox, f"/hooks/{name}"), data=body, headers=headers, timeout=TIMEOUT)


def test_given_a_correctly_signed_delivery_then_both_signature_checks_pass(sandbox: SandboxServer) -> None:
    secret = new_secret()
    register(sandbox, secret)
    body = b'{"event":"order.paid","amount":42}'

    answer = post_hook(sandbox, "orders", body, signed_headers(secret, body, job_id="job-h1"))

    assert (answer.status_code, answer.json()) == (200, {"received": True})
    [hook] = hooks(sandbox, name="orders")
    assert hook["signatures"] == {"notifykit": True, "standard": True}
    assert (hook["jobId"], hook["method"], hook["body"]) == ("job-h1", "POST", body.decode())
    assert hook["json"] == {"event": "order.paid", "amount": 42}


def test_given_a_forged_signature_then_both_checks_fail(sandbox: SandboxServer) -> None:
    register(sandbox, new_secret())
    body = b'{"event":"order.paid"}'

    post_hook(sandbox, "orders", body, signed_headers(new_secret(), body))

    assert hooks(sandbox)[0]["signatures"] == {"notifykit": False, "standard": False}


def test_given_a_tampered_body_then_both_checks_fail(sandbox: SandboxServer) -> None:
    secret = new_secret()
    register(sandbox, secret)
    headers = signed_headers(secret, b'{"amount":1}')

    post_hook(sandbox, "orders", b'{"amount":1000}', headers)

    assert hooks(sandbox)[0]["signatures"] == {"notifykit": False, "standard": False}


def test_given_a_stale_notifykit_timestamp_then_the_check_fails(sandbox: SandboxServer) -> None:
    secret = new_secret()
    register(sandbox, secret)
    body = b"{}"
    stale = str(int(time.time()) - 3600)

    post_hook(
        sandbox,
        "old",
        body,
        {"X-Webhook-Timestamp": stale, "X-Webhook-Signature": notifykit_header(secret, stale, body)},
    )

    assert hooks(sandbox)[0]["signatures"] == {"notifykit": False, "standard": None}


def test_given_a_rotation_then_the_notifykit_check_reads_the_last_v1_like_the_sdk(
    sandbox: SandboxServer,
) -> None:
    old, new = new_secret(), new_secret()
    register(sandbox, new)
    body = b'{"n":1}'
    ts = str(int(time.time()))
    old_sig = notifykit_header(old, ts, body).split(",")[1]
    new_sig = notifykit_header(new, ts, body).split(",")[1]

    post_hook(
        sandbox,
        "rot-good",
        body,
        {"X-Webhook-Timestamp": ts, "X-Webhook-Signature": f"t={ts},{old_sig},{new_sig}"},
    )
    post_hook(
        sandbox,
        "rot-bad",
        body,
        {"X-Webhook-Timestamp": ts, "X-Webhook-Signature": f"t={ts},{new_sig},{old_sig}"},
    )

    assert hooks(sandbox, name="rot-good")[0]["signatures"]["notifykit"] is True
    assert hooks(sandbox, name="rot-bad")[0]["signatures"]["notifykit"] is False


def test_given_no_registered_secret_then_the_checks_are_null(sandbox: SandboxServer) -> None:
    body = b"{}"

    post_hook(sandbox, "plain", body, signed_headers(new_secret(), body))

    assert hooks(sandbox)[0]["signatures"] == {"notifykit": None, "standard": None}


def test_given_a_secret_that_is_not_whsec_base64_then_registration_is_refused(sandbox: SandboxServer) -> None:
    assert register(sandbox, "not-a-secret").status_code == 400
    assert register(sandbox, "whsec_").status_code == 400
    assert register(sandbox, new_secret()).status_code == 201


def test_given_a_fail_hook_then_it_answers_that_status_and_records_the_delivery(
    sandbox: SandboxServer,
) -> None:
    answer = requests.put(url(sandbox, "/hooks/fail-503"), data=b"x", timeout=TIMEOUT)

    assert answer.status_code == 503
    [hook] = hooks(sandbox, name="fail-503")
    assert (hook["method"], hook["status"], hook["json"]) == ("PUT", 503, None)


def test_given_a_redirect_hook_then_it_answers_302_and_a_client_that_does_not_follow_stays_put(
    sandbox: SandboxServer,
) -> None:
    answer = requests.post(
        url(sandbox, "/hooks/redirect-me"), json={}, allow_redirects=False, timeout=TIMEOUT
    )

    assert answer.status_code == 302
    assert answer.headers["Location"].endswith("/hooks/after-redirect")
    assert [hook["name"] for hook in hooks(sandbox)] == ["redirect-me"]


def test_given_a_timeout_hook_then_the_client_timeout_trips_and_the_delivery_is_recorded(
    sandbox: SandboxServer,
) -> None:
    with pytest.raises(requests.Timeout):
        requests.post(url(sandbox, "/hooks/timeout-1"), json={}, headers={"webhook-id": "job-t"}, timeout=0.3)

    assert [hook["jobId"] for hook in hooks(sandbox, jobId="job-t")] == ["job-t"]


# --- resets and the mailbox page ------------------------------------------------------------------


def test_given_recorded_traffic_when_reset_then_the_views_are_empty(sandbox: SandboxServer) -> None:
    secret = new_secret()
    register(sandbox, secret)
    send_all(sandbox, "ada@example.com")
    post_hook(sandbox, "a", b"{}", {})

    assert requests.delete(url(sandbox, "/_sandbox/messages"), timeout=TIMEOUT).status_code == 204
    assert (messages(sandbox), attempts(sandbox), len(hooks(sandbox))) == ([], [], 1)
    assert requests.delete(url(sandbox, "/_sandbox/hooks"), timeout=TIMEOUT).status_code == 204
    assert hooks(sandbox) == []

    send_all(sandbox, "ada@example.com")
    assert requests.delete(url(sandbox, "/_sandbox"), timeout=TIMEOUT).status_code == 204
    body = b"{}"
    post_hook(sandbox, "after-reset", body, signed_headers(secret, body))
    assert messages(sandbox) == []
    assert hooks(sandbox)[0]["signatures"] == {"notifykit": None, "standard": None}  # secrets are gone too


def test_given_a_script_in_a_subject_and_body_then_the_mailbox_page_escapes_it(
    sandbox: SandboxServer,
) -> None:
    attack = "<script>alert(1)</script>"
    body = resend_body(
        "ada@example.com", subject=attack, html=f'<img src=x onerror="alert(2)">{attack}', text=attack
    )
    send_resend(sandbox, body)
    post_hook(sandbox, "x", attack.encode(), {})

    for path in ("/", "/_sandbox"):
        page = requests.get(url(sandbox, path), timeout=TIMEOUT)
        assert page.status_code == 200
        assert "<script>" not in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
        assert 'onerror="alert' not in page.text
        assert "script-src" not in page.headers["Content-Security-Policy"]
        assert "default-src 'none'" in page.headers["Content-Security-Policy"]
        assert "<iframe sandbox " in page.text


def test_given_an_unknown_provider_name_then_no_base_url_is_made_up(sandbox: SandboxServer) -> None:
    assert sandbox.provider_base_url("Resend") == f"{sandbox.base_url}/resend"
    with pytest.raises(ValueError, match="sparkpost"):
        sandbox.provider_base_url("sparkpost")


# --- staged outages of one target ------------------------------------------------------------


def test_given_a_sendgrid_outage_then_only_sendgrid_fails_until_it_is_lifted(sandbox: SandboxServer) -> None:
    staged = requests.put(url(sandbox, "/_sandbox/outages/SENDGRID"), json={"status": 500}, timeout=TIMEOUT)
    assert staged.json() == {"target": "sendgrid", "status": 500, "timeout": False, "until": None}

    assert send_sendgrid(sandbox, sendgrid_body("ada@example.com")).status_code == 500
    assert send_resend(sandbox, resend_body("ada@example.com")).status_code == 200
    listed = requests.get(url(sandbox, "/_sandbox/outages"), timeout=TIMEOUT).json()
    assert [outage["target"] for outage in listed] == ["sendgrid"]

    assert requests.delete(url(sandbox, "/_sandbox/outages/SENDGRID"), timeout=TIMEOUT).status_code == 204
    assert send_sendgrid(sandbox, sendgrid_body("ada@example.com")).status_code == 202


def test_given_a_hook_outage_for_a_while_then_that_hook_fails_and_recovers_by_itself(
    sandbox: SandboxServer,
) -> None:
    requests.put(
        url(sandbox, "/_sandbox/outages/hook:orders"), json={"status": 503, "seconds": 0.5}, timeout=TIMEOUT
    )

    assert requests.post(url(sandbox, "/hooks/orders"), data=b"{}", timeout=TIMEOUT).status_code == 503
    assert requests.post(url(sandbox, "/hooks/other"), data=b"{}", timeout=TIMEOUT).status_code == 200
    time.sleep(0.6)
    assert requests.post(url(sandbox, "/hooks/orders"), data=b"{}", timeout=TIMEOUT).status_code == 200
    assert [hook["status"] for hook in hooks(sandbox, name="orders")] == [503, 200]


@pytest.mark.parametrize(
    ("target", "body"),
    [
        ("SPARKPOST", {"status": 500}),
        ("hook:", {"status": 500}),
        ("RESEND", {"status": 200}),
        ("RESEND", {"seconds": -1}),
    ],
)
def test_given_a_bad_outage_then_it_is_refused(
    sandbox: SandboxServer, target: str, body: dict[str, Any]
) -> None:
    answer = requests.put(url(sandbox, f"/_sandbox/outages/{target}"), json=body, timeout=TIMEOUT)

    assert answer.status_code == 400
    assert requests.get(url(sandbox, "/_sandbox/outages"), timeout=TIMEOUT).json() == []
