"""Sign-up and sign-in by emailed code, and console sessions: what a person sees, and the attacks
(guessed, reused, expired and locked codes, enumeration of addresses, floods, ended sessions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

import pytest

from herald.domain.clock import utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.signin import (
    CODE_STREAK_SECONDS,
    CODE_TTL_SECONDS,
    MAX_CODE_TRIES,
    SESSION_TTL_SECONDS,
    CodePurpose,
    SignInLimits,
)
from herald.services.keys import KeyService
from herald.services.sessions import SessionAuthenticator
from herald.services.signin import SignInService
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root
from tests.fakes.common import ManualClock, full_grant
from tests.fakes.console import FakeMail, FakeSessions, FakeSignIn
from tests.fakes.tenants import FakeTenantTable

CONSOLE = "https://herald.example/console"
CODE = re.compile(r"Your Herald code: (\d{6})")
# The template's defaults.
_DEFAULTS = load_template(project_root() / "template.yaml")["Parameters"]
LIMITS = SignInLimits(
    codes_per_client=int(_DEFAULTS["SignInCodesPerClientPerHour"]["Default"]),
    verifications_per_client=int(_DEFAULTS["SignInVerificationsPerClientPerHour"]["Default"]),
    first_code_delay=int(_DEFAULTS["SignInFirstCodeDelaySeconds"]["Default"]),
    max_code_delay=int(_DEFAULTS["SignInMaxCodeDelaySeconds"]["Default"]),
)


class Recorded:
    """A store that writes down which of its methods were called, in order (the work a request did)."""

    def __init__(self, inner: Any, calls: list[str]) -> None:
        self._inner, self._calls = inner, calls

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            return method(*args, **kwargs)

        return call


class Rig:
    def __init__(self) -> None:
        self.clock = ManualClock(1_800_000_000.0)
        self.tenants, self.store, self.sessions_store = FakeTenantTable(), FakeSignIn(), FakeSessions()
        self.mail = FakeMail()
        self.calls: list[str] = []
        self.sessions = SessionAuthenticator(self.sessions_store, self.tenants, clock=self.clock)
        self.service = SignInService(
            store=Recorded(self.store, self.calls),
            tenants=Recorded(self.tenants, self.calls),
            members=Recorded(self.tenants, self.calls),
            sessions=self.sessions,
            mail=Recorded(self.mail, self.calls),
            limits=LIMITS,
            clock=self.clock,
        )

    def ask(
        self, email: str, purpose: CodePurpose = CodePurpose.SIGN_UP, ip: str = "198.51.100.7"
    ) -> str | None:
        self.service.request_code(
            purpose, email, ip, CONSOLE, name="Acme" if purpose is CodePurpose.SIGN_UP else None
        )
        found = CODE.search(self.mail.sent[-1][1])
        return found.group(1) if found else None

    def refused(self, email: str, code: str, ip: str = "198.51.100.7") -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.service.verify(email, code, ip)
        return caught.value

    def refused_request(self, email: str, purpose: CodePurpose = CodePurpose.SIGN_IN) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.ask(email, purpose)
        return caught.value

    def signed_up(self, email: str) -> str:
        signed_in = self.service.verify(email, self.ask(email) or "", "198.51.100.7")
        self.clock.advance(CODE_STREAK_SECONDS)  # the sign-up's pace is over
        return signed_in.tenant_id

    def work(self, step: Callable[[], object]) -> tuple[list[str], str]:
        """The store and mail calls one step made, and what it answered (its error's answer)."""
        self.calls.clear()
        try:
            step()
            answer = "done"
        except HeraldError as error:
            answer = f"{error.code} {error.message} {error.extra}"
        return list(self.calls), answer


def wrong(code: str, n: int = 1) -> str:
    return f"{(int(code) + n) % 1_000_000:06d}"


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_a_sign_up_code_creates_a_free_tenant_shows_its_key_once_and_starts_a_session(rig: Rig) -> None:
    code = rig.ask("Ada@Example.com")
    assert code is not None
    signed_in = rig.service.verify("ada@example.com", code, "198.51.100.7")
    profile = rig.tenants.profile(signed_in.tenant_id)
    assert (profile.plan, profile.name, profile.email) == ("free", "Acme", "ada@example.com")
    assert signed_in.api_key is not None
    assert rig.sessions.authenticate(signed_in.session.token).tenant_id == signed_in.tenant_id
    # Only hashes are stored: neither the code nor the token is anywhere in the stores.
    assert code not in repr(rig.store.codes)
    assert signed_in.session.token not in repr(rig.sessions_store.sessions)


def test_signing_up_again_signs_in_to_the_same_account_without_a_new_key(rig: Rig) -> None:
    first = rig.signed_up("ada@example.com")
    again = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "", "198.51.100.7")
    assert again.tenant_id == first
    assert again.api_key is None
    assert "already has a Herald account" in rig.mail.sent[-1][2]


def test_a_code_request_does_the_same_work_and_answers_the_same_with_or_without_an_account(rig: Rig) -> None:
    rig.signed_up("ada@example.com")
    for purpose in CodePurpose:
        existing = rig.work(partial(rig.ask, "ada@example.com", purpose))
        new = rig.work(partial(rig.ask, f"nobody-{purpose}@example.com", purpose))
        assert existing == new
        assert existing[0] == [
            "code",
            "count_request",
            "tenant_for_email",
            "memberships",
            "save_code",
            "send",
        ]
        rig.clock.advance(CODE_STREAK_SECONDS)
    # Only the mail differs, which only the address's owner reads.
    assert f"sign up at {CONSOLE}" in rig.mail.sent[-1][2]
    assert CODE.search(rig.mail.sent[-1][1]) is None


def test_a_wrong_code_does_the_same_work_and_answers_the_same_with_or_without_an_account(rig: Rig) -> None:
    rig.signed_up("ada@example.com")
    rig.ask("ada@example.com", CodePurpose.SIGN_IN)
    rig.ask("nobody@example.com", CodePurpose.SIGN_IN)
    for _ in range(MAX_CODE_TRIES + 1):
        existing = rig.work(lambda: rig.service.verify("ada@example.com", "000000", "192.0.2.9"))
        new = rig.work(lambda: rig.service.verify("nobody@example.com", "000000", "192.0.2.9"))
        assert existing == new
    # A second request waits for the same pace, with or without an account.
    assert (
        rig.work(lambda: rig.ask("ada@example.com"))[1] == rig.work(lambda: rig.ask("nobody@example.com"))[1]
    )


def test_a_code_works_once(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    rig.service.verify("ada@example.com", code, "198.51.100.7")
    assert rig.refused("ada@example.com", code).code is ErrorCode.INVALID_CODE


def test_a_code_expires_after_ten_minutes(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    rig.clock.advance(CODE_TTL_SECONDS)
    assert rig.refused("ada@example.com", code).code is ErrorCode.INVALID_CODE


def test_five_wrong_tries_kill_the_code_even_for_the_right_digits(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    messages = [rig.refused("ada@example.com", wrong(code, n)).message for n in range(1, 6)]
    assert messages[:4] == [
        "The code is not valid (4 tries left).",
        "The code is not valid (3 tries left).",
        "The code is not valid (2 tries left).",
        "The code is not valid (1 try left).",
    ]
    assert messages[4] == "The code is not valid and no longer works; ask for a new code."
    assert rig.refused("ada@example.com", code).message == "The code no longer works; ask for a new code."
    assert rig.tenants.profiles == {}


def test_a_new_code_starts_with_all_its_tries(rig: Rig) -> None:
    dead = rig.ask("ada@example.com") or ""
    for n in range(1, MAX_CODE_TRIES + 1):
        rig.refused("ada@example.com", wrong(dead, n))
    rig.clock.advance(LIMITS.code_delay(1))
    fresh = rig.ask("ada@example.com") or ""
    assert rig.refused("ada@example.com", wrong(fresh)).message == "The code is not valid (4 tries left)."
    assert rig.service.verify("ada@example.com", fresh, "198.51.100.7").api_key is not None


def test_a_new_code_waits_a_growing_delay_that_the_answer_states(rig: Rig) -> None:
    waits = []
    for _ in range(7):
        rig.ask("ada@example.com")
        waits.append(rig.refused_request("ada@example.com").extra["retryAfter"])
        rig.clock.advance(waits[-1])
    assert waits == [30, 60, 120, 240, 300, 300, 300]
    rig.clock.advance(-10)
    refused = rig.refused_request("ada@example.com")
    assert refused.code is ErrorCode.RATE_LIMIT_EXCEEDED
    assert refused.message.endswith("you can ask for a new one in 10 seconds.")
    # A quiet hour ends the streak: the next code waits the first delay again.
    rig.clock.advance(CODE_STREAK_SECONDS)
    rig.ask("ada@example.com")
    assert rig.refused_request("ada@example.com").extra["retryAfter"] == 30


def test_a_stranger_asking_for_codes_and_guessing_cannot_keep_the_owner_out(rig: Rig) -> None:
    rig.signed_up("ada@example.com")
    # The stranger, from many addresses, asks for codes as fast as allowed and burns each one.
    for n in range(5):
        rig.ask("ada@example.com", CodePurpose.SIGN_UP, ip=f"203.0.113.{n}")
        for guess in range(1, MAX_CODE_TRIES + 1):
            rig.refused("ada@example.com", f"{guess:06d}", ip=f"203.0.113.{n}")
        rig.clock.advance(LIMITS.code_delay(n + 1))
    # The owner asks within the longest delay and signs in with the fresh code.
    code = rig.ask("ada@example.com", CodePurpose.SIGN_IN) or ""
    assert rig.service.verify("ada@example.com", code, "198.51.100.7").api_key is None


def test_a_code_for_one_address_does_not_open_another(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    assert rig.refused("eve@example.com", code).code is ErrorCode.INVALID_CODE


def test_code_requests_and_verifications_are_limited_per_client_ip(rig: Rig) -> None:
    for index in range(LIMITS.codes_per_client):
        rig.ask(f"user{index}@example.com", ip="192.0.2.1")
    with pytest.raises(HeraldError) as per_client:
        rig.ask("another@example.com", ip="192.0.2.1")
    assert per_client.value.code is ErrorCode.RATE_LIMIT_EXCEEDED
    assert per_client.value.extra["retryAfter"] > 0
    rig.ask("another@example.com", ip="192.0.2.2")
    # A brute force from one client: its verifications run out long before a code is found.
    for guess in range(LIMITS.verifications_per_client):
        rig.refused(f"user{guess % LIMITS.codes_per_client}@example.com", f"{guess:06d}", ip="192.0.2.66")
    guessing = rig.refused("another@example.com", "123456", ip="192.0.2.66")
    assert guessing.code is ErrorCode.RATE_LIMIT_EXCEEDED
    assert guessing.extra["retryAfter"] > 0


def test_mail_that_cannot_be_sent_is_reported_not_swallowed(rig: Rig) -> None:
    rig.mail.unavailable = True
    with pytest.raises(HeraldError) as caught:
        rig.ask("ada@example.com")
    assert caught.value.code is ErrorCode.DEPENDENCY_UNAVAILABLE


def test_a_signed_out_or_expired_session_is_refused_at_once(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "", "198.51.100.7")
    token = signed_in.session.token
    rig.sessions.end(token)
    with pytest.raises(HeraldError) as ended:
        rig.sessions.authenticate(token)
    assert ended.value.code is ErrorCode.INVALID_SESSION
    later = rig.sessions.start(signed_in.tenant_id, signed_in.session.session.member_id or "")
    rig.clock.advance(SESSION_TTL_SECONDS)
    with pytest.raises(HeraldError):
        rig.sessions.authenticate(later.token)


def test_a_key_rotation_without_grace_ends_sessions_and_one_with_grace_keeps_them(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "", "198.51.100.7")
    tenant_id = signed_in.tenant_id
    (key_id,) = rig.tenants.named[tenant_id]
    KeyService(rig.tenants, rig.tenants).rotate(tenant_id, full_grant(), key_id, 3600, end_sessions=True)
    assert rig.sessions.authenticate(signed_in.session.token).tenant_id == tenant_id
    later = KeyService(rig.tenants, rig.tenants, clock=lambda: utc_now() + timedelta(seconds=1))
    later.rotate(tenant_id, full_grant(), key_id, 0, end_sessions=True)
    with pytest.raises(HeraldError) as ended:
        rig.sessions.authenticate(signed_in.session.token)
    assert ended.value.code is ErrorCode.INVALID_SESSION


def test_a_disabled_tenant_cannot_sign_in(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "", "198.51.100.7")
    rig.clock.advance(CODE_STREAK_SECONDS)
    rig.tenants.update_profile(signed_in.tenant_id, status="disabled")
    code = rig.ask("ada@example.com", CodePurpose.SIGN_IN) or ""
    assert rig.refused("ada@example.com", code).code is ErrorCode.TENANT_DISABLED
    with pytest.raises(HeraldError) as caught:
        rig.sessions.authenticate(signed_in.session.token)
    assert caught.value.code is ErrorCode.TENANT_DISABLED
