"""Inbound webhooks end to end, through the local stack over HTTP: providers' and payment processors'
signed events, made by their real signing libraries (svix, standardwebhooks, an ECDSA key of
cryptography's), change what a tenant sees; forged, tampered, stale, unsigned and misaddressed ones
are refused and leave the table and the job's events as they were.

The stack runs with the test-only platform secrets and plans of ``herald_harness.inbound_signers``
(tests/e2e/conftest.py); each test makes a tenant of its own.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import requests

from herald.domain.money import Money
from herald_harness.inbound_samples import paystack_charge, polar_subscription
from herald_harness.inbound_signers import (
    PAYSTACK_PLAN_STARTUP,
    POLAR_PRODUCT_INDIE,
    paystack_headers,
    polar_headers,
)
from herald_harness.senders import STRANGER_SECRET, compact
from herald_harness.tenants import Tenant, new_tenant
from herald_harness.vendors import mailgun as mailgun_side
from herald_harness.vendors.mailgun import (
    MAILGUN_SIGNING_KEY,
    STRANGER_MAILGUN_KEY,
    mailgun_body,
    mailgun_event,
)
from herald_harness.vendors.postmark import POSTMARK_CREDENTIALS, POSTMARK_SECRET, postmark_headers
from herald_harness.vendors.resend import RESEND_SECRET, resend_headers
from herald_harness.vendors.sendgrid import (
    SENDGRID_VERIFICATION_KEY,
    STRANGER_SENDGRID_KEY,
    sendgrid_bounce,
    sendgrid_headers,
)
from tests.e2e.clients import address, email, finished_job, sandbox, table_items, wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

HTTP_TIMEOUT = (3.05, 20.0)
WEBHOOK_SECRETS = {
    "SENDGRID": SENDGRID_VERIFICATION_KEY,
    "RESEND": RESEND_SECRET,
    "POSTMARK": POSTMARK_SECRET,
    "MAILGUN": MAILGUN_SIGNING_KEY,
}
INBOUND_KINDS = frozenset({"event", "inbound", "suppression", "billinglink"})


def tenant_with_secrets(stack: RunningStack, providers: tuple[str, ...] = tuple(WEBHOOK_SECRETS)) -> Tenant:
    """A tenant with sandbox keys for ``providers``, stored again with each one's webhook secret, as
    a tenant sets up its providers' webhooks."""
    tenant = new_tenant(stack, providers)
    for provider in providers:
        body = {"apiKey": f"sandbox-{uuid.uuid4().hex}", "webhookSecret": WEBHOOK_SECRETS[provider]}
        answer = tenant.call("PUT", f"/account/providers/{provider}", body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["data"]["hasWebhookSecret"] is True
    return tenant


def post(stack: RunningStack, path: str, body: bytes, headers: dict[str, str]) -> requests.Response:
    return requests.post(
        f"{stack.api_root}{path}",
        data=body,
        headers={"Content-Type": "application/json", **headers},
        timeout=HTTP_TIMEOUT,
    )


def inbound_items(stack: RunningStack) -> list[dict[str, Any]]:
    return [item for item in table_items(stack) if item.get("kind", {}).get("S") in INBOUND_KINDS]


def bounce(tenant: Tenant, job_id: str, to: str) -> bytes:
    return sendgrid_bounce(
        tenant_id=tenant.tenant_id,
        job_id=job_id,
        to=to,
        event_id=uuid.uuid4().hex,
        timestamp=int(time.time()),
    )


def delivered_job(stack: RunningStack, tenant: Tenant, to: str) -> str:
    job = finished_job(tenant, tenant.send("email", email(to)))
    assert job["status"] == "completed"
    return str(job["id"])


# ---------------------------------------------------------------- delivery events


def test_a_signed_sendgrid_hard_bounce_shows_in_the_job_suppresses_the_address_and_blocks_the_next_email(
    local_stack: RunningStack,
) -> None:
    tenant = tenant_with_secrets(local_stack)
    to = address("bounces")
    job_id = delivered_job(local_stack, tenant, to)
    body = bounce(tenant, job_id, to)
    path = f"/webhooks/sendgrid/{tenant.tenant_id}"

    first = post(local_stack, path, body, sendgrid_headers(body, int(time.time())))
    again = post(local_stack, path, body, sendgrid_headers(body, int(time.time())))

    assert (first.status_code, first.json()["data"]["recorded"]) == (200, 1)
    assert (again.status_code, again.json()["data"]["duplicate"]) == (200, 1)
    events = tenant.job(job_id)["events"]
    assert [(event["type"], event["provider"]) for event in events] == [("bounced", "SENDGRID")]
    suppressions = tenant.call("GET", "/account/suppressions").json()["data"]
    assert [(entry["email"], entry["reason"]) for entry in suppressions] == [(to.lower(), "bounced")]

    blocked = finished_job(tenant, tenant.send("email", email(to)))

    assert (blocked["status"], blocked["errorMessage"]) == ("failed", "recipient suppressed")
    assert sandbox(local_stack, "attempts", jobId=blocked["id"]) == []
    assert sandbox(local_stack, "messages", jobId=blocked["id"]) == []
    removed = tenant.call("DELETE", f"/account/suppressions/{to}")
    assert removed.status_code == 200, removed.text
    assert tenant.call("GET", "/account/suppressions").json()["data"] == []


def test_signed_mailgun_events_verify_once_and_a_permanent_failure_suppresses(
    local_stack: RunningStack,
) -> None:
    tenant = tenant_with_secrets(local_stack, ("MAILGUN",))
    to = address("mailgun-bounces")
    job_id = delivered_job(local_stack, tenant, to)
    path = f"/webhooks/mailgun/{tenant.tenant_id}"
    delivered = mailgun_side.delivered(tenant_id=tenant.tenant_id, job_id=job_id, to=to)
    bounced = mailgun_side.bounced(tenant_id=tenant.tenant_id, job_id=job_id, to=to)

    answers = [post(local_stack, path, request.body, request.headers) for request in (delivered, bounced)]
    replayed = post(local_stack, path, bounced.body, bounced.headers)

    assert [(answer.status_code, answer.json()["data"]["recorded"]) for answer in answers] == [
        (200, 1),
        (200, 1),
    ]
    assert (replayed.status_code, replayed.json()["code"]) == (401, "invalid_signature")
    events = tenant.job(job_id)["events"]
    assert [(event["type"], event["provider"]) for event in events] == [
        ("delivered", "MAILGUN"),
        ("bounced", "MAILGUN"),
    ]
    suppressions = tenant.call("GET", "/account/suppressions").json()["data"]
    assert [(entry["email"], entry["source"]) for entry in suppressions] == [(to.lower(), "MAILGUN")]


def test_mailgun_requests_that_are_forged_replayed_with_another_body_stale_or_another_tenants_change_nothing(
    local_stack: RunningStack,
) -> None:
    tenant = tenant_with_secrets(local_stack, ("MAILGUN",))
    other = tenant_with_secrets(local_stack, ("MAILGUN",))
    to = address("mailgun-attacked")
    job_id = delivered_job(local_stack, tenant, to)
    path = f"/webhooks/mailgun/{tenant.tenant_id}"
    genuine = mailgun_side.delivered(tenant_id=tenant.tenant_id, job_id=job_id, to=to)
    assert post(local_stack, path, genuine.body, genuine.headers).status_code == 200
    event = json.loads(genuine.body)["event-data"]
    # The captured signature (timestamp, token) with a hard bounce of a victim's address instead.
    bounce = mailgun_event(
        "mailgun-failed", tenant_id=tenant.tenant_id, job_id=job_id, to="victim@example.org"
    )
    captured = json.dumps({"signature": json.loads(genuine.body)["signature"], "event-data": bounce}).encode()
    now = int(time.time())

    attempts = {
        "forged": (path, mailgun_body(bounce, now, key=STRANGER_MAILGUN_KEY), 401),
        "token reused with another body": (path, captured, 401),
        "stale": (path, mailgun_body(bounce, now - 600), 401),
        "unsigned": (path, json.dumps({"event-data": bounce}).encode(), 401),
        # Another tenant's URL: signed for that tenant's key, naming this tenant's job: nothing of either.
        "another tenant's": (f"/webhooks/mailgun/{other.tenant_id}", mailgun_body(bounce, now), 200),
    }
    for name, (target, body, status) in attempts.items():
        answer = post(local_stack, target, body, {})
        assert answer.status_code == status, (name, answer.text)

    assert [item["type"] for item in tenant.job(job_id)["events"]] == [event["event"]]
    for owner in (tenant, other):
        assert owner.call("GET", "/account/suppressions").json()["data"] == []


def test_forged_tampered_stale_unsigned_and_misaddressed_requests_are_refused_and_store_nothing(
    local_stack: RunningStack,
) -> None:
    tenant = tenant_with_secrets(local_stack)
    other = new_tenant(local_stack)  # keys, but no webhook secret
    to = address("attacked")
    job_id = delivered_job(local_stack, tenant, to)
    body = bounce(tenant, job_id, to)
    now = int(time.time())
    own = f"/webhooks/sendgrid/{tenant.tenant_id}"
    attempts = {
        "forged": (own, body, sendgrid_headers(body, now, STRANGER_SENDGRID_KEY), 401),
        "tampered": (own, body.replace(b"bounce", b"bounc3", 1), sendgrid_headers(body, now), 401),
        "replayed-old": (own, body, sendgrid_headers(body, now - 600), 401),
        "missing-header": (own, body, {}, 401),
        "other-tenant": (f"/webhooks/sendgrid/{other.tenant_id}", body, sendgrid_headers(body, now), 404),
        "unknown-tenant": (f"/webhooks/sendgrid/{uuid.uuid4()}", body, sendgrid_headers(body, now), 404),
    }
    before = inbound_items(local_stack)

    answers = {
        name: post(local_stack, path, sent, headers) for name, (path, sent, headers, _) in attempts.items()
    }

    assert {name: answer.status_code for name, answer in answers.items()} == {
        name: status for name, (*_, status) in attempts.items()
    }
    assert all(answer.json()["success"] is False for answer in answers.values())
    assert inbound_items(local_stack) == before
    assert tenant.job(job_id)["events"] == []
    assert tenant.call("GET", "/account/suppressions").json()["data"] == []


def test_a_resend_event_signed_by_svix_is_accepted_and_one_with_a_changed_byte_is_401(
    local_stack: RunningStack,
) -> None:
    tenant = tenant_with_secrets(local_stack, ("RESEND",))
    job_id = delivered_job(local_stack, tenant, address("reader"))
    event = json.loads(compact("resend-delivered"))
    event["data"]["tags"] = {"herald_job_id": job_id, "herald_tenant_id": tenant.tenant_id}
    body = json.dumps(event, separators=(",", ":")).encode()
    headers = resend_headers(body, int(time.time()), f"msg_{uuid.uuid4().hex}")
    path = f"/webhooks/resend/{tenant.tenant_id}"

    changed = post(local_stack, path, body.replace(b"Your receipt", b"Your receipT"), headers)
    accepted = post(local_stack, path, body, headers)

    assert (changed.status_code, changed.json()["code"]) == (401, "invalid_signature")
    assert accepted.status_code == 200, accepted.text
    assert [(item["type"], item["provider"]) for item in tenant.job(job_id)["events"]] == [
        ("delivered", "RESEND")
    ]


def test_a_postmark_event_with_the_wrong_password_is_refused(local_stack: RunningStack) -> None:
    tenant = tenant_with_secrets(local_stack, ("POSTMARK",))
    job_id = delivered_job(local_stack, tenant, address("opened"))
    record = json.loads(compact("postmark-delivery")) | {"Metadata": {"herald_job_id": job_id}}
    body = json.dumps(record).encode()
    path = f"/webhooks/postmark/{tenant.tenant_id}"
    wrong = type(POSTMARK_CREDENTIALS)(password="not-the-tenants-password", username="herald")

    refused = post(local_stack, path, body, postmark_headers(wrong))
    accepted = post(local_stack, path, body, postmark_headers())

    assert (refused.status_code, refused.json()["code"]) == (401, "invalid_signature")
    assert accepted.status_code == 200, accepted.text
    assert [item["type"] for item in tenant.job(job_id)["events"]] == ["delivered"]


# ---------------------------------------------------------------- payments


def polar(tenant_id: str, kind: str) -> bytes:
    return polar_subscription(kind, tenant_id=tenant_id, product_id=POLAR_PRODUCT_INDIE)


def plan_of(tenant: Tenant) -> str:
    answer = tenant.call("GET", "/account")
    assert answer.status_code == 200, answer.text
    return str(answer.json()["data"]["plan"])


def test_polar_moves_a_tenant_to_its_paid_plan_a_forgery_does_nothing_and_revoked_moves_it_back(
    local_stack: RunningStack,
) -> None:
    tenant_id, api_key = local_stack.create_tenant("free")
    tenant = Tenant(local_stack.api_root, tenant_id, api_key)
    path = "/payments/polar/webhook"
    active = polar(tenant_id, "subscription.active")

    forged = post(
        local_stack, path, active, polar_headers(active, int(time.time()), "evt-forged", STRANGER_SECRET)
    )
    assert (forged.status_code, plan_of(tenant)) == (401, "free")

    accepted = post(local_stack, path, active, polar_headers(active, int(time.time()), str(uuid.uuid4())))
    assert accepted.status_code == 200, accepted.text
    assert plan_of(tenant) == "indie"
    account = tenant.call("GET", "/account").json()["data"]
    assert account["billing"] == {"status": "active", "paidUntil": "2026-12-30T07:58:10.000Z"}
    assert account["limits"]["monthlyWebhooks"] == 4000

    revoked = polar(tenant_id, "subscription.revoked")
    answer = post(local_stack, path, revoked, polar_headers(revoked, int(time.time()), str(uuid.uuid4())))
    assert answer.status_code == 200, answer.text
    assert plan_of(tenant) == "free"


def test_a_paystack_charge_with_a_valid_hmac_sha512_activates_a_plan(local_stack: RunningStack) -> None:
    tenant_id, api_key = local_stack.create_tenant("free")
    tenant = Tenant(local_stack.api_root, tenant_id, api_key)
    body = paystack_charge(tenant_id=tenant_id, plan_code=PAYSTACK_PLAN_STARTUP, reference=uuid.uuid4().hex)

    forged = post(local_stack, "/payments/paystack/webhook", body, paystack_headers(body, "sk_test_guess"))
    accepted = post(local_stack, "/payments/paystack/webhook", body, paystack_headers(body))

    assert (forged.status_code, accepted.status_code) == (401, 200)
    assert plan_of(tenant) == "startup"


def test_the_probes_charge_of_100_kobo_for_startup_leaves_the_tenant_free_and_reaches_slack(
    local_stack: RunningStack,
) -> None:
    """Replayed through the local stack: a correctly signed charge.success for the Startup plan code
    with amount 100. Paystack gets its 200, the tenant keeps its plan, the operators hear of it."""
    tenant_id, api_key = local_stack.create_tenant("free")
    tenant = Tenant(local_stack.api_root, tenant_id, api_key)
    probe = paystack_charge(
        tenant_id=tenant_id,
        plan_code=PAYSTACK_PLAN_STARTUP,
        reference=uuid.uuid4().hex,
        paid=Money(100, "NGN"),
    )

    answer = post(local_stack, "/payments/paystack/webhook", probe, paystack_headers(probe))

    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["ignored"] == 1
    assert plan_of(tenant) == "free"
    [message] = wait_for(
        lambda: [m for m in sandbox(local_stack, "slack") if tenant_id in str(m["text"])],
        "the alert in Slack",
    )
    assert message["text"] == (
        f"PAYSTACK payment refused for tenant {tenant_id}: paid 100 NGN; the startup plan costs 4500000 NGN"
    )
