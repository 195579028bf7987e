"""Outbound webhooks as values: the request to send, how it went, and the refusal of a target."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Literal

import msgspec

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


class WebhookOutcome(msgspec.Struct, frozen=True):
    ok: bool
    status_code: int | None = None
    body_excerpt: str = ""
    error_class: ErrorClass | None = None
    error_message: str | None = None
    retry_after_seconds: float | None = None
