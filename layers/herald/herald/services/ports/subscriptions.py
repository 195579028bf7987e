"""Ports of the subscriptions: their storage (each subscription beside its breaker, every change with
its audit entry) and the tenant's event types a subscription names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.breakers import Breaker
    from herald.domain.events import EventType, Subscription


class SubscriptionStore(Protocol):
    def list(self, tenant_id: str) -> list[tuple[Subscription, Breaker | None]]:
        """The tenant's subscriptions by id, each with its stored breaker (1 Query)."""

    def get(self, tenant_id: str, subscription_id: str) -> tuple[Subscription, Breaker | None] | None:
        """One subscription and its stored breaker (1 Query); None when there is none."""

    def create(self, tenant_id: str, subscription: Subscription, audit: AuditEntry, limit: int) -> None:
        """Store a new subscription; ``SubscriptionLimit`` when the tenant has ``limit`` already."""

    def save(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        """Store ``subscription`` over its ``version - 1``; ``SubscriptionChanged`` when another
        change (or its deletion) came first."""

    def delete(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        """The subscription and its breaker; ``SubscriptionChanged`` as ``save``."""

    def claim_test(self, tenant_id: str, subscription_id: str, now: int, interval: int) -> bool:
        """Note a test send at ``now`` (epoch seconds) unless one was noted in the last
        ``interval`` seconds (then False)."""


class EventTypeCatalog(Protocol):
    def list(self, tenant_id: str) -> tuple[EventType, ...]:
        """The tenant's event types that are not archived."""
