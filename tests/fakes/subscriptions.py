"""An in-memory subscription table with the adapter's version conditions, beside a breaker fake's
breakers (a deletion removes the subscription's); and a catalog of event types."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.events import EventType, Subscription
from herald.services.outcomes import SubscriptionChanged, SubscriptionLimit
from tests.fakes.breakers import FakeBreakers


class FakeSubscriptionStore:
    def __init__(self, breakers: FakeBreakers | None = None) -> None:
        self.breakers = breakers or FakeBreakers()
        self.stored: dict[tuple[str, str], Subscription] = {}
        self.audit: list[AuditEntry] = []
        self.tests: dict[tuple[str, str], int] = {}
        # Called before each save: a test plays a concurrent writer here.
        self.before_save: Callable[[], None] = lambda: None

    def list(self, tenant_id: str) -> list[tuple[Subscription, Breaker | None]]:
        found = [sub for (tenant, _), sub in sorted(self.stored.items()) if tenant == tenant_id]
        return [(sub, self._breaker(tenant_id, sub.subscription_id)) for sub in found]

    def get(self, tenant_id: str, subscription_id: str) -> tuple[Subscription, Breaker | None] | None:
        sub = self.stored.get((tenant_id, subscription_id))
        return None if sub is None else (sub, self._breaker(tenant_id, subscription_id))

    def create(self, tenant_id: str, subscription: Subscription, audit: AuditEntry, limit: int) -> None:
        assert (tenant_id, subscription.subscription_id) not in self.stored
        if sum(1 for tenant, _ in self.stored if tenant == tenant_id) >= limit:
            raise SubscriptionLimit
        self.stored[(tenant_id, subscription.subscription_id)] = subscription
        self.audit.append(audit)

    def save(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        self.before_save()
        current = self.stored.get((tenant_id, subscription.subscription_id))
        if current is None or current.version != subscription.version - 1:
            raise SubscriptionChanged()
        self.stored[(tenant_id, subscription.subscription_id)] = subscription
        self.audit.append(audit)

    def delete(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        current = self.stored.get((tenant_id, subscription.subscription_id))
        if current is None or current.version != subscription.version:
            raise SubscriptionChanged()
        del self.stored[(tenant_id, subscription.subscription_id)]
        self.breakers.stored.pop(_key(tenant_id, subscription.subscription_id), None)
        self.audit.append(audit)

    def claim_test(self, tenant_id: str, subscription_id: str, now: int, interval: int) -> bool:
        last = self.tests.get((tenant_id, subscription_id))
        if last is not None and last > now - interval:
            return False
        self.tests[(tenant_id, subscription_id)] = now
        return True

    def _breaker(self, tenant_id: str, subscription_id: str) -> Breaker | None:
        return self.breakers.stored.get(_key(tenant_id, subscription_id))


def _key(tenant_id: str, subscription_id: str) -> BreakerKey:
    return BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, subscription_id)


class FakeCatalog:
    """The tenant's event types (archived ones left out, as the event type service lists them)."""

    def __init__(self) -> None:
        self.types: dict[str, list[EventType]] = {}

    def add(self, tenant_id: str, name: str, schema: Mapping[str, Any] | None = None) -> None:
        at = "2026-12-01T00:00:00.000Z"
        self.types.setdefault(tenant_id, []).append(EventType(name, at, at, schema=schema))

    def list(self, tenant_id: str) -> tuple[EventType, ...]:
        return tuple(self.types.get(tenant_id, ()))
