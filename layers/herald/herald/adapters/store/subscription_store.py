"""Data access for a tenant's subscriptions.

A subscription is one item in the tenant's subscription partition (``SUBSCRIPTIONS#<tenantId>``,
sort key its id) and its breaker sorts right after it (``<subId>#BREAKER``), so the list reads both
with 1 Query and one subscription with 1 Query of its id's prefix (ids are of one length, so no
other subscription's id starts with it). Every change is 1 transaction with its audit entry,
conditioned on the version it was decided from; a deletion removes the breaker with it. A test send
is noted on the item by 1 conditional UpdateItem. The event types a subscription names are read
with 1 Query of the tenant's event types (``EVENTTYPES#<tenantId>``).
"""

from __future__ import annotations

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.conversions import optional_to, to_attribute
from herald.adapters.store.models import (
    SUBSCRIPTION_COUNT_SK,
    BreakerItem,
    SubscriptionCountItem,
    SubscriptionItem,
    subscription_breaker_sk,
    subscriptions_pk,
)
from herald.adapters.store.subscription_items import paired
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker
from herald.domain.events import Subscription
from herald.services.outcomes import SubscriptionChanged, SubscriptionLimit

WHAT = "subscription write"
READ = "subscription read"


def _changed(codes: list[str | None]) -> Exception | None:
    return SubscriptionChanged() if "ConditionalCheckFailed" in codes else None


class DynamoSubscriptionStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def list(self, tenant_id: str) -> list[tuple[Subscription, Breaker | None]]:
        with translated(READ):
            items = list(self._table.item.query(subscriptions_pk(tenant_id), consistent_read=True))
        return paired(tenant_id, items)

    def get(self, tenant_id: str, subscription_id: str) -> tuple[Subscription, Breaker | None] | None:
        with translated(READ):
            items = list(
                self._table.item.query(
                    subscriptions_pk(tenant_id),
                    SubscriptionItem.sk.startswith(subscription_id),
                    consistent_read=True,
                )
            )
        found = [pair for pair in paired(tenant_id, items) if pair[0].subscription_id == subscription_id]
        return found[0] if found else None

    def create(self, tenant_id: str, subscription: Subscription, audit: AuditEntry, limit: int) -> None:
        """The subscription, the tenant's count one up (refused at ``limit``: ``SubscriptionLimit``)
        and the audit entry, in 1 transaction."""

        def refine(codes: list[str | None]) -> Exception | None:
            # PynamoDB sends a transaction's deletes, then its puts, then its updates: the
            # subscription, the entry, the count.
            return SubscriptionLimit() if codes[2:3] == ["ConditionalCheckFailed"] else _changed(codes)

        total = SubscriptionCountItem.total
        with transaction(self._table.connection, WHAT, refine) as tx:
            tx.save(self._item(tenant_id, subscription), condition=SubscriptionItem.pk.does_not_exist())
            tx.update(
                self._count(tenant_id),
                actions=[total.set((total | 0) + 1)],
                condition=total.does_not_exist() | (total < limit),
            )
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def save(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(
                self._item(tenant_id, subscription),
                condition=SubscriptionItem.version == subscription.version - 1,
            )
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def delete(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        pk, sub_id = subscriptions_pk(tenant_id), subscription.subscription_id
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.delete(
                self._table[SubscriptionItem](pk, sub_id),
                condition=SubscriptionItem.version == subscription.version,
            )
            tx.delete(self._table[BreakerItem](pk, subscription_breaker_sk(sub_id)))
            tx.update(self._count(tenant_id), actions=[SubscriptionCountItem.total.add(-1)])
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)

    def claim_test(self, tenant_id: str, subscription_id: str, now: int, interval: int) -> bool:
        item = self._table[SubscriptionItem](subscriptions_pk(tenant_id), subscription_id)
        spaced = SubscriptionItem.last_test_at.does_not_exist() | (
            SubscriptionItem.last_test_at <= now - interval
        )
        try:
            with conditional(WHAT):
                item.update(
                    actions=[SubscriptionItem.last_test_at.set(now)],
                    condition=SubscriptionItem.pk.exists() & spaced,
                )
        except ConditionFailed:
            return False
        return True

    def _count(self, tenant_id: str) -> SubscriptionCountItem:
        return self._table[SubscriptionCountItem](subscriptions_pk(tenant_id), SUBSCRIPTION_COUNT_SK)

    def _item(self, tenant_id: str, subscription: Subscription) -> SubscriptionItem:
        secrets, headers = subscription.secrets, subscription.headers
        return self._table[SubscriptionItem](
            subscriptions_pk(tenant_id),
            subscription.subscription_id,
            url=subscription.url,
            event_types=list(subscription.event_types),
            channels=list(subscription.channels) or None,
            description=subscription.description,
            rate_limit=subscription.rate_limit_per_second,
            secret=to_attribute(secrets.current),
            previous_secret=optional_to(secrets.previous),
            previous_valid_until=secrets.previous_valid_until,
            header_names=list(headers.names) if headers else None,
            headers=to_attribute(headers.sealed) if headers else None,
            subscriber_id=subscription.subscriber_id,
            created_at=subscription.created_at,
            updated_at=subscription.updated_at,
            version=subscription.version,
        )
