"""A subscription's item and its breaker's, to and from the domain's values: the one translation
that the subscription store, the fan-out and the delivery's read share."""

from __future__ import annotations

from collections.abc import Iterable

from herald.adapters.store.breaker_items import breaker_from
from herald.adapters.store.conversions import from_attribute, optional_from
from herald.adapters.store.models import BreakerItem, SubscriptionItem
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.events import Subscription, SubscriptionSecrets
from herald.domain.notifications import SealedHeaders


def subscription_from(item: SubscriptionItem) -> Subscription:
    headers = None
    if item.headers is not None:
        headers = SealedHeaders(tuple(item.header_names or ()), from_attribute(item.headers))
    return Subscription(
        subscription_id=item.sk,
        url=item.url,
        event_types=tuple(item.event_types or ()),
        secrets=SubscriptionSecrets(
            from_attribute(item.secret), optional_from(item.previous_secret), item.previous_valid_until
        ),
        created_at=item.created_at,
        updated_at=item.updated_at,
        description=item.description,
        channels=tuple(item.channels or ()),
        rate_limit_per_second=int(item.rate_limit) if item.rate_limit is not None else None,
        headers=headers,
        subscriber_id=item.subscriber_id,
        version=int(item.version),
    )


def subscription_breaker_key(tenant_id: str, subscription_id: str) -> BreakerKey:
    return BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, subscription_id)


def paired(tenant_id: str, items: Iterable[object]) -> list[tuple[Subscription, Breaker | None]]:
    """Each subscription among ``items`` (a range of the partition, by sort key) with its stored
    breaker, if it has one."""
    listed = list(items)
    breakers = {item.name: item for item in listed if isinstance(item, BreakerItem)}
    pairs: list[tuple[Subscription, Breaker | None]] = []
    for item in listed:
        if isinstance(item, SubscriptionItem):
            stored = breakers.get(item.sk)
            key = subscription_breaker_key(tenant_id, item.sk)
            pairs.append((subscription_from(item), None if stored is None else breaker_from(stored, key)))
    return pairs


def with_breakers(tenant_id: str, items: Iterable[object]) -> list[tuple[Subscription, Breaker]]:
    """``paired``, a fresh closed breaker standing in for one never stored."""
    return [
        (subscription, breaker or Breaker(subscription_breaker_key(tenant_id, subscription.subscription_id)))
        for subscription, breaker in paired(tenant_id, items)
    ]
