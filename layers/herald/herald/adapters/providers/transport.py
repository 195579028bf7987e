"""HTTP plumbing shared by the tenant vendors' adapters, and the one way they write a sender.

Every call has a connect and a read timeout and never follows a redirect; network failures become
TRANSIENT failures here, once. Error bodies are parsed defensively: proxies answer with HTML, some
errors have no body at all, so the status decides first and the provider's own words only refine.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import formataddr, parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import requests

from herald import USER_AGENT
from herald.domain.providers import HEADER_VALUE, Credential, FailureKind, ProviderFailure, Routing
from herald.domain.vendors import TENANT_PROVIDERS, ProviderName

# requests' own advice: slightly above a multiple of 3 s, the classic TCP retransmission window,
# so a connect that needed one retransmitted SYN is not cut off just before it lands.
CONNECT_TIMEOUT_SECONDS = 3.05
# Providers answer in well under a second; a slow one has 10 s.
READ_TIMEOUT_SECONDS = 10.0
TIMEOUT = (CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)
# A tenant has each vendor of the provider table at most once: the longest a pass over them can take,
# which the email worker's record budget covers (herald.composition.workers).
FULL_PASS_SECONDS = len(TENANT_PROVIDERS) * (CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS)

# One file of a multipart form: (field name, (file name, content, content type)).
FilePart = tuple[str, tuple[str, bytes, str]]

# A provider's wait hint beyond an hour is more likely a misread header than advice; the delivery
# engine applies its own bounds on top.
MAX_RETRY_AFTER_SECONDS = 3600.0


def new_session() -> requests.Session:
    """One session per provider module: its connection pool survives between warm invocations."""
    session = requests.Session()
    # Keys travel in headers: no proxy from the environment and no .netrc credentials may see or
    # replace them.
    session.trust_env = False
    return session


def call(
    session: requests.Session,
    provider: ProviderName,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    body: object = None,
    form: Mapping[str, str] | None = None,
    files: Sequence[FilePart] = (),
    params: Mapping[str, str] | None = None,
) -> requests.Response:
    """Send one request, with a JSON ``body`` or the fields of a ``form`` (with ``files``, as
    multipart/form-data); a network failure raises a TRANSIENT ``ProviderFailure``.

    Redirects are never followed: ``requests`` would carry custom auth headers such as a vendor's
    ``X-…-Token`` to whatever host the redirect names.
    """
    all_headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **headers}
    if not all(HEADER_VALUE.fullmatch(value) for value in all_headers.values()):
        # A key with a line break would inject headers; one outside ASCII makes http.client raise
        # an error holding the whole value. Refuse before anything is sent, naming no value.
        raise ProviderFailure(
            provider, FailureKind.PROVIDER_PERMANENT, "the credential is not a valid HTTP header value"
        )
    data = None
    if body is not None:
        all_headers["Content-Type"] = "application/json"
        data = encode_json(body)
    elif files:
        # requests writes the multipart body and its Content-Type (with the boundary) itself.
        return _sent(
            session, provider, method, url, headers=all_headers, params=params, data=form, files=list(files)
        )
    elif form is not None:
        all_headers["Content-Type"] = "application/x-www-form-urlencoded"
        data = urlencode(form).encode("ascii")
    return _sent(session, provider, method, url, headers=all_headers, params=params, data=data)


def _sent(
    session: requests.Session,
    provider: ProviderName,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    params: Mapping[str, str] | None,
    **content: Any,
) -> requests.Response:
    try:
        return session.request(
            method, url, headers=headers, params=params, timeout=TIMEOUT, allow_redirects=False, **content
        )
    except requests.Timeout as exc:
        raise ProviderFailure(provider, FailureKind.TRANSIENT, "the provider did not answer in time") from exc
    except (
        requests.exceptions.InvalidURL,
        requests.exceptions.MissingSchema,
        requests.exceptions.InvalidSchema,
    ) as exc:
        raise ProviderFailure(
            provider, FailureKind.PROVIDER_PERMANENT, "the provider base URL is not a valid URL"
        ) from exc
    except requests.RequestException as exc:
        raise ProviderFailure(provider, FailureKind.TRANSIENT, "could not connect to the provider") from exc


def base64_text(content: bytes) -> str:
    """An attachment's content as the JSON APIs take it: standard base64, no line breaks."""
    return base64.b64encode(content).decode("ascii")


def encode_json(body: object) -> bytes:
    """Compact, stable JSON: the same body always gives the same bytes (idempotency keys hold)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def sender_field(routing: Routing) -> str:
    """The sender as a vendor's from field takes it: the address, with its display name if it has one."""
    return (
        formataddr((routing.from_name, routing.from_address)) if routing.from_name else routing.from_address
    )


def join_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + path


def json_object(response: requests.Response) -> dict[str, Any]:
    """The body as a JSON object, or ``{}`` for empty, HTML or otherwise unexpected bodies."""
    if not response.content:
        return {}
    try:
        parsed = response.json()
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def status_kind(status: int) -> FailureKind:
    """The class of an HTTP status before the provider's error code refines it."""
    if status in {408, 429} or status >= 500:
        return FailureKind.TRANSIENT
    # 404 on an endpoint Herald calls means a wrong base URL or a resource gone at the provider,
    # never a fault of the message; 451 is a provider's data-residency block.
    if status in {401, 403, 404, 451}:
        return FailureKind.PROVIDER_PERMANENT
    if 400 <= status < 500:
        return FailureKind.MESSAGE_PERMANENT
    # 1xx, 3xx (redirects are not followed) or an odd 2xx: nothing to blame the message for.
    return FailureKind.TRANSIENT


def bounded_delay(seconds: float) -> float | None:
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def delay_header(response: requests.Response, name: str, now: Callable[[], float]) -> float | None:
    """A header holding a delay in seconds (or an HTTP date, as ``Retry-After`` may), bounded."""
    raw = response.headers.get(name, "").strip()
    if not raw:
        return None
    try:
        return bounded_delay(float(raw))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return bounded_delay(moment.timestamp() - now())


def epoch_header(response: requests.Response, name: str, now: Callable[[], float]) -> float | None:
    """A header holding the Unix time a window resets (``X-RateLimit-Reset``), as a delay."""
    raw = response.headers.get(name, "").strip()
    try:
        return bounded_delay(float(raw) - now()) if raw else None
    except ValueError:
        return None


def unexpected_answer(provider: ProviderName, what: str, status: int) -> ProviderFailure:
    """A 2xx whose body lacks what the API promises: a provider hiccup or a proxy, so retry later."""
    return ProviderFailure(provider, FailureKind.TRANSIENT, f"unexpected answer: {what}", status=status)


def succeeded(response: requests.Response) -> bool:
    # Not ``response.ok``: that is true for the 3xx redirects Herald refuses to follow.
    return 200 <= response.status_code < 300


def rejects_key(failure: ProviderFailure) -> bool:
    """Whether a failed key check is the provider's verdict on the key (not an outage)."""
    return failure.kind is FailureKind.PROVIDER_PERMANENT and failure.status in {400, 401, 403}


def fallback_reason(status: int) -> str:
    return f"HTTP {status} without a readable error message"


class HttpProvider:
    """The skeleton every HTTP provider adapter shares: calls relative to its base URL, answers
    expected to succeed, and a delete that treats "already gone" as done. Each adapter supplies its
    own ``_failure``: the translation of its provider's error vocabulary."""

    name: ProviderName

    def __init__(
        self, base_url: str, session: requests.Session | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._base_url = base_url
        self._session = session or new_session()
        self._clock = clock

    def _call(
        self,
        method: str,
        path: str,
        auth: Mapping[str, str],
        body: object = None,
        params: Mapping[str, str] | None = None,
        *,
        form: Mapping[str, str] | None = None,
        files: Sequence[FilePart] = (),
        base_url: str | None = None,
    ) -> requests.Response:
        """A call relative to the base URL (or to ``base_url``, for a vendor with several regions)."""
        url = join_url(base_url or self._base_url, path)
        return call(
            self._session,
            self.name,
            method,
            url,
            headers=auth,
            body=body,
            form=form,
            files=files,
            params=params,
        )

    def _expect(self, response: requests.Response, credential: Credential) -> dict[str, Any]:
        if not succeeded(response):
            raise self._failure(response, credential)
        return json_object(response)

    def _delete(
        self, path: str, auth: Mapping[str, str], credential: Credential, base_url: str | None = None
    ) -> None:
        response = self._call("DELETE", path, auth, base_url=base_url)
        if response.status_code != 404 and not succeeded(response):
            raise self._failure(response, credential)

    def _failure(self, response: requests.Response, credential: Credential) -> ProviderFailure:
        raise NotImplementedError


def qualify_host(host: str, domain: str) -> str:
    """Providers give record hosts either relative to the domain ("send") or fully qualified;
    tenants paste them into different DNS consoles, so Herald always hands out the full name."""
    name = host.strip().rstrip(".").lower()
    domain = domain.strip().rstrip(".").lower()
    if not domain:
        return name
    if name in {"", "@"}:
        return domain
    if name == domain or name.endswith(f".{domain}"):
        return name
    return f"{name}.{domain}"
