"""A subscription's item and its breaker's, to and from the domain's values: the one translation
that the subscription store, the fan-out and the delivery's read share."""

from __future__ import annotations

from collections.abc import Iterable

from herald.adapters.store.breaker_store import breaker_from
from herald.adapters.store.conversions import from_attribute, optional_from
from herald.adapters.store.models import SUBSCRIPTION_BREAKER_SUFFIX, BreakerItem, SubscriptionItem
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


def with_breakers(tenant_id: str, items: Iterable[object]) -> list[tuple[Subscription, Breaker]]:
    """The subscriptions among ``items`` (a Query of the partition, in key order: each breaker
    follows its subscription), each with its breaker (a fresh closed one where none is stored)."""
    subscriptions: dict[str, Subscription] = {}
    breakers: dict[str, Breaker] = {}
    for item in items:
        if isinstance(item, SubscriptionItem):
            subscriptions[item.sk] = subscription_from(item)
        elif isinstance(item, BreakerItem):
            owner = item.sk.removesuffix(SUBSCRIPTION_BREAKER_SUFFIX)
            breakers[owner] = breaker_from(item, subscription_breaker_key(tenant_id, owner))
    return [
        (subscription, breakers.get(sid) or Breaker(subscription_breaker_key(tenant_id, sid)))
        for sid, subscription in subscriptions.items()
    ]
