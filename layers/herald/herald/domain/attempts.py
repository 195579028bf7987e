"""The result of one delivery attempt, whatever the channel: what the delivery engine decides on."""

from __future__ import annotations

from typing import Any

import msgspec

from herald.domain.webhooks import WebhookExchange


class AttemptOutcome(msgspec.Struct):
    delivered: bool
    # The provider that delivered, or the last one tried (None for webhooks).
    used_provider: str | None = None
    error_message: str | None = None
    # True when retrying cannot help: the job fails now.
    final: bool = False
    # A final failure the tenant caused and can fix (recipient rejected or suppressed, invalid
    # content, an endpoint refusing the request): no operator copy in the dead-letter queue.
    caused_by_tenant: bool = False
    retry_after_seconds: float | None = None
    # Every provider tried in this attempt, in order: {provider, outcome, status, code, error,
    # latencyMs, messageId}.
    tried: list[dict[str, Any]] = msgspec.field(default_factory=list)
    # Providers that failed permanently in this attempt: skipped by later attempts of the job.
    skip_providers: list[str] = msgspec.field(default_factory=list)
    # The receiving endpoint's outage (timeout, connection error, 408/429/5xx): the tenant's
    # receiver to fix, so a final failure of it gets no operator copy either.
    receiver_outage: bool = False
    # The endpoint's breaker is open: nothing was sent, the job waits this long without spending
    # an attempt.
    defer_seconds: int | None = None
    # A webhook's answer: its status, how long the exchange took, what was sent and received.
    response_status: int | None = None
    latency_ms: int | None = None
    exchange: WebhookExchange | None = None
    # False when a retry cannot change the outcome (the recipient is suppressed or rejected, the
    # content is invalid): the job is not offered for retry.
    retryable: bool = True
