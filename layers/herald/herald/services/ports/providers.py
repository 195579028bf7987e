"""Ports of the world Herald delivers to and hears back from: email providers, webhook endpoints, the
circuit breakers in front of both, and the inbound webhooks of providers and payment processors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec

if TYPE_CHECKING:
    # Only named in signatures: a function imports the domain modules its own path uses.
    from herald.domain.account import TenantProfile
    from herald.domain.audit import AuditEntry
    from herald.domain.breakers import Breaker, BreakerKey
    from herald.domain.events import Subscription
    from herald.domain.inbound import DeliveryEvent, IgnoredEvent, Processor, SubscriptionEvent
    from herald.domain.notifications import EmailNotification
    from herald.domain.providers import (
        Credential,
        Delivered,
        DomainRegistration,
        DomainVerification,
        KeyCheck,
        Routing,
    )
    from herald.domain.vendors import ProviderName
    from herald.domain.webhooks import OutboundWebhook, WebhookOutcome


class EmailProvider(Protocol):
    """What the delivery engine needs: send one email, and a cheap live check of the credential."""

    @property
    def name(self) -> ProviderName: ...

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        """Hand the email to the provider, sent as ``routing`` says; raises ``ProviderFailure``."""

    def check_key(self, credential: Credential) -> KeyCheck:
        """Ask the provider whether the credential can do what Herald needs; raises
        ``ProviderFailure`` when the provider cannot answer (timeouts, 5xx, 429)."""


class DomainProvider(EmailProvider, Protocol):
    """A tenant provider: also registers, verifies and deletes the tenant's sending domains."""

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration: ...

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification: ...

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        """Remove the domain at the provider; a domain already gone counts as deleted."""


class EmailProviders(Protocol):
    def __call__(self, name: ProviderName) -> EmailProvider: ...


class DomainProviders(Protocol):
    def __call__(self, name: ProviderName) -> DomainProvider: ...


class Breakers(Protocol):
    """The shared circuit breakers (``herald.domain.breakers``), one small item each."""

    def read(self, keys: Sequence[BreakerKey]) -> Mapping[BreakerKey, Breaker]:
        """The stored ones among ``keys`` (1 BatchGetItem)."""

    def with_profile(self, tenant_id: str, key: BreakerKey) -> tuple[TenantProfile, Breaker | None]:
        """The tenant's profile and one of its breakers, read together (1 BatchGetItem);
        ``TenantNotFound`` when there is no such tenant."""

    def with_subscription(
        self, tenant_id: str, subscription_id: str
    ) -> tuple[TenantProfile, Subscription | None, Breaker | None]:
        """The tenant's profile, one of its subscriptions (None: deleted) and that subscription's
        breaker, read together (1 BatchGetItem); ``TenantNotFound`` when there is no such tenant."""

    def save(self, breaker: Breaker) -> bool:
        """Store ``breaker`` if the stored one is still at ``breaker.version - 1`` (absent for 1);
        False when another worker changed it meanwhile."""

    def turn(self, breaker: Breaker, audit: AuditEntry) -> bool:
        """``save`` for a change the tenant makes by hand (enabling or disabling an endpoint), with
        its audit entry in the same transaction; False, writing neither, as ``save``."""

    def endpoints(self, tenant_id: str) -> list[Breaker]:
        """The tenant's endpoint breakers, by origin (1 Query of its endpoints' partition)."""


class WebhookSender(Protocol):
    def __call__(self, hook: OutboundWebhook, *, secrets: Sequence[str]) -> WebhookOutcome: ...


class InboundLedger(Protocol):
    """Marks of inbound events already handled (the dedupe records), one per event key."""

    def mark(self, key: str, expires_at: int | None) -> bool:
        """Set the mark (kept until ``expires_at``, epoch seconds; None: for good); False when it is
        set already, that is, when the event is a duplicate."""

    def unmark(self, key: str) -> None:
        """Remove a mark whose event could not be processed, so its redelivery is processed."""


# ``(headers, raw_body, secret, now)``: raises ``InvalidSignature`` unless the request provably comes
# from its sender, ``UnusableSecret`` when the stored secret cannot verify anything.
Verify = Callable[[Mapping[str, str], bytes, str, float], None]


class DeliveryWebhook(msgspec.Struct, frozen=True):
    """An email provider's event webhook: verified with the tenant's stored secret, then read as
    events (``MalformedPayload`` for a body that is not the provider's documented shape)."""

    provider: ProviderName
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[DeliveryEvent | IgnoredEvent]]
    # Raises UnusableSecret for a secret that could never verify a request.
    check_secret: Callable[[str], object]
    # Where the signature covers a token rather than the body: the verified request's token, which
    # the sender never signs twice. It is marked used, so a captured signature carries no other body.
    single_use: Callable[[bytes, Mapping[str, str]], str] | None = None


class PaymentWebhook(msgspec.Struct, frozen=True):
    """A payment processor's webhook to the platform, verified with the platform's secret."""

    processor: Processor
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[SubscriptionEvent | IgnoredEvent]]
