"""One attempt at a webhook: the stored request, signed with the tenant's secrets, sent once
through the SSRF-safe sender."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from msgspec.structs import replace

from herald.domain.account import TenantProfile
from herald.domain.attempts import AttemptOutcome
from herald.domain.breakers import Breaker
from herald.domain.errors import DependencyError
from herald.domain.events import Event, delivery_body
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import compact_json
from herald.domain.notifications import DeliveryRef, NotificationRequest, SealedHeaders, WebhookNotification
from herald.domain.secrets import SecretTampered
from herald.domain.webhooks import OutboundWebhook
from herald.services.health import EndpointHealth, Gate
from herald.services.ports.providers import WebhookSender
from herald.services.tenant_directory import TenantDirectory, tenant_for_pass

# The reason a job for a disabled endpoint ends with; the tenant re-enables the endpoint.
ENDPOINT_DISABLED = (
    "the webhook endpoint is disabled, by the tenant or after a long outage (endpoint_disabled);"
    " the job was not sent"
)
SUBSCRIPTION_DISABLED = (
    "the subscription is disabled, by the tenant, its customer or after a long outage"
    " (subscription_disabled); the delivery was not sent"
)
SUBSCRIPTION_DELETED = "the subscription was deleted (subscription_deleted); the delivery was not sent"
EVENT_GONE = "the event is past its retention (event_not_found); the delivery was not sent"


class EventReader(Protocol):
    def get(self, tenant_id: str, event_id: str) -> Event | None: ...


class WebhookAttempt:
    def __init__(
        self,
        *,
        directory: TenantDirectory,
        sender: WebhookSender,
        health: EndpointHealth | None = None,
        events: EventReader | None = None,
    ) -> None:
        """``events``: where a delivery read from the table finds its body (the event's payload)."""
        self._directory = directory
        self._send = sender
        self._health = health
        self._events = events

    def run(self, message: JobMessage, request: NotificationRequest, _claim: Claim) -> AttemptOutcome:
        stored = request.notification
        if not isinstance(stored, WebhookNotification):
            raise TypeError(f"job {message.job_id} is not a webhook")
        if stored.delivery is not None:
            return self._deliver_event(message, stored, stored.delivery)
        if self._health is None or not self._health.enabled:
            profile = tenant_for_pass(
                lambda: self._directory.profile(message.tenant_id), "signing secret unavailable"
            )
            if isinstance(profile, AttemptOutcome):
                return profile
            return self._attempt(message, stored, profile)
        health = self._health
        view = tenant_for_pass(
            lambda: health.with_profile(message.tenant_id, stored.url), "signing secret unavailable"
        )
        if isinstance(view, AttemptOutcome):
            return view
        return _through_gate(
            health,
            view.breaker,
            view.profile.email,
            lambda: self._attempt(message, stored, view.profile),
            ENDPOINT_DISABLED,
        )

    def _deliver_event(
        self, message: JobMessage, stored: WebhookNotification, ref: DeliveryRef
    ) -> AttemptOutcome:
        """A subscription's delivery: to the subscription's URL and headers as they are now, signed
        with its own secrets, through its own breaker (its history, not its origin's)."""
        health = self._health
        if health is None:
            raise TypeError("a delivery of an event needs the endpoint health")
        view = tenant_for_pass(
            lambda: health.for_subscription(message.tenant_id, ref.subscription_id),
            "subscription unavailable",
        )
        if isinstance(view, AttemptOutcome):
            return view
        subscription = view.subscription
        if subscription is None:
            return AttemptOutcome(
                delivered=False, error_message=SUBSCRIPTION_DELETED, final=True, caused_by_tenant=True
            )
        body = self._body(message.tenant_id, stored, ref)
        if isinstance(body, AttemptOutcome):
            return body
        webhook = replace(stored, url=subscription.url, headers=subscription.headers or {}, payload=body)

        def send() -> AttemptOutcome:
            secrets = _opened(
                lambda: self._directory.subscription_secrets(message.tenant_id, subscription.secrets),
                "subscription's signing secret",
            )
            if isinstance(secrets, AttemptOutcome):
                return secrets
            return self._signed(message, webhook, secrets)

        return _through_gate(
            health, view.breaker, view.profile.email, send, SUBSCRIPTION_DISABLED, url=subscription.url
        )

    def _body(
        self, tenant_id: str, stored: WebhookNotification, ref: DeliveryRef
    ) -> Mapping[str, Any] | AttemptOutcome:
        """The delivery's body: as its message carried it, or, for a delivery read from the table (a
        manual retry, a recovery), the event's, which the job item does not repeat."""
        if stored.payload:
            return stored.payload
        events = self._events
        if events is None:
            raise TypeError("a delivery read from the table needs the events")
        event = _opened(lambda: events.get(tenant_id, ref.event_id), "event")
        if isinstance(event, AttemptOutcome):
            return event
        if event is None:
            return AttemptOutcome(
                delivered=False, error_message=EVENT_GONE, final=True, caused_by_tenant=True
            )
        return delivery_body(event)

    def _attempt(
        self, message: JobMessage, stored: WebhookNotification, profile: TenantProfile
    ) -> AttemptOutcome:
        secrets = _opened(lambda: self._directory.signing_secrets(profile), "signing secret")
        if isinstance(secrets, AttemptOutcome):
            return secrets
        return self._signed(message, stored, secrets)

    def _signed(self, message: JobMessage, stored: WebhookNotification, secrets: list[str]) -> AttemptOutcome:
        """One exchange: the headers opened, the body signed with ``secrets``, sent once."""
        webhook = _opened(
            lambda: self._directory.webhook_headers(stored, message.tenant_id), "webhook's headers"
        )
        if isinstance(webhook, AttemptOutcome):
            return webhook
        assert not isinstance(webhook.headers, SealedHeaders)
        hook = OutboundWebhook(
            job_id=message.job_id,
            url=webhook.url,
            method=webhook.method,
            headers=webhook.headers,
            body=compact_json(webhook.payload),
        )
        result = self._send(hook, secrets=secrets)
        permanent = result.error_class == "permanent"
        return AttemptOutcome(
            receiver_outage=not result.ok and not permanent,
            delivered=result.ok,
            error_message=None if result.ok else result.error_message,
            final=permanent,
            # The receiving endpoint refused the request (a 4xx): the tenant's to fix.
            caused_by_tenant=permanent and result.status_code is not None,
            retry_after_seconds=result.retry_after_seconds,
            response_status=result.status_code,
            latency_ms=result.latency_ms,
            exchange=result.exchange,
        )


def _through_gate(
    health: EndpointHealth,
    breaker: Breaker,
    tenant_email: str,
    send: Callable[[], AttemptOutcome],
    disabled_reason: str,
    *,
    url: str | None = None,
) -> AttemptOutcome:
    """``send`` if the breaker lets it, and what its outcome does to the breaker (``url``: what the
    notice of a subscription disabled after days of failures names)."""
    gate = health.gate(breaker)
    if not gate.send:
        return _held_back(gate, disabled_reason)
    outcome = send()
    if outcome.delivered:
        health.succeeded(breaker)
    elif outcome.receiver_outage:
        after = health.failed(
            breaker, outcome.error_message or "delivery failed", gate, tenant_email, url=url
        )
        if gate.probing and after is not None:
            # A failed probe tried for every waiting job of the endpoint: this job waits with
            # them again, its attempt handed back, instead of running out of attempts probing.
            return _held_back(health.gate(after), disabled_reason)
    return outcome


T = TypeVar("T")


def _held_back(gate: Gate, disabled_reason: str) -> AttemptOutcome:
    """The outcome of a job its endpoint's breaker keeps from being sent: fail (disabled) or wait."""
    if gate.disabled:
        return AttemptOutcome(
            delivered=False, error_message=disabled_reason, final=True, caused_by_tenant=True
        )
    return AttemptOutcome(
        delivered=False, error_message="endpoint breaker open", defer_seconds=gate.defer_seconds
    )


def _opened(read: Callable[[], T], what: str) -> T | AttemptOutcome:
    """What ``read`` opens, or the outcome of an attempt that cannot send: KMS away (a later attempt
    may do), or a record that does not open (never will)."""
    try:
        return read()
    except DependencyError as exc:
        return AttemptOutcome(delivered=False, error_message=f"{what} unavailable: {exc}")
    except SecretTampered:
        return AttemptOutcome(delivered=False, error_message=f"the {what} cannot be decrypted", final=True)
