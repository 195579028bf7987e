"""The HTTP client of the WebhookWorker: one signed, SSRF-guarded request per delivery (design rule 9).

The URL is checked again at dial time and the socket is opened to one of the checked addresses itself,
so the name is resolved exactly once; TLS still verifies the certificate for the host name (SNI and
hostname check). Redirects are never followed. The whole exchange, TLS handshake and response
included, ends within ``total_timeout``: socket timeouts bound each read, not the sum of many slow
reads, so a watchdog shuts the socket down at the deadline.
"""

from __future__ import annotations

import email.utils
import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from datetime import UTC
from functools import lru_cache
from typing import TypeVar

import msgspec
from msgspec.structs import replace

from herald.adapters.ssrf import CheckedTarget, IPAddress, Resolver, check_url, resolve_host
from herald.domain.clock import epoch_seconds, utc_now
from herald.domain.signing import signature_headers
from herald.domain.webhooks import (
    BODY_EXCERPT_BYTES,
    ErrorClass,
    OutboundWebhook,
    UrlNotAllowed,
    WebhookExchange,
    WebhookOutcome,
    kept_request_headers,
    kept_response_headers,
    reserved_header,
)

TOTAL_TIMEOUT_SECONDS = 15.0
CONNECT_TIMEOUT_SECONDS = 5.0
METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE", "GET"})

_TIMED_OUT = "the endpoint did not answer in time"
T = TypeVar("T")

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 token
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")  # what http.client can send (latin-1, no CR/LF)


class _Response(msgspec.Struct, frozen=True):
    status: int
    retry_after: str | None
    excerpt: bytes
    headers: list[tuple[str, str]]


class _Watchdog:
    """Shuts ``sock`` down when the deadline passes, which wakes any read or handshake blocked on it."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self.sock = sock
        self.seconds = seconds
        self.fired = False
        self._handle: socket.socket | None = None
        self._timer: threading.Timer | None = None

    def __enter__(self) -> _Watchdog:
        # A duplicate descriptor, because wrapping the socket in TLS detaches the original object.
        self._handle = self.sock.dup()
        self._timer = threading.Timer(max(self.seconds, 0.0), self._expire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _expire(self) -> None:
        self.fired = True
        if self._handle is not None:
            with suppress(OSError):
                self._handle.shutdown(socket.SHUT_RDWR)

    def __exit__(self, *_: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer.join()  # never close the descriptor while _expire may still use it
        if self._handle is not None:
            self._handle.close()


def _epoch_now() -> int:
    return epoch_seconds(utc_now())


def _failed(
    error_class: ErrorClass,
    message: str,
    *,
    response: _Response | None = None,
    retry_after_seconds: float | None = None,
) -> WebhookOutcome:
    return WebhookOutcome(
        ok=False,
        status_code=response.status if response else None,
        error_class=error_class,
        error_message=message,
        retry_after_seconds=retry_after_seconds,
    )


def _excerpt(response: _Response | None) -> str:
    return response.excerpt.decode("utf-8", errors="replace") if response else ""


def _request_problem(hook: OutboundWebhook) -> str | None:
    if hook.method not in METHODS:
        return f"HTTP method {hook.method!r} is not supported"
    for name, value in hook.headers.items():
        if not _HEADER_NAME.fullmatch(name) or not _HEADER_VALUE.fullmatch(value):
            return "a custom header has an invalid name or value"
    return None


def _request_headers(
    hook: OutboundWebhook, target: CheckedTarget, secrets: Sequence[str], user_agent: str, timestamp: int
) -> dict[str, str]:
    # Reserved names are refused at acceptance (docs/api.md); dropped here as well, for jobs accepted
    # before a name was reserved: a tenant's header never sits beside ours under another spelling,
    # nor frames the body or steers the connection.
    headers = {name: value for name, value in hook.headers.items() if reserved_header(name) is None}
    headers.update(
        {
            "Host": target.host_header,
            "Content-Type": "application/json",
            "User-Agent": user_agent,
            # Signed or not, a delivery names its job, so a receiver can drop one it has seen.
            "webhook-id": hook.job_id,
            **signature_headers(secrets, hook.job_id, hook.body, timestamp),
        }
    )
    return headers


@lru_cache(maxsize=4)
def tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    # Verifies the chain and the host name; with a bundle, only that bundle is trusted.
    return ssl.create_default_context(cafile=ca_bundle)


def _open_socket(address: IPAddress, port: int, deadline: float) -> socket.socket:
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(min(CONNECT_TIMEOUT_SECONDS, deadline - time.monotonic()), 0.001))
        sock.connect((str(address), port))
    except OSError:
        sock.close()
        raise
    return sock


def _exchange(
    sock: socket.socket,
    target: CheckedTarget,
    hook: OutboundWebhook,
    headers: dict[str, str],
    ca_bundle: str | None,
) -> _Response:
    with ExitStack() as stack:
        stack.callback(sock.close)  # a no-op once TLS has taken the socket over
        if target.scheme == "https":
            sock = tls_context(ca_bundle).wrap_socket(sock, server_hostname=target.host)
            stack.callback(sock.close)
        connection = http.client.HTTPConnection(target.host, target.port)
        connection.sock = sock  # speak HTTP over our socket; http.client never dials by itself then
        stack.callback(connection.close)
        connection.request(hook.method, target.path_and_query, body=hook.body, headers=headers)
        response = connection.getresponse()
        excerpt = response.read(BODY_EXCERPT_BYTES)
        return _Response(response.status, response.getheader("Retry-After"), excerpt, response.getheaders())


# Most specific first: RemoteDisconnected is also an HTTPException and a ConnectionResetError.
_NETWORK_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (ssl.SSLError, "the TLS handshake with the endpoint failed"),
    (http.client.RemoteDisconnected, "the endpoint closed the connection without answering"),
    (http.client.HTTPException, "the endpoint did not answer with valid HTTP"),
    (TimeoutError, _TIMED_OUT),
    (ConnectionRefusedError, "the endpoint refused the connection"),
)


def _describe_failure(exc: Exception) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"the endpoint's TLS certificate was rejected: {exc.verify_message}"
    known = (message for kind, message in _NETWORK_ERRORS if isinstance(exc, kind))
    return next(known, f"network error talking to the endpoint ({type(exc).__name__})")


def _deliver(
    target: CheckedTarget,
    hook: OutboundWebhook,
    headers: dict[str, str],
    ca_bundle: str | None,
    deadline: float,
) -> _Response | str:
    """The response, or why there is none."""
    return exchange_with_checked_address(
        target,
        deadline,
        lambda sock: _exchange(sock, target, hook, headers, ca_bundle),
        unreachable="the endpoint could not be reached",
        timed_out=_TIMED_OUT,
    )


def exchange_with_checked_address(
    target: CheckedTarget,
    deadline: float,
    talk: Callable[[socket.socket], T],
    *,
    unreachable: str,
    timed_out: str,
) -> T | str:
    """What ``talk`` makes of a socket to the first of the target's checked addresses that accepts
    the TCP connection, or why there is none (a sentence). After the connection the attempt is
    final, so a request is never sent twice; the deadline bounds the whole exchange."""
    reason = unreachable
    for address in target.addresses:
        try:
            sock = _open_socket(address, target.port, deadline)
        except OSError as exc:
            reason = _describe_failure(exc)
            continue
        with _Watchdog(sock, deadline - time.monotonic()) as watchdog:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                outcome: T | str = talk(sock)
            except (OSError, http.client.HTTPException) as exc:
                outcome = _describe_failure(exc)
        # A response cut short by the deadline may look complete (EOF ends the headers): distrust it.
        return timed_out if watchdog.fired else outcome
    return reason


def _retry_after_seconds(value: str | None, now: int) -> float | None:
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:  # "-0000" parses as naive; HTTP dates are always GMT
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - now)


def _classify(response: _Response, now: int) -> WebhookOutcome:
    status = response.status
    if 200 <= status < 300:
        return WebhookOutcome(ok=True, status_code=status)
    if 300 <= status < 400:
        message = f"the endpoint answered HTTP {status}; redirects are not followed"
        return _failed("permanent", message, response=response)
    message = f"the endpoint answered HTTP {status}"
    if status in (408, 429) or status >= 500:
        retry_after = _retry_after_seconds(response.retry_after, now) if status in (429, 503) else None
        return _failed("transient", message, response=response, retry_after_seconds=retry_after)
    return _failed("permanent", message, response=response)


def send_webhook(
    hook: OutboundWebhook,
    *,
    secrets: Sequence[str],
    local_origin: str | None,
    user_agent: str,
    resolve: Resolver = resolve_host,
    now: Callable[[], int] = _epoch_now,
    ca_bundle: str | None = None,
    total_timeout: float = TOTAL_TIMEOUT_SECONDS,
) -> WebhookOutcome:
    """Deliver ``hook`` once and say how it went; never raises for the endpoint's faults.

    ``secrets`` sign the body (oldest first, none = unsigned); ``ca_bundle`` replaces the system
    trust store (a private CA in tests); ``local_origin`` is the local stack's exception (see ssrf).
    """
    deadline = time.monotonic() + total_timeout  # the DNS lookup counts against it too
    problem = _request_problem(hook)
    if problem is not None:
        return _failed("permanent", problem)
    try:
        target = check_url(hook.url, local_origin=local_origin, resolve=resolve)
    except UrlNotAllowed as refusal:
        return _failed(
            "transient" if refusal.retryable else "permanent", f"URL not allowed: {refusal.reason}"
        )
    headers = _request_headers(hook, target, secrets, user_agent, now())
    started = time.monotonic()
    result = _deliver(target, hook, headers, ca_bundle, deadline)
    response = None if isinstance(result, str) else result
    outcome = _failed("transient", result) if isinstance(result, str) else _classify(result, now())
    exchange = WebhookExchange(
        request_headers=kept_request_headers(headers, frozenset(hook.headers)),
        response_headers=kept_response_headers(response.headers) if response else {},
        body_excerpt=_excerpt(response),
    )
    latency = round((time.monotonic() - started) * 1000)
    return replace(outcome, latency_ms=latency, exchange=exchange)
