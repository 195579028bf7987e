"""An in-memory breaker table with the adapter's version condition, over a tenant table's profiles."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from herald.domain.account import TenantProfile
from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.errors import DependencyError
from herald.domain.events import Subscription
from tests.fakes.tenants import FakeTenantTable


class FakeBreakers:
    def __init__(self, tenants: FakeTenantTable | None = None) -> None:
        self.tenants = tenants or FakeTenantTable()
        self.stored: dict[BreakerKey, Breaker] = self.tenants.breakers
        # The subscriptions a delivery of an event reads, by (tenant, subscription id).
        self.subscriptions: dict[tuple[str, str], Subscription] = {}
        self.writes = 0
        self.reads = 0
        self.unavailable = False
        # Called before each save: a test plays a concurrent writer here.
        self.before_save: Callable[[Breaker], None] = lambda _breaker: None

    def read(self, keys: Sequence[BreakerKey]) -> Mapping[BreakerKey, Breaker]:
        self._check()
        self.reads += 1
        return {key: self.stored[key] for key in keys if key in self.stored}

    def with_profile(self, tenant_id: str, key: BreakerKey) -> tuple[TenantProfile, Breaker | None]:
        self._check()
        self.reads += 1
        return self.tenants.profile(tenant_id), self.stored.get(key)

    def with_subscription(
        self, tenant_id: str, subscription_id: str
    ) -> tuple[TenantProfile, Subscription | None, Breaker | None]:
        self._check()
        self.reads += 1
        key = BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, subscription_id)
        found = self.subscriptions.get((tenant_id, subscription_id))
        return self.tenants.profile(tenant_id), found, self.stored.get(key)

    def save(self, breaker: Breaker) -> bool:
        self._check()
        self.before_save(breaker)
        current = self.stored.get(breaker.key)
        if (current.version if current else 0) != breaker.version - 1:
            return False
        self.writes += 1
        self.stored[breaker.key] = breaker
        return True

    def turn(self, breaker: Breaker, audit: AuditEntry) -> bool:
        saved = self.save(breaker)
        if saved:
            self.tenants.audit.append(audit)
        return saved

    def endpoints(self, tenant_id: str) -> list[Breaker]:
        self._check()
        found = [
            breaker
            for key, breaker in self.stored.items()
            if key.kind is BreakerKind.ENDPOINT and key.tenant_id == tenant_id
        ]
        return sorted(found, key=lambda breaker: breaker.key.name)

    def _check(self) -> None:
        if self.unavailable:
            raise DependencyError("breaker table unavailable")
