"""Paystack's plan and transaction initialize, ``GET /plan/<code>`` (the plan's amount) and ``POST
/transaction/initialize`` (bearer: the stack's Paystack secret key), which answers the
``authorization_url``: the sandbox's checkout page. It sells the plan codes of
``PaymentTargets.prices`` at those prices (another code is not found, as at Paystack). Paying there
sends ``charge.success`` for the plan's price, signed with HMAC-SHA512 and the stack's secret key.
A subscription's manage link, ``GET /subscription/<code>/manage/link``, is the sandbox's portal page."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

from flask import Blueprint, Response, request

from herald.domain.clock import iso, utc_now
from herald.domain.money import Money
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.credentials import bearer_starts_with
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.payments import (
    Checkout,
    Checkouts,
    PaidWebhook,
    PaymentTargets,
    page_url,
    portal_url,
)
from herald_local.sandbox.core.replies import json_reply


def _plan_not_found() -> Response:
    return json_reply({"status": False, "message": "Plan not found", "type": "validation_error"}, 404)


def _event(checkout: Checkout) -> dict[str, Any]:
    return {
        "event": "charge.success",
        "data": {
            "reference": checkout.id,
            "status": "success",
            "amount": checkout.price.amount,
            "currency": checkout.price.currency,
            "paid_at": iso(utc_now()),
            "customer": {"email": checkout.email, "customer_code": f"CUS_{checkout.tenant_id[:8]}"},
            "plan": {
                "plan_code": checkout.plan_key,
                "interval": "monthly",
                "amount": checkout.price.amount,
                "currency": checkout.price.currency,
            },
            "metadata": {"tenantId": checkout.tenant_id},
        },
    }


class Paystack:
    name = "paystack"
    title = "Paystack"

    def paid_webhook(self, checkout: Checkout, targets: PaymentTargets) -> PaidWebhook:
        body = json.dumps(_event(checkout))
        signature = hmac.new(targets.paystack_secret_key.encode(), body.encode(), hashlib.sha512).hexdigest()
        return PaidWebhook("/payments/paystack/webhook", body, {"x-paystack-signature": signature})

    def return_url(self, success_url: str, checkout: Checkout) -> str:
        return success_url + ("&" if "?" in success_url else "?") + f"reference={checkout.id}"


def _key_valid(checkouts: Checkouts) -> bool:
    # The stack's own secret key (the one that signs its webhooks), as Paystack knows its keys.
    targets = checkouts.targets
    return bearer_starts_with(request, targets.paystack_secret_key if targets else "sk_")


def _checkout(body: dict[str, Any], price: Money) -> Checkout:
    metadata = as_dict(body.get("metadata"))
    return Checkout(
        id=f"ref_{uuid.uuid4().hex[:16]}",
        processor=Paystack(),
        plan_key=as_str(body.get("plan")),
        price=price,
        email=as_str(body.get("email")),
        tenant_id=as_str(metadata.get("tenantId")),
        success_url=as_str(body.get("callback_url")),
        cancel_url=as_str(metadata.get("cancel_action")),
    )


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    checkouts = context.checkouts

    @blueprint.get("/plan/<code>")
    def plan(code: str) -> Response:
        if not _key_valid(checkouts):
            return json_reply({"status": False, "message": "Invalid key"}, 401)
        price = checkouts.price(code)
        if price is None:
            return _plan_not_found()
        plan = {
            "plan_code": code,
            "name": code,
            "amount": price.amount,
            "interval": "monthly",
            "currency": price.currency,
        }
        return json_reply({"status": True, "message": "Plan retrieved", "data": plan})

    @blueprint.post("/transaction/initialize")
    def initialize() -> Response:
        if not _key_valid(checkouts):
            return json_reply({"status": False, "message": "Invalid key"}, 401)
        body = as_dict(request.get_json(force=True, silent=True))
        if not as_str(body.get("email")) or not isinstance(body.get("amount"), int):
            return json_reply(
                {"status": False, "message": "Email and amount are required", "type": "validation_error"}, 400
            )
        # The plan's amount is charged, whatever amount the initialisation names.
        price = checkouts.price(as_str(body.get("plan")))
        if price is None:
            return _plan_not_found()
        checkout = checkouts.add(_checkout(body, price))
        data = {
            "authorization_url": page_url(checkout, request.host_url),
            "access_code": checkout.id,
            "reference": checkout.id,
        }
        return json_reply({"status": True, "message": "Authorization URL created", "data": data})

    @blueprint.get("/subscription/<code>/manage/link")
    def manage_link(code: str) -> Response:
        if not _key_valid(checkouts):
            return json_reply({"status": False, "message": "Invalid key"}, 401)
        link = {"link": portal_url("paystack", code, request.host_url)}
        return json_reply({"status": True, "message": "Link generated", "data": link})
