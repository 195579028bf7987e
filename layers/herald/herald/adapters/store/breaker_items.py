"""A breaker's item key and its translation to the domain's value (shared by the breaker store and
the stores that read breakers beside their own items: tenants, subscriptions)."""

from __future__ import annotations

from typing import Any

from herald.adapters.store.models import (
    PLATFORM_PK,
    BreakerItem,
    endpoints_pk,
    provider_breaker_sk,
    subscription_breaker_sk,
    subscriptions_pk,
    tenant_pk,
)
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind, BreakerState, Slot


def breaker_item_key(key: BreakerKey) -> tuple[str, str]:
    if key.kind is BreakerKind.ENDPOINT:
        return endpoints_pk(key.tenant_id or ""), key.name
    if key.kind is BreakerKind.SUBSCRIPTION:
        return subscriptions_pk(key.tenant_id or ""), subscription_breaker_sk(key.name)
    owner = PLATFORM_PK if key.tenant_id is None else tenant_pk(key.tenant_id)
    return owner, provider_breaker_sk(key.name)


def breaker_from(item: BreakerItem, key: BreakerKey) -> Breaker:
    return Breaker(
        key=key,
        state=BreakerState(item.state),
        slots=tuple(
            Slot(int(start), int(failures), int(successes)) for start, failures, successes in item.slots or ()
        ),
        consecutive=int(item.consecutive or 0),
        opened_at=_int(item.opened_at),
        open_until=_int(item.open_until),
        cooldown_seconds=int(item.cooldown_seconds or 0),
        probe_until=_int(item.probe_until),
        last_error=item.last_error,
        since=_int(item.since),
        version=int(item.version),
    )


def tenant_breaker_from(item: BreakerItem, tenant_id: str) -> Breaker:
    """A provider breaker found in the tenant's partition."""
    return breaker_from(item, BreakerKey(BreakerKind.PROVIDER, tenant_id, item.name))


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
