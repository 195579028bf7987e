"""Who a request says it is: its API key (``X-API-Key``, else ``Authorization: Bearer``), or else
the console's session cookie, with the same-origin proof a state change signed in by that cookie
must carry.

A request that presents an API key is authenticated by the key alone, exactly as before; only a
request without one is looked at for the session cookie. A state-changing request (POST, PUT,
PATCH, DELETE) authenticated by the cookie must prove it comes from the console's own origin: its
``Origin`` header equals the stack's origin (``stack_origin``), or the browser says
``Sec-Fetch-Site: same-origin``. SameSite=Strict already keeps the cookie off cross-site requests;
this check also refuses same-site ones from another origin (another port or subdomain).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.shared.cookies import Cookie, SameSite

from herald.domain.account import API_KEY_PATTERN
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.portal import PORTAL_API_PREFIX, PORTAL_COOKIE, PORTAL_SESSION_SECONDS
from herald.domain.signin import SESSION_COOKIE, SESSION_TTL_SECONDS
from herald.services.auth import Credentials

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    return {str(name).lower(): str(value) for name, value in (event.get("headers") or {}).items()}


def stack_origin(event: Mapping[str, Any], configured: str | None) -> str:
    """The origin of the links Herald writes for a person and the one ``Origin`` a state change may
    carry: the template's PublicOrigin, else https and the domain API Gateway says the request reached
    (``requestContext.domainName``, one of the API's own domains). Never ``Host`` or
    ``X-Forwarded-*``: the client writes those, and would write its own origin into Herald's mail."""
    return configured or f"https://{event['requestContext']['domainName']}"


def same_origin(event: Mapping[str, Any], origin: str) -> bool:
    headers = _headers(event)
    sent = headers.get("origin")
    if sent is not None:
        return sent == origin
    return headers.get("sec-fetch-site") == "same-origin"


def require_same_origin(event: Mapping[str, Any], origin: str) -> None:
    if not same_origin(event, origin):
        raise HeraldError(
            "This request did not come from the console's own page (Origin does not match).",
            ErrorCode.CROSS_ORIGIN_REQUEST,
        )


def session_token(event: Mapping[str, Any]) -> str | None:
    return _cookie(event, SESSION_COOKIE)


def portal_token(event: Mapping[str, Any]) -> str | None:
    """The portal's session cookie: read by the portal's routes only, never taken as a console
    session or an API key anywhere else."""
    return _cookie(event, PORTAL_COOKIE)


def _cookie(event: Mapping[str, Any], wanted: str) -> str | None:
    for cookie in event.get("cookies") or []:
        name, _, value = str(cookie).partition("=")
        if name.strip() == wanted and value.strip():
            return value.strip()
    return None


def extract_api_key(headers: Mapping[str, str]) -> str:
    """The request's API key: ``X-API-Key``, else ``Authorization: Bearer``; X-API-Key wins."""
    lowered = {name.lower(): value for name, value in headers.items()}
    key = lowered.get("x-api-key")
    if key is None:
        scheme, _, token = lowered.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else None
    if not key:
        raise HeraldError("An API key is required (X-API-Key header).", ErrorCode.MISSING_API_KEY)
    if not API_KEY_PATTERN.match(key.strip()):
        raise HeraldError(
            "The API key is malformed; expected hk_ followed by 64 hex digits.", ErrorCode.MALFORMED_API_KEY
        )
    return key.strip()


def _presents_api_key(headers: Mapping[str, str]) -> bool:
    return "x-api-key" in headers or headers.get("authorization", "").lower().startswith("bearer")


def credentials(event: Mapping[str, Any], configured_origin: str | None) -> Credentials:
    """What the request presents: its API key, else its console session cookie (a state change by
    cookie must come from the console's own origin; ``configured_origin``: see ``stack_origin``)."""
    headers = _headers(event)
    token, ip = session_token(event), client_ip(event)
    if token is None or _presents_api_key(headers):
        return Credentials(api_key=extract_api_key(headers), ip=ip)
    if str(event.get("requestContext", {}).get("http", {}).get("method", "")).upper() in UNSAFE_METHODS:
        require_same_origin(event, stack_origin(event, configured_origin))
    return Credentials(session_token=token, ip=ip)


def client_ip(event: Mapping[str, Any]) -> str | None:
    """The address API Gateway saw the request come from; never ``X-Forwarded-For``, which the
    client writes."""
    source = event.get("requestContext", {}).get("http", {}).get("sourceIp")
    return str(source) if source else None


def signed_in_by_session(event: Mapping[str, Any]) -> bool:
    return session_token(event) is not None and not _presents_api_key(_headers(event))


def session_cookie(token: str, max_age: int = SESSION_TTL_SECONDS) -> Cookie:
    """HttpOnly (no script reads it), Secure (https only; browsers treat http://127.0.0.1 and
    localhost as secure contexts, so the local stack keeps the attribute too), SameSite=Strict."""
    return Cookie(
        SESSION_COOKIE,
        token,
        path="/",
        secure=True,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.STRICT_MODE,
    )


def portal_cookie(token: str, max_age: int = PORTAL_SESSION_SECONDS) -> Cookie:
    """Like the console's cookie, but sent only to the portal's API routes (its path), so no other
    route of the API ever receives it."""
    return Cookie(
        PORTAL_COOKIE,
        token,
        path=PORTAL_API_PREFIX,
        secure=True,
        http_only=True,
        max_age=max_age,
        same_site=SameSite.STRICT_MODE,
    )


def cleared_cookie() -> Cookie:
    """Tells the browser to drop the session cookie at once."""
    return session_cookie("", max_age=-1)
