"""The checkouts the sandbox's imitated payment processors opened, and where it sends their webhooks."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PaymentTargets:
    """Where the sandbox sends the processors' webhooks, and the secrets it signs them with."""

    api_root: str
    polar_webhook_secret: str
    paystack_secret_key: str


@dataclass
class Checkout:
    id: str
    processor: str  # "polar" or "paystack"
    plan_key: str
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
