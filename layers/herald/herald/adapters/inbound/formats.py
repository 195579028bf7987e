"""Each sender's webhook as one value: how its requests are verified and read, and how a secret is
checked before it is stored. Every sender module builds its own (``WEBHOOK``), so a function that
serves one sender imports that sender's module only."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from herald.domain.inbound import DeliveryEvent, IgnoredEvent, Processor, SubscriptionEvent
from herald.domain.providers import ProviderName

Verify = Callable[[Mapping[str, str], bytes, str, float], None]


@dataclass(frozen=True)
class DeliveryWebhook:
    """An email provider's event webhook, verified with the tenant's stored secret."""

    provider: ProviderName
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[DeliveryEvent | IgnoredEvent]]
    # Raises UnusableSecret for a secret that could never verify a request.
    check_secret: Callable[[str], object]


@dataclass(frozen=True)
class PaymentWebhook:
    """A payment processor's webhook to the platform, verified with the platform's secret."""

    processor: Processor
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[SubscriptionEvent | IgnoredEvent]]
