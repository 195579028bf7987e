"""The checkouts the sandbox's imitated payment processors opened, where it sends their webhooks,
what the checkout page, which stands in for every processor's own, needs of the processor behind
each, and the address of the page that stands in for their customer portals."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

from herald.domain.money import Money

CHECKOUT_PAGE_PATH = "/_sandbox/checkout/"
PORTAL_PAGE_PATH = "/_sandbox/portal/"


@dataclass(frozen=True)
class PaymentTargets:
    """Where the sandbox sends the processors' webhooks, the secrets it signs them with, and what
    each plan key (Polar product, Paystack plan) costs at the imitated processors."""

    api_root: str
    polar_webhook_secret: str
    paystack_secret_key: str
    prices: Mapping[str, Money]


@dataclass(frozen=True)
class PaidWebhook:
    """The signed webhook a processor sends Herald once a checkout is paid."""

    path: str  # under the stack's API root
    body: str
    headers: dict[str, str]


class PaymentProcessor(Protocol):
    name: str  # as the JSON views and the log show it
    title: str  # as the checkout page shows it

    def paid_webhook(self, checkout: Checkout, targets: PaymentTargets, /) -> PaidWebhook:
        """The webhook the real processor sends for this payment, signed as it signs them."""

    def return_url(self, success_url: str, checkout: Checkout, /) -> str:
        """Where the browser goes back to after paying: the success URL, with what the processor adds."""


@dataclass
class Checkout:
    id: str
    processor: PaymentProcessor
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
            "processor": self.processor.name,
            "planKey": self.plan_key,
            "price": str(self.price),
            "email": self.email,
            "tenantId": self.tenant_id,
            "status": self.status,
            "webhookStatus": self.webhook_status,
        }


def portal_url(processor: str, customer: str, host_url: str) -> str:
    """The imitated customer portal of ``processor`` for one customer (Polar: the tenant id Herald
    gave as the external customer id; Paystack: the subscription code)."""
    return f"{host_url.rstrip('/')}{PORTAL_PAGE_PATH}{processor}/{quote(customer, safe='')}"


def page_url(checkout: Checkout, host_url: str) -> str:
    """The checkout's page on the sandbox, at the host the processor's API was called on."""
    return f"{host_url.rstrip('/')}{CHECKOUT_PAGE_PATH}{checkout.id}"


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
