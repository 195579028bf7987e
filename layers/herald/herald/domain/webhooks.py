"""Outbound webhooks as values: the request to send, how it went, and the refusal of a target."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

ErrorClass = Literal["transient", "permanent"]


class UrlNotAllowed(Exception):
    """The URL may not be called. ``reason`` is safe to show the tenant; ``retryable`` marks a DNS
    lookup that failed for a passing reason (timeout, temporary failure) rather than a refusal."""

    def __init__(self, reason: str, *, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


@dataclass(frozen=True)
class OutboundWebhook:
    job_id: str
    url: str
    method: str
    headers: Mapping[str, str]
    body: bytes  # the exact bytes that are signed and sent


@dataclass(frozen=True)
class WebhookOutcome:
    ok: bool
    status_code: int | None = None
    body_excerpt: str = ""
    error_class: ErrorClass | None = None
    error_message: str | None = None
    retry_after_seconds: float | None = None
