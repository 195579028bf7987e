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

import json
from collections.abc import Mapping
from typing import Any

from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.breaker_store import breaker_from
from herald.adapters.store.conversions import from_attribute, optional_from, optional_to, to_attribute
from herald.adapters.store.models import (
    BreakerItem,
    EventTypeItem,
    SubscriptionItem,
    event_types_pk,
    subscription_breaker_sk,
    subscriptions_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.events import Subscription, SubscriptionSecrets
from herald.domain.notifications import SealedHeaders
from herald.services.outcomes import SubscriptionChanged

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
        return _paired(tenant_id, items)

    def get(self, tenant_id: str, subscription_id: str) -> tuple[Subscription, Breaker | None] | None:
        with translated(READ):
            items = list(
                self._table.item.query(
                    subscriptions_pk(tenant_id),
                    SubscriptionItem.sk.startswith(subscription_id),
                    consistent_read=True,
                )
            )
        found = [pair for pair in _paired(tenant_id, items) if pair[0].subscription_id == subscription_id]
        return found[0] if found else None

    def create(self, tenant_id: str, subscription: Subscription, audit: AuditEntry) -> None:
        with transaction(self._table.connection, WHAT, _changed) as tx:
            tx.save(self._item(tenant_id, subscription), condition=SubscriptionItem.pk.does_not_exist())
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

    def event_types(self, tenant_id: str) -> Mapping[str, Mapping[str, Any] | None]:
        with translated("event type read"):
            items = list(self._table[EventTypeItem].query(event_types_pk(tenant_id)))
        return {
            item.sk: json.loads(item.schema) if item.schema else None for item in items if not item.archived
        }

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


def _paired(tenant_id: str, items: list[Any]) -> list[tuple[Subscription, Breaker | None]]:
    """Each subscription of ``items`` (a range of the partition, by sort key) with its breaker."""
    breakers = {item.name: item for item in items if isinstance(item, BreakerItem)}
    pairs = []
    for item in items:
        if not isinstance(item, SubscriptionItem):
            continue
        stored = breakers.get(item.sk)
        key = BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, item.sk)
        pairs.append((subscription_from(item), None if stored is None else breaker_from(stored, key)))
    return pairs


def subscription_from(item: SubscriptionItem) -> Subscription:
    rate = item.rate_limit
    return Subscription(
        subscription_id=item.sk,
        url=item.url,
        event_types=tuple(item.event_types),
        secrets=SubscriptionSecrets(
            from_attribute(item.secret), optional_from(item.previous_secret), item.previous_valid_until
        ),
        created_at=item.created_at,
        updated_at=item.updated_at,
        description=item.description,
        channels=tuple(item.channels or ()),
        rate_limit_per_second=None if rate is None else int(rate),
        headers=(
            SealedHeaders(tuple(item.header_names or ()), from_attribute(item.headers))
            if item.headers is not None
            else None
        ),
        subscriber_id=item.subscriber_id,
        version=int(item.version),
    )
