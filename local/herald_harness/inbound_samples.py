"""Signed sample API Gateway v2 events of Herald's inbound webhooks, for ``sam local invoke``-style
runs and later end-to-end tests: events/inbound/<provider>-<case>.json.

Each sample is a payload of inbound_payloads/ sent as compact JSON (as the providers send it) and
signed at ``SIGNED_AT`` with the test-only credentials of its sender (``herald_harness.vendors`` for
the email vendors, whose modules list their samples; ``herald_harness.inbound_signers`` for the
payment processors).
A verifier accepts a sample only with ``now`` close to ``SIGNED_AT``. After changing a payload or a
sample, rewrite them all with

    .venv/bin/python -m herald_harness.inbound_samples

a unit test fails while the committed files differ from what this writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herald.domain.money import Money
from herald.domain.vendors import TENANT_PROVIDERS, webhook_route
from herald_harness.inbound_signers import PRICES, SENDER
from herald_harness.senders import TENANT_ID, Sender, compact, sent
from herald_harness.vendors import side
from herald_local.config import project_root

SAMPLES_DIR = project_root() / "events" / "inbound"

SIGNED_AT = 1_796_025_600  # 2026-11-30T08:00:00Z, like the other sample events
API_ID = "a1b2c3d4e5"
HOST = f"{API_ID}.execute-api.us-east-1.amazonaws.com"


def polar_subscription(kind: str, *, tenant_id: str, product_id: str, paid: Money | None = None) -> bytes:
    """The fixture's subscription, as a ``kind`` event of a tenant's subscription to a product, at
    the product's price unless it says what it pays."""
    event = json.loads(compact("polar-subscription-active"))
    event["type"] = kind
    amount = paid or PRICES[product_id]
    event["data"] |= {
        "product_id": product_id,
        "customer": {"external_id": tenant_id},
        "amount": amount.amount,
        "currency": amount.currency.lower(),
    }
    return sent(event)


def paystack_charge(*, tenant_id: str, plan_code: str, reference: str, paid: Money | None = None) -> bytes:
    """The fixture's charge, as a tenant's payment for a plan (Herald's checkout names the tenant),
    of the plan's price unless it says what it pays; its plan states the plan's price whatever."""
    charge = json.loads(compact("paystack-charge-success"))
    charge["data"] |= {"metadata": {"tenantId": tenant_id}, "reference": reference}
    amount = paid or PRICES[plan_code]
    charge["data"] |= {"amount": amount.amount, "currency": amount.currency}
    charge["data"]["plan"] |= {"plan_code": plan_code, "amount": PRICES[plan_code].amount}
    return sent(charge)


@dataclass(frozen=True)
class Sample:
    name: str  # file stem, also the fixture's name
    route: str  # API Gateway route key without the method
    sender: Sender
    message_id: str  # the svix-id / webhook-id where the scheme has one
    source_ip: str
    user_agent: str

    @property
    def path(self) -> str:
        return self.route.replace("{tenantId}", TENANT_ID)

    def headers(self, body: bytes) -> dict[str, str]:
        return self.sender.sign(body, SIGNED_AT, self.message_id)


def _payment(name: str, sender: str, message_id: str, source_ip: str, user_agent: str) -> Sample:
    route = f"/api/v1/payments/{name.split('-', 1)[0]}/webhook"
    return Sample(name, route, SENDER[sender], message_id, source_ip, user_agent)


def _vendor_samples() -> tuple[Sample, ...]:
    """Each vendor's samples, posted to its webhook route."""
    return tuple(
        Sample(
            spec.name,
            webhook_route(name),
            side(name).SENDER,
            spec.message_id,
            spec.source_ip,
            spec.user_agent,
        )
        for name in TENANT_PROVIDERS
        for spec in side(name).SAMPLES
    )


SAMPLES: tuple[Sample, ...] = (
    *_vendor_samples(),
    _payment(
        "polar-subscription-active",
        "polar-standard",
        "3b1c0e52-2f0a-4b5e-9d6c-7a1f00000001",
        "3.134.238.10",
        "polar.sh webhooks",
    ),
    # Signed the way Polar signs for secrets generated before its 2026-09-08 switch.
    _payment(
        "polar-order-paid",
        "polar-legacy",
        "3b1c0e52-2f0a-4b5e-9d6c-7a1f00000002",
        "3.134.238.10",
        "polar.sh webhooks",
    ),
    _payment("paystack-charge-success", "paystack", "", "52.31.139.75", "Paystack"),
    _payment("paystack-subscription-create", "paystack", "", "52.31.139.75", "Paystack"),
)


def event(sample: Sample) -> dict[str, Any]:
    body = compact(sample.name)
    route_key = f"POST {sample.route}"
    headers = {
        "host": HOST,
        "user-agent": sample.user_agent,
        "content-type": "application/json",
        "content-length": str(len(body)),
        # API Gateway hands header names over in lower case.
        **{name.lower(): value for name, value in sample.headers(body).items()},
        "x-forwarded-for": sample.source_ip,
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
    }
    built: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": sample.path,
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": API_ID,
            "domainName": HOST,
            "domainPrefix": API_ID,
            "http": {
                "method": "POST",
                "path": sample.path,
                "protocol": "HTTP/1.1",
                "sourceIp": sample.source_ip,
                "userAgent": sample.user_agent,
            },
            "requestId": f"inbound-{sample.name}",
            "routeKey": route_key,
            "stage": "$default",
            "time": "30/Nov/2026:08:00:00 +0000",
            "timeEpoch": SIGNED_AT * 1000,
        },
        "body": body.decode("utf-8"),
        "isBase64Encoded": False,
    }
    if "{tenantId}" in sample.route:
        built["pathParameters"] = {"tenantId": TENANT_ID}
    return built


def rendered(sample: Sample) -> str:
    return json.dumps(event(sample), indent=2, ensure_ascii=False) + "\n"


def sample_path(sample: Sample) -> Path:
    return SAMPLES_DIR / f"{sample.name}.json"


def main() -> None:
    SAMPLES_DIR.mkdir(parents=True, exist_ok=True)
    for sample in SAMPLES:
        sample_path(sample).write_text(rendered(sample), encoding="utf-8")
        print(sample_path(sample).relative_to(project_root()))


if __name__ == "__main__":
    main()
