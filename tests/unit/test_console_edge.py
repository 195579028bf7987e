"""The console's HTTP edge: which credential authenticates a request, the same-origin proof of state
changes signed in by the cookie against the stack's origin (never the request's Host or
X-Forwarded-Proto), the cookie's attributes, and the page's assets and headers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herald.domain.access import Ability
from herald.domain.account import generate_api_key
from herald.domain.errors import ErrorCode, HeraldError
from herald.http.console_pages import CONTENT_SECURITY_POLICY, console_answer
from herald.http.credentials import (
    cleared_cookie,
    credentials,
    portal_cookie,
    portal_token,
    same_origin,
    session_cookie,
    session_token,
    stack_origin,
)
from herald.services.auth import Authenticator, Callers
from herald.services.sessions import SessionAuthenticator
from herald.settings import OriginSettings, SettingsError
from tests.fakes.console import FakeSessions
from tests.fakes.tenants import FakeTenantTable

STATIC = Path(__file__).parents[2] / "functions" / "console" / "static"
HOST = "herald.example"
ORIGIN = f"https://{HOST}"  # the template's PublicOrigin
# What a client writes to make its own origin look like the one it was sent to.
FORGED = {"host": "evil.example", "x-forwarded-proto": "http", "origin": "http://evil.example"}


def event(method: str = "GET", cookie: str | None = None, **headers: str) -> dict[str, Any]:
    return {
        "headers": headers,
        "cookies": [f"herald_session={cookie}"] if cookie else [],
        # Set by API Gateway: the domain of its own that the request reached.
        "requestContext": {"http": {"method": method}, "domainName": "api-id.execute-api.example"},
    }


class Rig:
    def __init__(self) -> None:
        self.tenants = FakeTenantTable()
        self.key = generate_api_key()
        self.tenants.add_tenant("tenant-a", api_key=self.key)
        self.sessions = SessionAuthenticator(FakeSessions(), self.tenants)
        self.callers = Callers(Authenticator(self.tenants, self.tenants), lambda: self.sessions)
        self.token = self.sessions.start("tenant-a", "mem_tenant-a").token

    def caller(self, request: dict[str, Any], configured: str | None = ORIGIN) -> str:
        return self.callers.authenticate(credentials(request, configured), Ability.READ).tenant_id

    def refused(self, request: dict[str, Any], configured: str | None = ORIGIN) -> ErrorCode:
        with pytest.raises(HeraldError) as caught:
            self.caller(request, configured)
        return caught.value.code


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_the_session_cookie_authenticates_reads_and_same_origin_changes(rig: Rig) -> None:
    assert rig.caller(event(cookie=rig.token)) == "tenant-a"
    assert rig.caller(event("POST", rig.token, origin=ORIGIN)) == "tenant-a"
    assert rig.caller(event("DELETE", rig.token, **{"sec-fetch-site": "same-origin"})) == "tenant-a"


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"origin": f"http://{HOST}"},  # another scheme is another origin
        {"origin": f"https://{HOST}:8443"},
        {"origin": "null"},
        {"sec-fetch-site": "same-site"},
        {"sec-fetch-site": "cross-site"},
        {},
    ],
)
def test_a_state_change_by_cookie_without_same_origin_proof_is_refused(
    rig: Rig, headers: dict[str, str]
) -> None:
    assert rig.refused(event("POST", rig.token, **headers)) is ErrorCode.CROSS_ORIGIN_REQUEST


def test_an_api_key_wins_over_the_cookie_and_needs_no_origin(rig: Rig) -> None:
    assert rig.caller(event("POST", "not-a-session", **{"x-api-key": rig.key})) == "tenant-a"
    assert (
        rig.refused(event("POST", rig.token, **{"x-api-key": "hk_" + "0" * 64})) is ErrorCode.INVALID_API_KEY
    )


def test_without_any_credential_the_api_key_is_asked_for(rig: Rig) -> None:
    assert rig.refused(event()) is ErrorCode.MISSING_API_KEY
    assert rig.refused(event(cookie="forged-token")) is ErrorCode.INVALID_SESSION


def test_same_origin_compares_the_stacks_origin() -> None:
    assert same_origin(event(origin=ORIGIN), ORIGIN)
    assert not same_origin(event(origin=f"{ORIGIN}.evil.example"), ORIGIN)


def test_the_stacks_origin_is_the_configured_one_whatever_the_request_claims() -> None:
    assert stack_origin(event(**FORGED), ORIGIN) == ORIGIN
    # Without one, the domain API Gateway reports (its own), over https: still no client header.
    assert stack_origin(event(**FORGED), None) == "https://api-id.execute-api.example"


@pytest.mark.parametrize("configured", [ORIGIN, None])
def test_a_forged_host_and_proto_that_match_a_forged_origin_are_refused(
    rig: Rig, configured: str | None
) -> None:
    refused = rig.refused(event("POST", rig.token, **FORGED), configured)
    assert refused is ErrorCode.CROSS_ORIGIN_REQUEST


def test_the_public_origin_setting_is_required_and_empty_means_the_api_gateway_domain() -> None:
    assert OriginSettings.from_env({"HERALD_PUBLIC_ORIGIN": ORIGIN}).public_origin == ORIGIN
    assert OriginSettings.from_env({"HERALD_PUBLIC_ORIGIN": ""}).public_origin is None
    with pytest.raises(SettingsError):
        OriginSettings.from_env({})


def test_the_cookie_is_httponly_secure_strict_and_cleared_at_sign_out() -> None:
    cookie = str(session_cookie("token-value"))
    assert cookie.startswith("herald_session=token-value; Path=/; Max-Age=43200")
    for attribute in ("HttpOnly", "Secure", "SameSite=Strict"):
        assert attribute in cookie
    assert "Max-Age=0" in str(cleared_cookie())
    assert session_token({"cookies": ["other=1", "herald_session=abc"]}) == "abc"


def test_the_page_and_its_assets_carry_the_security_headers() -> None:
    page = console_answer(STATIC, "GET", "/console/jobs/some-id")
    assert page["statusCode"] == 200
    assert '<script type="module" src="/console/assets/app.js">' in page["body"]
    assert page["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    script = console_answer(STATIC, "GET", "/console/assets/app.js")
    assert script["headers"]["Content-Type"].startswith("text/javascript")


def test_the_portal_page_is_its_own_file_under_the_same_headers() -> None:
    page = console_answer(STATIC, "GET", "/portal")
    assert page["statusCode"] == 200
    assert '<script type="module" src="/console/assets/portal.js">' in page["body"]
    assert page["headers"]["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert page["headers"]["Cache-Control"] == "no-cache"


def test_the_portal_cookie_goes_to_the_portals_routes_only_and_is_no_credential_elsewhere(rig: Rig) -> None:
    cookie = str(portal_cookie("token-value"))
    assert cookie.startswith("herald_portal=token-value; Path=/api/v1/portal; Max-Age=7200")
    for attribute in ("HttpOnly", "Secure", "SameSite=Strict"):
        assert attribute in cookie
    request = {**event(), "cookies": [f"herald_portal={rig.token}"]}
    assert portal_token(request) == rig.token
    assert session_token(request) is None
    # Even a console session's token, sent under the portal's name, is not taken by the API.
    assert rig.refused(request) is ErrorCode.MISSING_API_KEY


@pytest.mark.parametrize(
    "path",
    [
        "/console/assets/../app.py",
        "/console/assets/%2e%2e/app.py",
        "/console/assets/x/../../app.py",
        "/console/assets/.hidden.js",
        "/console/assets/missing.js",
    ],
)
def test_nothing_outside_the_asset_folder_is_served(path: str) -> None:
    assert console_answer(STATIC, "GET", path)["statusCode"] == 404


def test_every_inline_script_or_style_would_be_blocked_so_none_is_shipped() -> None:
    for asset in [*sorted(STATIC.glob("*.html")), *sorted((STATIC / "assets").iterdir())]:
        text = asset.read_text(encoding="utf-8")
        assert "<script>" not in text
        assert 'style="' not in text
        # Markup is never built from strings: no innerHTML, insertAdjacentHTML or document.write.
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
            assert sink not in text, (asset.name, sink)
