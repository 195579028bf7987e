"""Outbound webhooks as values: the request to send, how it went, and the refusal of a target."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Literal

import msgspec

from herald.domain.notifications import MASKED, REDACTED, SENSITIVE_HEADER

ErrorClass = Literal["transient", "permanent"]

# Header names a tenant may not give its webhooks, in any letter case. Herald sets these itself:
HERALD_HEADERS = frozenset({"content-type", "user-agent", "host", "content-length", "transfer-encoding"})
HERALD_HEADER_PREFIXES = ("x-webhook-", "webhook-")
# These speak to the connection, not the receiver (RFC 9110, section 7.6.1; Expect asks the next hop
# for a 100 Continue): forwarded, they could upgrade it (h2c), hold it open or reframe the body.
HOP_BY_HOP_HEADERS = frozenset({"connection", "keep-alive", "upgrade", "te", "trailer", "expect"})
HOP_BY_HOP_PREFIXES = ("proxy-",)


class HeaderOwner(StrEnum):
    HERALD = "Herald"
    CONNECTION = "the connection"


def reserved_header(name: str) -> HeaderOwner | None:
    """Who ``name`` belongs to when a tenant may not set it; None when it may."""
    lowered = name.lower()
    if lowered in HERALD_HEADERS or lowered.startswith(HERALD_HEADER_PREFIXES):
        return HeaderOwner.HERALD
    if lowered in HOP_BY_HOP_HEADERS or lowered.startswith(HOP_BY_HOP_PREFIXES):
        return HeaderOwner.CONNECTION
    return None


class UrlNotAllowed(Exception):
    """The URL may not be called. ``reason`` is safe to show the tenant; ``retryable`` marks a DNS
    lookup that failed for a passing reason (timeout, temporary failure) rather than a refusal."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class OutboundWebhook(msgspec.Struct, frozen=True):
    job_id: str
    url: str
    method: str
    headers: Mapping[str, str]
    body: bytes  # the exact bytes that are signed and sent


# What an attempt keeps of the answer: the body's first 4 KB, and at most 20 headers of bounded size.
BODY_EXCERPT_BYTES = 4096
KEPT_RESPONSE_HEADERS = 20
KEPT_HEADER_NAME = 64
KEPT_HEADER_VALUE = 256


class WebhookExchange(msgspec.Struct, frozen=True):
    """What one attempt sent and got back beyond its status and latency: the bulk of its detail.

    ``request_headers`` are the headers as sent with every credential masked and the tenant's own
    values left out (``REDACTED``): those stay sealed with the request and are shown from there."""

    request_headers: dict[str, str] = msgspec.field(default_factory=dict)
    response_headers: dict[str, str] = msgspec.field(default_factory=dict)
    body_excerpt: str = ""


class WebhookOutcome(msgspec.Struct, frozen=True):
    ok: bool
    status_code: int | None = None
    error_class: ErrorClass | None = None
    error_message: str | None = None
    retry_after_seconds: float | None = None
    # From the dial to the end of the excerpt's read; None when nothing was sent.
    latency_ms: int | None = None
    exchange: WebhookExchange | None = None


def kept_request_headers(sent: Mapping[str, str], tenant_names: frozenset[str]) -> dict[str, str]:
    """The request's headers as an attempt keeps them: Herald's own as sent, signatures masked; the
    tenant's by name only (their values are sealed with the request)."""
    return {
        name: REDACTED if name in tenant_names else MASKED if SENSITIVE_HEADER.fullmatch(name) else value
        for name, value in sent.items()
    }


def kept_response_headers(received: list[tuple[str, str]]) -> dict[str, str]:
    """The answer's headers as an attempt keeps them: the first few, each cut to a bounded size,
    credentials (a Set-Cookie, a token) masked like a request's."""
    kept: dict[str, str] = {}
    for name, value in received[:KEPT_RESPONSE_HEADERS]:
        short = name[:KEPT_HEADER_NAME]
        masked = SENSITIVE_HEADER.fullmatch(short) or short.lower() == "set-cookie"
        kept[short] = MASKED if masked else value[:KEPT_HEADER_VALUE]
    return kept


def shown_request_headers(kept: Mapping[str, str], tenant_headers: Mapping[str, str]) -> dict[str, str]:
    """The headers an attempt sent as the tenant's job document shows them: the tenant's own from
    ``tenant_headers`` (already masked where they are credentials), Herald's as kept."""
    return {
        name: tenant_headers.get(name, MASKED) if value == REDACTED else value for name, value in kept.items()
    }
