"""The payment processors' checkouts, imitated so the console's upgrade runs locally end to end:

- Polar: ``POST /polar/v1/checkouts/`` (bearer access token) answers 201 with the checkout's ``url``;
- Paystack: ``GET /paystack/plan/<code>`` (the plan's amount) and ``POST
  /paystack/transaction/initialize`` (bearer: the stack's Paystack secret key) answer the
  ``authorization_url``.

Both URLs point at ``/_sandbox/checkout/<id>``, a page with two buttons. **Pay** sends the signed
webhook the real processor would (Polar: ``subscription.active``, Standard Webhooks with the stack's
Polar secret; Paystack: ``charge.success``, HMAC-SHA512 with the stack's secret key) to the local
stack's payment route, then returns the browser to the checkout's success URL; **Cancel** returns
it to the cancel URL without a payment. Checkouts are kept in memory, like everything the sandbox
saw.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import uuid
from datetime import timedelta
from typing import Any

import requests
from flask import Blueprint, Request, Response, request
from jinja2 import Environment
from standardwebhooks.webhooks import Webhook

from herald.domain.clock import iso, utc_now
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.payments import Checkout, PaymentTargets
from herald_local.sandbox.core.replies import json_reply

log = logging.getLogger(__name__)

# What the imitated Paystack plans cost (kobo); any PLN_ code is a monthly plan.
PLAN_AMOUNT = 500_000
WEBHOOK_TIMEOUT = (3.05, 20.0)
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:*"
)


def _see_other(url: str) -> Response:
    return Response(b"", status=303, headers={"Location": url})


def _bearer(req: Request, prefix: str) -> bool:
    """A bearer token that starts with ``prefix`` (or is it)."""
    scheme, _, token = req.headers.get("Authorization", "").partition(" ")
    return scheme == "Bearer" and bool(token) and token.startswith(prefix)


def _polar_event(checkout: Checkout) -> dict[str, Any]:
    start = utc_now()
    return {
        "type": "subscription.active",
        "timestamp": iso(start),
        "data": {
            "id": f"sub_{checkout.id}",
            "status": "active",
            "product_id": checkout.plan_key,
            "customer_id": f"cus_{checkout.tenant_id[:8]}",
            "customer": {
                "id": f"cus_{checkout.tenant_id[:8]}",
                "external_id": checkout.tenant_id,
                "email": checkout.email,
            },
            "metadata": {"herald_tenant_id": checkout.tenant_id},
            "current_period_start": iso(start),
            "current_period_end": iso(start + timedelta(days=30)),
            "cancel_at_period_end": False,
        },
    }


def _paystack_event(checkout: Checkout) -> dict[str, Any]:
    return {
        "event": "charge.success",
        "data": {
            "reference": checkout.id,
            "status": "success",
            "amount": PLAN_AMOUNT,
            "currency": "NGN",
            "paid_at": iso(utc_now()),
            "customer": {"email": checkout.email, "customer_code": f"CUS_{checkout.tenant_id[:8]}"},
            "plan": {"plan_code": checkout.plan_key, "interval": "monthly", "amount": PLAN_AMOUNT},
            "metadata": {"tenantId": checkout.tenant_id},
        },
    }


def _send_webhook(targets: PaymentTargets, checkout: Checkout) -> int:
    if checkout.processor == "polar":
        body = json.dumps(_polar_event(checkout))
        message_id, now = str(uuid.uuid4()), utc_now()
        headers = {
            "webhook-id": message_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(targets.polar_webhook_secret).sign(message_id, now, body),
        }
        url = f"{targets.api_root}/payments/polar/webhook"
    else:
        body = json.dumps(_paystack_event(checkout))
        signature = hmac.new(targets.paystack_secret_key.encode(), body.encode(), hashlib.sha512).hexdigest()
        headers = {"x-paystack-signature": signature}
        url = f"{targets.api_root}/payments/paystack/webhook"
    answer = requests.post(
        url,
        data=body.encode(),
        headers={**headers, "Content-Type": "application/json"},
        timeout=WEBHOOK_TIMEOUT,
    )
    log.info("%s checkout %s paid: webhook answered %d", checkout.processor, checkout.id, answer.status_code)
    return answer.status_code


_PAGE = Environment(autoescape=True).from_string("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox checkout</title>
<style>
body { font-family: system-ui, sans-serif; background: #f5f6fa; display: grid; place-items: center; min-height: 100vh; margin: 0; }
main { background: #fff; border: 1px solid #e3e6ee; border-radius: 12px; padding: 2rem; width: min(420px, 92vw); }
h1 { font-size: 1.3rem; margin-top: 0; } dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dt { color: #5b6475; } dd { margin: 0; word-break: break-all; }
.row { display: flex; gap: .75rem; margin-top: 1.5rem; } button { font: inherit; font-weight: 600; padding: .6rem 1.1rem; border-radius: 8px; border: 1px solid #cfd4e2; background: #fff; cursor: pointer; }
button.pay { background: #3b3fd8; border-color: #3b3fd8; color: #fff; } button:focus-visible { outline: 3px solid #3b3fd8; outline-offset: 2px; }
p.note { color: #5b6475; font-size: .9rem; }
</style></head>
<body><main>
<h1>{{ name }} checkout (sandbox)</h1>
<p class="note">No money moves: paying sends the signed webhook {{ name }} would send to Herald.</p>
<dl><dt>Plan</dt><dd>{{ checkout.plan_key }}</dd><dt>Customer</dt><dd>{{ checkout.email }}</dd><dt>Status</dt><dd>{{ checkout.status }}</dd></dl>
{% if checkout.status == "open" %}
<div class="row">
<form method="post" action="/_sandbox/checkout/{{ checkout.id }}/pay"><button class="pay" type="submit">Pay</button></form>
<form method="post" action="/_sandbox/checkout/{{ checkout.id }}/cancel"><button type="submit">Cancel</button></form>
</div>
{% endif %}
</main></body></html>""")


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    checkouts = context.checkouts

    def paystack_key_valid() -> bool:
        # The stack's own secret key (the one that signs its webhooks), as Paystack knows its keys.
        targets = checkouts.targets
        return _bearer(request, targets.paystack_secret_key if targets else "sk_")

    def page_url(checkout: Checkout) -> str:
        return f"{request.host_url.rstrip('/')}/_sandbox/checkout/{checkout.id}"

    @blueprint.post("/polar/v1/checkouts/")
    def polar_checkout() -> Response:
        if not _bearer(request, "polar_oat_"):
            return json_reply({"error": "Unauthorized", "detail": "Unauthorized"}, 401)
        body = as_dict(request.get_json(force=True, silent=True))
        products = body.get("products")
        if not isinstance(products, list) or not products or not isinstance(products[0], str):
            detail = [
                {"type": "missing", "loc": ["body", "products"], "msg": "Field required", "input": None}
            ]
            return json_reply({"error": "RequestValidationError", "detail": detail}, 422)
        checkout = checkouts.add(
            Checkout(
                id=str(uuid.uuid4()),
                processor="polar",
                plan_key=products[0],
                email=as_str(body.get("customer_email")),
                tenant_id=as_str(body.get("external_customer_id")),
                success_url=as_str(body.get("success_url")),
                cancel_url=as_str(body.get("return_url")),
            )
        )
        return json_reply(
            {
                "id": checkout.id,
                "url": page_url(checkout),
                "status": "open",
                "client_secret": f"polar_c_{checkout.id}",
            },
            201,
        )

    @blueprint.get("/paystack/plan/<code>")
    def paystack_plan(code: str) -> Response:
        if not paystack_key_valid():
            return json_reply({"status": False, "message": "Invalid key"}, 401)
        plan = {
            "plan_code": code,
            "name": code,
            "amount": PLAN_AMOUNT,
            "interval": "monthly",
            "currency": "NGN",
        }
        return json_reply({"status": True, "message": "Plan retrieved", "data": plan})

    @blueprint.post("/paystack/transaction/initialize")
    def paystack_initialize() -> Response:
        if not paystack_key_valid():
            return json_reply({"status": False, "message": "Invalid key"}, 401)
        body = as_dict(request.get_json(force=True, silent=True))
        metadata = as_dict(body.get("metadata"))
        if not as_str(body.get("email")) or not isinstance(body.get("amount"), int):
            return json_reply(
                {"status": False, "message": "Email and amount are required", "type": "validation_error"}, 400
            )
        checkout = checkouts.add(
            Checkout(
                id=f"ref_{uuid.uuid4().hex[:16]}",
                processor="paystack",
                plan_key=as_str(body.get("plan")),
                email=as_str(body.get("email")),
                tenant_id=as_str(metadata.get("tenantId")),
                success_url=as_str(body.get("callback_url")),
                cancel_url=as_str(metadata.get("cancel_action")),
            )
        )
        data = {"authorization_url": page_url(checkout), "access_code": checkout.id, "reference": checkout.id}
        return json_reply({"status": True, "message": "Authorization URL created", "data": data})

    @blueprint.get("/_sandbox/checkout/<checkout_id>")
    def checkout_page(checkout_id: str) -> Response:
        checkout = checkouts.get(checkout_id)
        if checkout is None:
            return Response("No such checkout\n", status=404, content_type="text/plain")
        name = "Polar" if checkout.processor == "polar" else "Paystack"
        page = _PAGE.render(checkout=checkout, name=name)
        return Response(
            page,
            content_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )

    @blueprint.post("/_sandbox/checkout/<checkout_id>/<choice>")
    def finish(checkout_id: str, choice: str) -> Response:
        checkout = checkouts.get(checkout_id)
        if checkout is None or choice not in ("pay", "cancel") or checkout.status != "open":
            return Response("This checkout is not open\n", status=409, content_type="text/plain")
        if choice == "cancel":
            checkout.status = "abandoned"
            return _see_other(checkout.cancel_url)
        if checkouts.targets is None:
            return Response("The sandbox knows no Herald to notify\n", status=503, content_type="text/plain")
        checkout.webhook_status = _send_webhook(checkouts.targets, checkout)
        checkout.status = "succeeded" if checkout.webhook_status == 200 else "webhook_failed"
        success = checkout.success_url.replace("{CHECKOUT_ID}", checkout.id)
        if checkout.processor == "paystack":
            success += ("&" if "?" in success else "?") + f"reference={checkout.id}"
        return _see_other(success)

    @blueprint.get("/_sandbox/checkouts")
    def list_checkouts() -> Response:
        return json_reply([checkout.as_json() for checkout in checkouts.all()])
