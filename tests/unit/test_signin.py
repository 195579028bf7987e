"""Sign-up and sign-in by emailed code, and console sessions: what a person sees, and the attacks
(guessed, reused, expired and locked codes, enumeration of addresses, floods, ended sessions)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from herald.domain.clock import utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.signin import (
    CODE_TTL_SECONDS,
    CODES_PER_ADDRESS,
    CODES_PER_CLIENT,
    SESSION_TTL_SECONDS,
    CodePurpose,
    address_key,
)
from herald.services.sessions import SessionAuthenticator
from herald.services.signin import SignInService
from herald.services.tenants import TenantAdmin
from tests.fakes.common import ManualClock
from tests.fakes.console import FakeMail, FakeSessions, FakeSignIn
from tests.fakes.tenants import FakeTenantTable

CONSOLE = "https://herald.example/console"
CODE = re.compile(r"Your Herald code: (\d{6})")


class Rig:
    def __init__(self) -> None:
        self.clock = ManualClock(1_800_000_000.0)
        self.tenants, self.store, self.sessions_store = FakeTenantTable(), FakeSignIn(), FakeSessions()
        self.mail = FakeMail()
        self.sessions = SessionAuthenticator(self.sessions_store, self.tenants, clock=self.clock)
        self.service = SignInService(
            store=self.store, tenants=self.tenants, sessions=self.sessions, mail=self.mail, clock=self.clock
        )

    def ask(
        self, email: str, purpose: CodePurpose = CodePurpose.SIGN_UP, ip: str = "198.51.100.7"
    ) -> str | None:
        self.service.request_code(
            purpose, email, ip, CONSOLE, name="Acme" if purpose is CodePurpose.SIGN_UP else None
        )
        found = CODE.search(self.mail.sent[-1][1])
        return found.group(1) if found else None

    def refused(self, email: str, code: str) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.service.verify(email, code)
        return caught.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_a_sign_up_code_creates_a_free_tenant_shows_its_key_once_and_starts_a_session(rig: Rig) -> None:
    code = rig.ask("Ada@Example.com")
    assert code is not None
    signed_in = rig.service.verify("ada@example.com", code)
    profile = rig.tenants.profile(signed_in.tenant_id)
    assert (profile.plan, profile.name, profile.email) == ("free", "Acme", "ada@example.com")
    assert signed_in.api_key is not None
    assert rig.sessions.authenticate(signed_in.session.token).tenant_id == signed_in.tenant_id
    # Only hashes are stored: neither the code nor the token is anywhere in the stores.
    assert code not in repr(rig.store.codes)
    assert signed_in.session.token not in repr(rig.sessions_store.sessions)


def test_signing_up_again_signs_in_to_the_same_account_without_a_new_key(rig: Rig) -> None:
    first = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    again = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    assert again.tenant_id == first.tenant_id
    assert again.api_key is None
    assert "already has a Herald account" in rig.mail.sent[-1][2]


def test_the_answer_is_the_same_for_addresses_with_and_without_an_account(rig: Rig) -> None:
    rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    # Neither request raises nor returns anything that tells them apart; only the mail differs.
    assert rig.ask("ada@example.com", CodePurpose.SIGN_IN) is not None
    assert rig.ask("nobody@example.com", CodePurpose.SIGN_IN) is None
    assert f"sign up at {CONSOLE}" in rig.mail.sent[-1][2]
    assert rig.store.code(address_key("nobody@example.com")) is None


def test_a_code_works_once(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    rig.service.verify("ada@example.com", code)
    assert rig.refused("ada@example.com", code).code is ErrorCode.INVALID_CODE


def test_a_code_expires_after_ten_minutes(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    rig.clock.advance(CODE_TTL_SECONDS)
    assert rig.refused("ada@example.com", code).code is ErrorCode.INVALID_CODE


def test_five_wrong_tries_lock_the_code_even_for_the_right_digits(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    wrong = [f"{(int(code) + n) % 1_000_000:06d}" for n in range(1, 6)]
    messages = [rig.refused("ada@example.com", guess).message for guess in wrong]
    assert "4 tries left" in messages[0]
    assert "locked" in messages[-1]
    assert rig.refused("ada@example.com", code).code is ErrorCode.INVALID_CODE
    assert rig.tenants.profiles == {}


def test_a_code_for_one_address_does_not_open_another(rig: Rig) -> None:
    code = rig.ask("ada@example.com") or ""
    assert rig.refused("eve@example.com", code).code is ErrorCode.INVALID_CODE


def test_code_requests_are_limited_per_address_and_per_client_ip(rig: Rig) -> None:
    for _ in range(CODES_PER_ADDRESS):
        rig.ask("ada@example.com", ip=f"203.0.113.{len(rig.mail.sent)}")
    with pytest.raises(HeraldError) as per_address:
        rig.ask("ada@example.com", ip="203.0.113.200")
    assert per_address.value.code is ErrorCode.RATE_LIMIT_EXCEEDED
    assert per_address.value.extra["retryAfter"] > 0
    for index in range(CODES_PER_CLIENT):
        rig.ask(f"user{index}@example.com", ip="192.0.2.1")
    with pytest.raises(HeraldError) as per_client:
        rig.ask("another@example.com", ip="192.0.2.1")
    assert per_client.value.code is ErrorCode.RATE_LIMIT_EXCEEDED


def test_mail_that_cannot_be_sent_is_reported_not_swallowed(rig: Rig) -> None:
    rig.mail.unavailable = True
    with pytest.raises(HeraldError) as caught:
        rig.ask("ada@example.com")
    assert caught.value.code is ErrorCode.DEPENDENCY_UNAVAILABLE


def test_a_signed_out_or_expired_session_is_refused_at_once(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    token = signed_in.session.token
    rig.sessions.end(token)
    with pytest.raises(HeraldError) as ended:
        rig.sessions.authenticate(token)
    assert ended.value.code is ErrorCode.INVALID_SESSION
    later = rig.sessions.start(signed_in.tenant_id)
    rig.clock.advance(SESSION_TTL_SECONDS)
    with pytest.raises(HeraldError):
        rig.sessions.authenticate(later.token)


def test_a_key_rotation_without_grace_ends_sessions_and_one_with_grace_keeps_them(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    admin = TenantAdmin(rig.tenants)
    admin.rotate_api_key(signed_in.tenant_id, 3600)
    assert rig.sessions.authenticate(signed_in.session.token).tenant_id == signed_in.tenant_id
    admin = TenantAdmin(rig.tenants, clock=lambda: utc_now() + timedelta(seconds=1))
    admin.rotate_api_key(signed_in.tenant_id, 0)
    with pytest.raises(HeraldError) as ended:
        rig.sessions.authenticate(signed_in.session.token)
    assert ended.value.code is ErrorCode.INVALID_SESSION


def test_a_disabled_tenant_cannot_sign_in(rig: Rig) -> None:
    signed_in = rig.service.verify("ada@example.com", rig.ask("ada@example.com") or "")
    rig.tenants.update_profile(signed_in.tenant_id, status="disabled")
    code = rig.ask("ada@example.com", CodePurpose.SIGN_IN) or ""
    assert rig.refused("ada@example.com", code).code is ErrorCode.TENANT_DISABLED
    with pytest.raises(HeraldError) as caught:
        rig.sessions.authenticate(signed_in.session.token)
    assert caught.value.code is ErrorCode.TENANT_DISABLED
