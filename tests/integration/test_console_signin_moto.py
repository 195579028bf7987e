"""The console's sign-in routes and the headers of every answer, through the real handlers against
moto: an address with an account and one without get the same answers, headers included; a code
dies after its tries and one client's guesses meet its limit (429 with retryAfter); API answers are
never cached; HSTS on an https origin only; the docs page's policy; HEAD of the console's pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from herald.domain.signin import MAX_CODE_TRIES
from herald.settings import SignInSettings
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, herald_in_moto
from tests.integration.test_console_moto import last_code, mail_to, same_origin, sign_up

HTTPS_ORIGIN = "https://herald.example"
# What differs between two answers of the same kind, whatever the address: the time they were
# written, and a wait counted from the moment each address's code was sent.
TIMESTAMP = re.compile(r'"timestamp":"[^"]+"')
NUMBER = re.compile(r"\d+")


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    resolve_publicly(monkeypatch)
    with herald_in_moto(monkeypatch) as running:
        yield running


def seen(answer: ApiAnswer) -> tuple[int, dict[str, str], str, list[str]]:
    """All a client learns from an answer but the time it was written."""
    return answer.status, answer.headers, TIMESTAMP.sub("", answer.text), answer.cookies


def waited(answer: ApiAnswer) -> tuple[int, dict[str, str], str]:
    """A wait's answer with its numbers left out."""
    headers = {name: NUMBER.sub("#", value) for name, value in answer.headers.items()}
    return answer.status, headers, NUMBER.sub("#", TIMESTAMP.sub("", answer.text))


def post(herald: HeraldInMoto, path: str, body: dict[str, Any]) -> ApiAnswer:
    return herald.api("POST", path, body, headers=same_origin(herald))


def test_an_address_with_an_account_and_one_without_get_the_same_answers(herald: HeraldInMoto) -> None:
    cases: tuple[tuple[str, dict[str, str], str, str], ...] = (
        ("/api/v1/signin", {}, "ada@example.com", "nobody@example.com"),
        ("/api/v1/signup", {"name": "Acme"}, "bob@example.com", "newcomer@example.com"),
    )
    for route, extra, owner, stranger in cases:
        sign_up(herald, owner)
        answers = [post(herald, route, {"email": email, **extra}) for email in (owner, stranger)]
        assert answers[0].status == 202, answers[0].text
        assert seen(answers[0]) == seen(answers[1])
        wrong = [
            seen(post(herald, "/api/v1/signin/verify", {"email": email, "code": "000000"}))
            for email in (owner, stranger)
        ]
        assert wrong[0] == wrong[1]
        assert wrong[0][0] == 401
        assert "(4 tries left)" in wrong[0][2]
        # A second request at once waits for the address's pace, alike for both.
        again = [post(herald, route, {"email": email, **extra}) for email in (owner, stranger)]
        assert [waited(answer) for answer in again] == [waited(again[0])] * 2
        assert again[0].status == 429
        assert 0 < int(again[0].headers["Retry-After"]) <= 30
    # Only the mail tells them apart, and only the address's owner reads it.
    assert "already has a Herald account" in str(mail_to("bob@example.com")[-1].body)
    assert "sign up at" in str(mail_to("nobody@example.com")[-1].body)


def test_a_code_dies_after_its_tries_and_a_clients_guesses_meet_its_limit(herald: HeraldInMoto) -> None:
    post(herald, "/api/v1/signup", {"email": "ada@example.com", "name": "Acme"})
    right = last_code("ada@example.com")
    guesses = [f"{(int(right) + n) % 1_000_000:06d}" for n in range(1, MAX_CODE_TRIES + 1)]
    errors = [
        post(herald, "/api/v1/signin/verify", {"email": "ada@example.com", "code": g}).body["error"]
        for g in guesses
    ]
    assert errors[-2:] == [
        "The code is not valid (1 try left).",
        "The code is not valid and no longer works; ask for a new code.",
    ]
    dead = post(herald, "/api/v1/signin/verify", {"email": "ada@example.com", "code": right})
    assert (dead.status, dead.body["code"]) == (401, "invalid_code")
    environment = herald.topology.functions["ConsoleFunction"].environment
    limit = SignInSettings.from_env(environment).limits.verifications_per_client
    for _ in range(limit - MAX_CODE_TRIES - 1):
        post(herald, "/api/v1/signin/verify", {"email": "ada@example.com", "code": "123456"})
    limited = post(herald, "/api/v1/signin/verify", {"email": "ada@example.com", "code": right})
    assert (limited.status, limited.body["code"]) == (429, "rate_limit_exceeded")
    assert int(limited.headers["Retry-After"]) == limited.body["retryAfter"] > 0


def test_api_answers_are_never_cached_and_hsts_is_sent_on_an_https_origin_only(
    herald: HeraldInMoto,
) -> None:
    local = [
        herald.api("GET", "/api/v1/ping"),
        herald.api("GET", "/api/v1/account"),
        post(herald, "/api/v1/signin", {"email": "ada@example.com"}),
    ]
    assert [answer.headers["Cache-Control"] for answer in local] == ["no-store"] * 3
    page = herald.api("GET", "/console")
    assert page.headers["Cache-Control"] == "no-cache"
    assert all("Strict-Transport-Security" not in a.headers for a in [*local, page])

    https = {"HERALD_PUBLIC_ORIGIN": HTTPS_ORIGIN, "HERALD_AWS_MAX_ATTEMPTS": "1"}
    herald.use_function_environment("ApiFunction", https)
    api_answers = [herald.api("GET", "/api/v1/ping"), herald.api("GET", "/api/v1/account")]
    herald.use_function_environment("ConsoleFunction", https)
    console_answers = [
        herald.api("GET", "/console/jobs"),
        herald.api("POST", "/api/v1/signin", {"email": "bob@example.com"}, headers={"origin": HTTPS_ORIGIN}),
    ]
    everything = [*api_answers, *console_answers]
    assert [a.status for a in everything] == [200, 401, 200, 202]
    assert {a.headers["Strict-Transport-Security"] for a in everything} == {"max-age=31536000"}
    assert console_answers[1].headers["Cache-Control"] == "no-store"


def test_the_docs_page_allows_only_its_own_inline_script_and_style(herald: HeraldInMoto) -> None:
    docs = herald.api("GET", "/api/v1/docs")
    assert docs.status == 200
    policy = dict(part.strip().split(" ", 1) for part in docs.headers["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    for directive in ("script-src", "style-src"):
        assert "unsafe-inline" not in policy[directive]
        assert all(source.startswith("'sha256-") for source in policy[directive].split())


@pytest.mark.parametrize("path", ["/console", "/console/jobs/some-job", "/console/assets/app.js"])
def test_head_of_a_console_page_answers_as_get_without_a_body(herald: HeraldInMoto, path: str) -> None:
    got, head = herald.api("GET", path), herald.api("HEAD", path)
    assert (head.status, head.headers, head.text) == (got.status, got.headers, "")
    assert got.text
