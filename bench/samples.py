"""What the bench sends: a realistic 1 KB webhook event and a 1 KB HTML email, not filler text.

Repeated characters would deflate to almost nothing and flatter the stored size; these documents
carry the ids, addresses, amounts and markup real notifications do, so their compressed size is
what a tenant's traffic would get.
"""

from __future__ import annotations

from typing import Any

ORDER_EVENT: dict[str, Any] = {
    "type": "order.paid",
    "id": "evt_01JDQ8M4C7ZV9K3T6W2XN5B8RH",
    "created": "2026-11-30T14:07:22.418Z",
    "data": {
        "order": {
            "id": "ord_7f3a91c2e45b",
            "number": "SO-2026-118734",
            "currency": "EUR",
            "total": 184.37,
            "tax": 29.44,
            "shipping": 6.9,
            "customer": {
                "id": "cus_5c0de8f21a9e",
                "email": "marta.kowalska@example.org",
                "name": "Marta Kowalska",
                "locale": "pl-PL",
            },
            "items": [
                {"sku": "TEE-ORG-M-NAVY", "name": "Organic cotton tee, navy, M", "qty": 2, "price": 24.9},
                {"sku": "HOOD-RCY-L-OAT", "name": "Recycled hoodie, oat, L", "qty": 1, "price": 69.0},
                {"sku": "SOCK-WOOL-3PK", "name": "Merino socks, 3 pack", "qty": 1, "price": 19.5},
                {"sku": "CAP-CORD-OLIVE", "name": "Corduroy cap, olive", "qty": 1, "price": 22.0},
            ],
            "shippingAddress": {
                "line1": "ul. Mokotowska 48/12",
                "city": "Warszawa",
                "postalCode": "00-543",
                "country": "PL",
            },
            "payment": {"method": "card", "brand": "visa", "last4": "4242", "captureId": "cap_93e1b7d0c4"},
            "fulfillment": {
                "warehouse": "WAW-2",
                "carrier": "InPost",
                "service": "paczkomat",
                "eta": "2026-12-03",
            },
        },
        "previousStatus": "pending_payment",
        "status": "paid",
    },
}

ORDER_EMAIL_HTML = (
    '<!doctype html><html lang="pl"><body style="font-family:Helvetica,Arial,sans-serif;color:#1f2933">'
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">'
    '<table width="600" style="border:1px solid #e4e7eb;border-radius:6px;padding:24px">'
    '<tr><td><h1 style="font-size:20px;margin:0 0 12px">Thank you for your order, Marta!</h1>'
    "<p>Your order <strong>SO-2026-118734</strong> was paid on 30 November 2026. We will send the "
    "tracking link as soon as InPost picks it up.</p>"
    '<table width="100%" style="border-collapse:collapse;font-size:14px">'
    '<tr><td>Organic cotton tee, navy, M &times; 2</td><td align="right">&euro;49.80</td></tr>'
    '<tr><td>Recycled hoodie, oat, L</td><td align="right">&euro;69.00</td></tr>'
    '<tr><td>Shipping (paczkomat)</td><td align="right">&euro;6.90</td></tr>'
    '<tr><td><strong>Total</strong></td><td align="right"><strong>&euro;184.37</strong></td></tr>'
    '</table><p style="font-size:12px;color:#616e7c">Questions? Reply to this email.</p>'
    "</td></tr></table></td></tr></table></body></html>"
)
