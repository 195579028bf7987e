"""Polar's checkout creation, ``POST /v1/checkouts/`` (a bearer ``polar_oat_…`` access token), which
answers 201 with the checkout's ``url``: the sandbox's checkout page; and its customer sessions,
``POST /v1/customer-sessions/``, whose ``customer_portal_url`` is the sandbox's portal page (for a
customer some checkout named; another is not found, as at Polar). It sells the products of
``PaymentTargets.prices`` at those prices (another product does not exist, as at Polar). Paying
there sends ``subscription.active`` at the product's price, signed with Standard Webhooks and the
stack's Polar secret."""

from __future__ import annotations

import json
import uuid
from typing import Any

from flask import Blueprint, Response, request
from standardwebhooks.webhooks import Webhook

from herald.domain.clock import iso, utc_now
from herald.domain.money import Money
from herald.domain.plans import add_months
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import bearer_starts_with
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.payments import Checkout, PaidWebhook, PaymentTargets, page_url, portal_url
from herald_local.sandbox.core.replies import json_reply

_PRODUCTS_MISSING = {"type": "missing", "loc": ["body", "products"], "msg": "Field required", "input": None}
_NO_SUCH_PRODUCT = {"type": "value_error", "loc": ["body", "products", 0], "msg": "Product does not exist."}


def _invalid(error: dict[str, Any]) -> Response:
    """Polar's answer to a checkout request it cannot take."""
    return json_reply({"error": "RequestValidationError", "detail": [error]}, 422)


def _event(checkout: Checkout) -> dict[str, Any]:
    start = utc_now()
    return {
        "type": "subscription.active",
        "timestamp": iso(start),
        "data": {
            "id": f"sub_{checkout.id}",
            "status": "active",
            "product_id": checkout.plan_key,
            # Polar writes currencies in lower case.
            "amount": checkout.price.amount,
            "currency": checkout.price.currency.lower(),
            "discount_id": None,
            "customer_id": f"cus_{checkout.tenant_id[:8]}",
            "customer": {
                "id": f"cus_{checkout.tenant_id[:8]}",
                "external_id": checkout.tenant_id,
                "email": checkout.email,
            },
            "metadata": {"herald_tenant_id": checkout.tenant_id},
            "current_period_start": iso(start),
            # Polar bills a monthly subscription by calendar month: the same day and time a month
            # on (30 days would end a 31-day month's period a day early).
            "current_period_end": iso(add_months(start, 1)),
            "cancel_at_period_end": False,
        },
    }


class Polar:
    name = "polar"
    title = "Polar"

    def paid_webhook(self, checkout: Checkout, targets: PaymentTargets) -> PaidWebhook:
        body = json.dumps(_event(checkout))
        message_id, now = str(uuid.uuid4()), utc_now()
        headers = {
            "webhook-id": message_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(targets.polar_webhook_secret).sign(message_id, now, body),
        }
        return PaidWebhook("/payments/polar/webhook", body, headers)

    def return_url(self, success_url: str, _checkout: Checkout) -> str:
        return success_url


def _checkout(body: dict[str, Any], product: str, price: Money) -> Checkout:
    return Checkout(
        id=str(uuid.uuid4()),
        processor=Polar(),
        plan_key=product,
        price=price,
        email=as_str(body.get("customer_email")),
        tenant_id=as_str(body.get("external_customer_id")),
        success_url=as_str(body.get("success_url")),
        cancel_url=as_str(body.get("return_url")),
    )


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    @blueprint.post("/v1/checkouts/")
    def create_checkout() -> Response:
        if not bearer_starts_with(request, "polar_oat_"):
            return json_reply({"error": "Unauthorized", "detail": "Unauthorized"}, 401)
        body = as_dict(request.get_json(force=True, silent=True))
        products = body.get("products")
        if not isinstance(products, list) or not products or not isinstance(products[0], str):
            return _invalid(_PRODUCTS_MISSING)
        price = context.checkouts.price(products[0])
        if price is None:
            return _invalid(_NO_SUCH_PRODUCT)
        checkout = context.checkouts.add(_checkout(body, products[0], price))
        created = {
            "id": checkout.id,
            "url": page_url(checkout, request.host_url),
            "status": "open",
            "client_secret": f"polar_c_{checkout.id}",
        }
        return json_reply(created, 201)

    @blueprint.post("/v1/customer-sessions/")
    def create_customer_session() -> Response:
        if not bearer_starts_with(request, "polar_oat_"):
            return json_reply({"error": "Unauthorized", "detail": "Unauthorized"}, 401)
        customer = as_str(as_dict(request.get_json(force=True, silent=True)).get("external_customer_id"))
        if not customer or not any(item.tenant_id == customer for item in context.checkouts.all()):
            return json_reply({"error": "ResourceNotFound", "detail": "Customer not found"}, 404)
        session = {
            "token": f"polar_cst_{uuid.uuid4().hex}",
            "customer_portal_url": portal_url("polar", customer, request.host_url),
        }
        return json_reply(session, 201)
