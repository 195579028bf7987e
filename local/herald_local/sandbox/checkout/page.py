"""The checkout page, ``/_sandbox/checkout/<id>``, where the imitated processors' checkouts send the
browser (Polar's ``url``, Paystack's ``authorization_url``), with two buttons. **Pay** sends the
signed webhook the real processor would to the local stack's payment route, then returns the browser
to the checkout's success URL; **Cancel** returns it to the cancel URL without a payment.
``GET /_sandbox/checkouts`` lists the checkouts. ``/_sandbox/portal/<processor>/<customer>`` stands
in for the processors' customer portals, where a paying customer changes or cancels the plan. They are kept in memory, like everything the
sandbox saw.
"""

from __future__ import annotations

import logging

import requests
from flask import Blueprint, Response
from jinja2 import Environment

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.payments import (
    CHECKOUT_PAGE_PATH,
    PORTAL_PAGE_PATH,
    Checkout,
    Checkouts,
    PaymentTargets,
)
from herald_local.sandbox.core.replies import json_reply

log = logging.getLogger(__name__)

WEBHOOK_TIMEOUT = (3.05, 20.0)
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:*"
)


def _see_other(url: str) -> Response:
    return Response(b"", status=303, headers={"Location": url})


def _send_webhook(targets: PaymentTargets, checkout: Checkout) -> int:
    webhook = checkout.processor.paid_webhook(checkout, targets)
    answer = requests.post(
        f"{targets.api_root}{webhook.path}",
        data=webhook.body.encode(),
        headers={**webhook.headers, "Content-Type": "application/json"},
        timeout=WEBHOOK_TIMEOUT,
    )
    log.info(
        "%s checkout %s paid: webhook answered %d", checkout.processor.name, checkout.id, answer.status_code
    )
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
<dl><dt>Plan</dt><dd>{{ checkout.plan_key }}</dd><dt>Price</dt><dd>{{ checkout.price }}</dd><dt>Customer</dt><dd>{{ checkout.email }}</dd><dt>Status</dt><dd>{{ checkout.status }}</dd></dl>
{% if checkout.status == "open" %}
<div class="row">
<form method="post" action="/_sandbox/checkout/{{ checkout.id }}/pay"><button class="pay" type="submit">Pay</button></form>
<form method="post" action="/_sandbox/checkout/{{ checkout.id }}/cancel"><button type="submit">Cancel</button></form>
</div>
{% endif %}
</main></body></html>""")


_PORTAL = Environment(autoescape=True).from_string("""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sandbox customer portal</title>
<style>
body { font-family: system-ui, sans-serif; background: #f5f6fa; display: grid; place-items: center; min-height: 100vh; margin: 0; }
main { background: #fff; border: 1px solid #e3e6ee; border-radius: 12px; padding: 2rem; width: min(420px, 92vw); }
h1 { font-size: 1.3rem; margin-top: 0; } p.note { color: #5b6475; font-size: .9rem; } code { word-break: break-all; }
</style></head>
<body><main>
<h1>{{ name }} customer portal (sandbox)</h1>
<p>Customer <code>{{ customer }}</code></p>
<p class="note">At {{ name }} this page changes the plan, cancels the subscription or updates the card; {{ name }} then tells Herald with its signed webhook. The sandbox's portal changes nothing.</p>
</main></body></html>""")
_PROCESSORS = {"polar": "Polar", "paystack": "Paystack"}


def _finish(checkouts: Checkouts, checkout: Checkout, choice: str) -> Response:
    if choice == "cancel":
        checkout.status = "abandoned"
        return _see_other(checkout.cancel_url)
    if checkouts.targets is None:
        return Response("The sandbox knows no Herald to notify\n", status=503, content_type="text/plain")
    checkout.webhook_status = _send_webhook(checkouts.targets, checkout)
    checkout.status = "succeeded" if checkout.webhook_status == 200 else "webhook_failed"
    success = checkout.success_url.replace("{CHECKOUT_ID}", checkout.id)
    return _see_other(checkout.processor.return_url(success, checkout))


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    checkouts = context.checkouts

    @blueprint.get(f"{CHECKOUT_PAGE_PATH}<checkout_id>")
    def checkout_page(checkout_id: str) -> Response:
        checkout = checkouts.get(checkout_id)
        if checkout is None:
            return Response("No such checkout\n", status=404, content_type="text/plain")
        page = _PAGE.render(checkout=checkout, name=checkout.processor.title)
        return Response(
            page,
            content_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )

    @blueprint.post(f"{CHECKOUT_PAGE_PATH}<checkout_id>/<choice>")
    def finish(checkout_id: str, choice: str) -> Response:
        checkout = checkouts.get(checkout_id)
        if checkout is None or choice not in ("pay", "cancel") or checkout.status != "open":
            return Response("This checkout is not open\n", status=409, content_type="text/plain")
        return _finish(checkouts, checkout, choice)

    @blueprint.get(f"{PORTAL_PAGE_PATH}<processor>/<customer>")
    def portal_page(processor: str, customer: str) -> Response:
        name = _PROCESSORS.get(processor)
        if name is None:
            return Response("No such processor\n", status=404, content_type="text/plain")
        return Response(
            _PORTAL.render(name=name, customer=customer),
            content_type="text/html; charset=utf-8",
            headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
        )

    @blueprint.get("/_sandbox/checkouts")
    def list_checkouts() -> Response:
        return json_reply([checkout.as_json() for checkout in checkouts.all()])
