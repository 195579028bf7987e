"""The checkouts the sandbox's imitated payment processors opened, and where it sends their webhooks."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from herald.domain.money import Money


@dataclass(frozen=True)
class PaymentTargets:
    """Where the sandbox sends the processors' webhooks, the secrets it signs them with, and what
    each plan key (Polar product, Paystack plan) costs at the imitated processors."""

    api_root: str
    polar_webhook_secret: str
    paystack_secret_key: str
    prices: Mapping[str, Money]


@dataclass
class Checkout:
    id: str
    processor: str  # "polar" or "paystack"
    plan_key: str
    # What paying it charges: the plan's price at the processor.
    price: Money
    email: str
    tenant_id: str
    success_url: str
    cancel_url: str
    status: str = "open"
    webhook_status: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "processor": self.processor,
            "planKey": self.plan_key,
            "price": str(self.price),
            "email": self.email,
            "tenantId": self.tenant_id,
            "status": self.status,
            "webhookStatus": self.webhook_status,
        }


@dataclass
class Checkouts:
    targets: PaymentTargets | None = None
    _items: dict[str, Checkout] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def price(self, plan_key: str) -> Money | None:
        """What the plan key costs; None for one the imitated processor does not sell."""
        return self.targets.prices.get(plan_key) if self.targets else None

    def add(self, checkout: Checkout) -> Checkout:
        with self._lock:
            self._items[checkout.id] = checkout
        return checkout

    def get(self, checkout_id: str) -> Checkout | None:
        with self._lock:
            return self._items.get(checkout_id)

    def all(self) -> list[Checkout]:
        with self._lock:
            return list(self._items.values())
