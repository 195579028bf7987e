"""The console's backend against moto, through the real handlers: sign-up by emailed code (the SES
message moto received), the session cookie on the API's own routes with its same-origin check, the
stack's origin in every link whatever Host a request names, a rotation without grace ending
sessions, and the day counters behind the activity and the listing's totals, with what they cost."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from moto.backends import get_backend

from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, client, herald_in_moto

CODE = re.compile(r"Your Herald code: (\d{6})")
# A client naming its own origin as the one the request was sent to.
FORGED_HOST = {"host": "evil.example", "x-forwarded-proto": "http"}
FORGED = {**FORGED_HOST, "origin": "http://evil.example"}
WEBHOOK = {"url": "https://hooks.example.com/x", "payload": {"id": 1}}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    resolve_publicly(monkeypatch)  # no DNS here: the webhook host resolves publicly
    with herald_in_moto(monkeypatch) as running:
        yield running


def same_origin(herald: HeraldInMoto) -> dict[str, str]:
    return {"origin": herald.origin}


def mail_to(to: str) -> list[Any]:
    """What the platform sender mailed ``to`` through SES, oldest first."""
    sent = get_backend("ses")["123456789012"]["us-east-1"].sent_messages
    return [message for message in sent if to in str(getattr(message, "destinations", ""))]


def last_code(to: str) -> str:
    for message in reversed(mail_to(to)):
        found = CODE.search(str(getattr(message, "subject", "")))
        if found:
            return found.group(1)
    raise AssertionError(f"no code for {to}")


def session_of(answer: ApiAnswer) -> str:
    cookie = next(value for value in answer.cookies if value.startswith("herald_session="))
    return cookie.split(";", 1)[0]


def sign_up(herald: HeraldInMoto, email: str) -> tuple[str, dict[str, Any]]:
    asked = herald.api(
        "POST", "/api/v1/signup", {"email": email, "name": "Acme"}, headers=same_origin(herald)
    )
    assert asked.status == 202, asked.text
    answer = herald.api(
        "POST",
        "/api/v1/signin/verify",
        {"email": email, "code": last_code(email)},
        headers=same_origin(herald),
    )
    assert answer.status == 200, answer.text
    return session_of(answer), answer.data


def test_a_sign_up_signs_the_browser_in_to_the_apis_own_routes(herald: HeraldInMoto) -> None:
    cookie, data = sign_up(herald, "ada@example.com")
    account = herald.api("GET", "/api/v1/account", headers={"cookie": cookie})
    assert (account.status, account.data["tenantId"], account.data["plan"]) == (200, data["tenantId"], "free")
    assert herald.api("GET", "/api/v1/account", key=data["apiKey"]).status == 200
    # The table holds neither the code nor the token, only their hashes.
    items = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    assert cookie.split("=", 1)[1] not in str(items)


def test_a_state_change_by_cookie_needs_the_stacks_origin_whatever_host_it_names(
    herald: HeraldInMoto,
) -> None:
    cookie, _ = sign_up(herald, "ada@example.com")
    for origin in ({"origin": "https://evil.example"}, FORGED):
        forged = herald.api("POST", "/api/v1/account/webhook-secret", headers={"cookie": cookie, **origin})
        assert (forged.status, forged.body["code"]) == (403, "cross_origin_request")
    assert (
        herald.api("GET", "/api/v1/account/webhook-secret", headers={"cookie": cookie}).data["hasSecret"]
        is False
    )
    made = herald.api(
        "POST", "/api/v1/account/webhook-secret", headers={"cookie": cookie, **same_origin(herald)}
    )
    assert made.status == 201


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("/api/v1/signin", {"email": "eve@example.com"}),
        ("/api/v1/signup", {"email": "eve@example.com", "name": "Eve"}),
    ],
)
def test_a_code_request_from_a_forged_origin_is_refused_and_mails_nothing(
    herald: HeraldInMoto, route: str, body: dict[str, str]
) -> None:
    refused = herald.api("POST", route, body, headers=FORGED)
    assert (refused.status, refused.body["code"]) == (403, "cross_origin_request")
    assert mail_to("eve@example.com") == []


@pytest.mark.parametrize("by_fetch_site", [False, True])
def test_the_sign_in_mail_links_to_the_stacks_origin_whatever_host_the_request_names(
    herald: HeraldInMoto, by_fetch_site: bool
) -> None:
    """A client that is no browser passes the origin check by writing the right proof; the Host and
    X-Forwarded-Proto it writes still never reach the link Herald mails to an address without an
    account."""
    proof = {"sec-fetch-site": "same-origin"} if by_fetch_site else same_origin(herald)
    asked = herald.api(
        "POST", "/api/v1/signin", {"email": "victim@example.com"}, headers={**FORGED_HOST, **proof}
    )
    assert asked.status == 202, asked.text
    (mail,) = mail_to("victim@example.com")
    assert f"sign up at {herald.origin}/console" in mail.body
    assert "evil.example" not in mail.body


def test_a_providers_webhook_url_names_the_stacks_origin_whatever_host_the_request_names(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    (provider,) = herald.api("GET", "/api/v1/account/providers", key=key, headers=FORGED_HOST).data
    tenant_id = herald.tenant_of(key)
    assert provider["webhookUrl"] == f"{herald.origin}/api/v1/webhooks/sendgrid/{tenant_id}"


def test_sign_out_and_a_rotation_without_grace_end_sessions(herald: HeraldInMoto) -> None:
    cookie, _ = sign_up(herald, "ada@example.com")
    other, _ = sign_up(herald, "ada@example.com")
    rotated = herald.api(
        "POST",
        "/api/v1/account/api-key/rotate",
        {"graceSeconds": 0},
        headers={"cookie": cookie, **same_origin(herald)},
    )
    assert rotated.status == 200
    assert herald.api("GET", "/api/v1/account", headers={"cookie": cookie}).body["code"] == "invalid_session"
    assert herald.api("GET", "/api/v1/account", headers={"cookie": other}).body["code"] == "invalid_session"
    renewed = session_of(rotated)
    assert herald.api("GET", "/api/v1/account", headers={"cookie": renewed}).status == 200
    out = herald.api("POST", "/api/v1/signout", headers={"cookie": renewed, **same_origin(herald)})
    assert "Max-Age=0" in out.cookies[0]
    assert herald.api("GET", "/api/v1/account", headers={"cookie": renewed}).status == 401


def test_accepted_day_counts_and_listing_totals_come_from_the_accept_paths_counter_write(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    for n in range(3):
        sent = herald.api("POST", "/api/v1/notifications/webhook", {**WEBHOOK, "payload": {"n": n}}, key=key)
        assert sent.status == 202
    herald.api(
        "POST", "/api/v1/notifications/email", {"to": "a@example.com", "subject": "s", "body": "b"}, key=key
    )
    listing = herald.api("GET", "/api/v1/notifications/jobs?type=webhook", key=key).data["pagination"]
    assert listing["total"] == 3
    activity = herald.api("GET", "/api/v1/account/activity?days=7", key=key).data
    assert (activity["totals"]["accepted"], activity["days"][-1]["accepted"]) == (4, 4)
    # The period's counter item carries the day's counts and stays one write unit.
    items = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    counter = next(item for item in items if item["sk"]["S"].startswith("PERIOD#"))
    day = activity["to"][5:].replace("-", "")
    assert (counter[f"ae{day}"], counter[f"aw{day}"]) == ({"N": "1"}, {"N": "3"})
    assert len(str(counter)) < 1024
