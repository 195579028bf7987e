"""Port of the subscriptions' storage: each subscription beside its breaker, every change with its
audit entry, and the tenant's event types as a subscription names them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from herald.domain.audit import AuditEntry
    from herald.domain.breakers import Breaker
    from herald.domain.events import Subscription


class SubscriptionStore(Protocol):
    def list(self, tenant_id: str) -> list[tuple[Subscription, Breaker | None]]:
        """The tenant's subscriptions by id, each with its stored breaker (1 Query)."""

    def get(self, tenant_id: str, subscription_id: str) -> tuple[Subscription, Breaker | None] | None:
        """One subscription and its stored breaker (1 Query); None when there is none."""

    def create(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None: ...

    def save(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        """Store ``subscription`` over its ``version - 1``; ``SubscriptionChanged`` when another
        change (or its deletion) came first."""

    def delete(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        """The subscription and its breaker; ``SubscriptionChanged`` as ``save``."""

    def claim_test(self, tenant_id: str, subscription_id: str, now: int, interval: int) -> bool:
        """Note a test send at ``now`` (epoch seconds) unless one was noted in the last
        ``interval`` seconds (then False)."""

    def event_types(self, tenant_id: str) -> Mapping[str, Mapping[str, Any] | None]:
        """The tenant's event types that are not archived, each with its JSON Schema (None: any
        object), by name (1 Query)."""
