"""Data access of the circuit breakers: one small item per breaker (well under 1 KB: one write unit).

A tenant's provider breakers sit in its own partition, so an email pass reads them with the tenant's
one Query (``DynamoTenantStore.load``); a platform provider's under ``PLATFORM``; a tenant's
endpoints' under ``ENDPOINTS#<tenantId>``, one per origin, read with the tenant's profile in one
BatchGetItem by a webhook pass. Writes: one conditional PutItem per change (on the version read),
only on failures and state changes; a tenant's own change of an endpoint, 1 transaction with its
audit entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pynamodb.expressions.condition import Condition

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.breaker_items import breaker_from, breaker_item_key
from herald.adapters.store.conversions import profile_from
from herald.adapters.store.models import (
    PROFILE_SK,
    BreakerItem,
    SubscriptionItem,
    TenantItem,
    endpoints_pk,
    subscriptions_pk,
    tenant_pk,
)
from herald.adapters.store.subscription_items import subscription_breaker_key, subscription_from
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.account import TenantProfile
from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.events import Subscription
from herald.services.outcomes import TenantNotFound


class DynamoBreakers:
    def __init__(self, table: Table) -> None:
        self._table = table

    def read(self, keys: Sequence[BreakerKey]) -> Mapping[BreakerKey, Breaker]:
        by_item_key = {breaker_item_key(key): key for key in keys}
        with translated("breaker read"):
            items = list(self._table[BreakerItem].batch_get(list(by_item_key), consistent_read=True))
        return {
            by_item_key[(item.pk, item.sk)]: breaker_from(item, by_item_key[(item.pk, item.sk)])
            for item in items
        }

    def with_profile(self, tenant_id: str, key: BreakerKey) -> tuple[TenantProfile, Breaker | None]:
        breaker_key = breaker_item_key(key)
        with translated("tenant table read"):
            items = list(
                self._table.item.batch_get(
                    [(tenant_pk(tenant_id), PROFILE_SK), breaker_key], consistent_read=True
                )
            )
        profile = next((item for item in items if isinstance(item, TenantItem)), None)
        if profile is None:
            raise TenantNotFound(tenant_id)
        breaker = next((item for item in items if isinstance(item, BreakerItem)), None)
        return profile_from(profile), None if breaker is None else breaker_from(breaker, key)

    def with_subscription(
        self, tenant_id: str, subscription_id: str
    ) -> tuple[TenantProfile, Subscription | None, Breaker | None]:
        key = subscription_breaker_key(tenant_id, subscription_id)
        wanted = [
            (tenant_pk(tenant_id), PROFILE_SK),
            (subscriptions_pk(tenant_id), subscription_id),
            breaker_item_key(key),
        ]
        with translated("tenant table read"):
            items = list(self._table.item.batch_get(wanted, consistent_read=True))
        profile = next((item for item in items if isinstance(item, TenantItem)), None)
        if profile is None:
            raise TenantNotFound(tenant_id)
        subscription = next((item for item in items if isinstance(item, SubscriptionItem)), None)
        breaker = next((item for item in items if isinstance(item, BreakerItem)), None)
        return (
            profile_from(profile),
            None if subscription is None else subscription_from(subscription),
            None if breaker is None else breaker_from(breaker, key),
        )

    def save(self, breaker: Breaker) -> bool:
        try:
            with conditional("breaker write"):
                self._item(breaker).save(condition=_expected(breaker))
        except ConditionFailed:
            return False
        return True

    def turn(self, breaker: Breaker, audit: AuditEntry) -> bool:
        """A tenant's own change (an endpoint enabled or disabled) with its audit entry: 1 transaction."""

        def refine(codes: list[str | None]) -> Exception | None:
            # The breaker's put comes before the entry's (the order they are added in).
            return ConditionFailed("breaker write") if codes[:1] == ["ConditionalCheckFailed"] else None

        try:
            with transaction(self._table.connection, "breaker write", refine) as tx:
                tx.save(self._item(breaker), condition=_expected(breaker))
                tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
        except ConditionFailed:
            return False
        return True

    def _item(self, breaker: Breaker) -> BreakerItem:
        pk, sk = breaker_item_key(breaker.key)
        item: BreakerItem = self._table[BreakerItem](
            pk,
            sk,
            state=breaker.state.value,
            name=breaker.key.name,
            slots=[[slot.start, slot.failures, slot.successes] for slot in breaker.slots] or None,
            consecutive=breaker.consecutive,
            opened_at=breaker.opened_at,
            open_until=breaker.open_until,
            cooldown_seconds=breaker.cooldown_seconds,
            probe_until=breaker.probe_until,
            last_error=(breaker.last_error or "")[:500] or None,
            since=breaker.since,
            version=breaker.version,
        )
        return item

    def endpoints(self, tenant_id: str) -> list[Breaker]:
        with translated("breaker read"):
            items = list(self._table[BreakerItem].query(endpoints_pk(tenant_id), consistent_read=True))
        return [breaker_from(item, BreakerKey(BreakerKind.ENDPOINT, tenant_id, item.sk)) for item in items]


def _expected(breaker: Breaker) -> Condition:
    """Written over the version it was computed from (absent for a first version)."""
    if breaker.version <= 1:
        return BreakerItem.pk.does_not_exist()
    return BreakerItem.version == breaker.version - 1
