"""Delivery end to end, as a client sees it: notifications sent over HTTP to the local stack, delivered
by its workers through the provider sandbox, followed through the job document, the sandbox's records
and the dead-letter queue.

The sandbox chooses failures by recipient (``fail-<status>[-<provider>]+<tag>@…``) and answers webhooks
at ``/hooks/<name>``; the stack retries after ~2 s, then ~4 s (HERALD_LOCAL_RETRY_BASE_DELAY=2).
Each test makes a tenant of its own through the operator CLI and gives it sandbox provider keys
through the API, so tests never share a provider order or a signing secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
import requests
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from herald_harness.tenants import ALL_PROVIDERS, HTTP_TIMEOUT, new_tenant
from tests.e2e.clients import (
    DeadLetterQueue,
    address,
    email,
    finished_job,
    handled_lines,
    handling_ended,
    sandbox,
    table_items,
    wait_for,
)
from tests.support.stored_items import table_text

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e


def moment(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def tried(log: dict[str, Any]) -> list[tuple[str, str]]:
    return [(entry["provider"], entry["outcome"]) for entry in log["providers"]]


# ------------------------------------------------------------------ email


def test_a_healthy_email_is_delivered_by_the_tenants_first_provider(
    local_stack: RunningStack, record_property: Callable[[str, object], None]
) -> None:
    tenant = new_tenant(local_stack)
    to = address("healthy")
    sent_at = time.monotonic()

    job_id = tenant.send("email", email(to))
    job = finished_job(tenant, job_id)

    observed = time.monotonic() - sent_at
    assert job["status"] == "completed"
    assert (job["attempts"], job["errorMessage"]) == (1, None)
    [log] = job["deliveryLogs"]
    assert (log["status"], log["usedProvider"]) == ("success", "SENDGRID")
    assert tried(log) == [("SENDGRID", "delivered")]
    [message] = sandbox(local_stack, "messages", jobId=job_id)
    assert (message["provider"], message["recipient"], message["subject"]) == ("sendgrid", to, "Your order")
    # Measured, not asserted: the accept-to-completed latency of the local stack.
    created, started, completed = (moment(job[name]) for name in ("createdAt", "startedAt", "completedAt"))
    latency = {
        "accept_to_completed_seconds": (completed - created).total_seconds(),
        "accept_to_started_seconds": (started - created).total_seconds(),
        "accept_to_completed_seen_by_client_seconds": observed,
    }
    for name, seconds in latency.items():
        record_property(name, round(seconds, 3))
    print("\n" + ", ".join(f"{name} {seconds:.3f}" for name, seconds in latency.items()))


def test_when_the_first_provider_answers_500_the_second_delivers_in_the_same_attempt(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack)
    to = address("fail-500-sendgrid")

    job = finished_job(tenant, tenant.send("email", email(to)))

    assert (job["status"], job["attempts"]) == ("completed", 1)
    [log] = job["deliveryLogs"]
    assert log["usedProvider"] == "RESEND"
    assert tried(log) == [("SENDGRID", "transient"), ("RESEND", "delivered")]
    assert log["providers"][0]["status"] == 500
    attempts = sandbox(local_stack, "attempts", to=to)
    assert [(a["provider"], a["status"]) for a in attempts] == [("sendgrid", 500), ("resend", 200)]
    assert [m["provider"] for m in sandbox(local_stack, "messages", to=to)] == ["resend"]


def test_when_every_provider_fails_it_retries_with_growing_delays_then_fails_and_dead_letters_once(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack)
    to = address("fail-500")

    job_id = tenant.send("email", email(to))
    job = finished_job(tenant, job_id)

    assert (job["status"], job["attempts"], job["maxAttempts"]) == ("failed", 3, 3)
    assert job["errorMessage"]
    logs = job["deliveryLogs"]
    assert [(log["attempt"], log["status"]) for log in logs] == [(1, "failed"), (2, "failed"), (3, "failed")]
    for log in logs:
        assert tried(log) == [(name, "transient") for name in ALL_PROVIDERS]
    # The delays the worker chose grow (~2 s, then ~4 s, each ±20 %), and no retry came sooner. The
    # gaps between attempts also hold the pollers' pick-up, which a loaded machine stretches.
    delays = [
        line["delay_seconds"] for line in handled_lines(local_stack, job_id) if line["result"] == "retrying"
    ]
    first_delay, second_delay = delays
    assert second_delay > first_delay >= 1, delays
    first, second, third = (moment(log["createdAt"]) for log in logs)
    gaps = [(second - first).total_seconds(), (third - second).total_seconds()]
    assert all(gap >= delay - 0.01 for gap, delay in zip(gaps, delays, strict=True)), (gaps, delays)
    assert len(sandbox(local_stack, "attempts", to=to)) == 3 * len(ALL_PROVIDERS)
    assert sandbox(local_stack, "messages", to=to) == []

    dead_letters = DeadLetterQueue(local_stack)
    try:
        [copy] = wait_for(lambda: dead_letters.copies(job_id), "the dead-letter copy", timeout=20)
        assert copy["jobId"] == job_id
        assert copy["tenantId"] == tenant.tenant_id
        assert copy["attempts"] == 3
        assert copy["error"] == job["errorMessage"]
        assert moment(copy["failedAt"]) >= third
        assert copy["payload"] == email(to)
        # Once the last attempt's handling has ended, any copy it sent is in the queue.
        wait_for(lambda: handling_ended(local_stack, job_id, "failed"), "the last attempt's handling to end")
        assert len(dead_letters.copies(job_id)) == 1
    finally:
        dead_letters.delete_copies(job_id)


def test_a_401_from_the_only_provider_fails_the_job_after_one_attempt(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, ["SENDGRID"])
    to = address("fail-401")

    job = finished_job(tenant, tenant.send("email", email(to)))

    assert (job["status"], job["attempts"]) == ("failed", 1)
    [log] = job["deliveryLogs"]
    assert tried(log) == [("SENDGRID", "provider_permanent")]
    assert [a["status"] for a in sandbox(local_stack, "attempts", to=to)] == [401]


def test_a_forced_provider_with_fallback_never_touches_a_third_provider(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack)
    to = address("fail-500-resend")

    job = finished_job(tenant, tenant.send("email", email(to, provider="RESEND", fallback="POSTMARK")))

    assert (job["status"], job["attempts"]) == ("completed", 1)
    [log] = job["deliveryLogs"]
    assert log["usedProvider"] == "POSTMARK"
    assert tried(log) == [("RESEND", "transient"), ("POSTMARK", "delivered")]
    assert [a["provider"] for a in sandbox(local_stack, "attempts", to=to)] == ["resend", "postmark"]
    assert sandbox(local_stack, "attempts", to=to, provider="sendgrid") == []


# ------------------------------------------------------------------ Mailgun


def test_mailgun_delivers_for_an_account_in_either_region(local_stack: RunningStack) -> None:
    """A US key as it is, an EU key written eu:<key>: both are checked live and send (the local
    stack points both regions' base URLs at the sandbox's Mailgun)."""
    us, eu = new_tenant(local_stack, ["MAILGUN"]), new_tenant(local_stack, [])
    stored = eu.call("PUT", "/account/providers/mailgun", {"apiKey": f"eu:sandbox-mg-{uuid.uuid4().hex}"})
    assert stored.status_code == 201, stored.text

    for tenant in (us, eu):
        to = address("mailgun")
        job = finished_job(tenant, tenant.send("email", email(to)))
        assert (job["status"], job["deliveryLogs"][0]["usedProvider"]) == ("completed", "MAILGUN")
        [message] = sandbox(local_stack, "messages", to=to)
        assert (message["provider"], message["jobId"]) == ("mailgun", job["id"])
        assert message["body"]["v:herald_tenant_id"] == tenant.tenant_id


@pytest.mark.parametrize(
    ("status", "outcome"), [(500, "transient"), (429, "transient"), (402, "provider_permanent")]
)
def test_when_mailgun_fails_first_the_next_provider_delivers_in_the_same_attempt(
    local_stack: RunningStack, status: int, outcome: str
) -> None:
    tenant = new_tenant(local_stack, ["MAILGUN", "SENDGRID"])
    to = address(f"fail-{status}-mailgun")

    job = finished_job(tenant, tenant.send("email", email(to)))

    assert (job["status"], job["attempts"]) == ("completed", 1)
    [log] = job["deliveryLogs"]
    assert tried(log) == [("MAILGUN", outcome), ("SENDGRID", "delivered")]
    assert [(a["provider"], a["status"]) for a in sandbox(local_stack, "attempts", to=to)] == [
        ("mailgun", status),
        ("sendgrid", 202),
    ]


def test_a_recipient_mailgun_refuses_fails_the_job_at_once(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, ["MAILGUN", "SENDGRID"])
    to = address("fail-400-mailgun")

    job = finished_job(tenant, tenant.send("email", email(to)))

    assert (job["status"], job["attempts"]) == ("failed", 1)
    assert tried(job["deliveryLogs"][0]) == [("MAILGUN", "message_permanent")]


# ------------------------------------------------------------------ webhooks


def notifykit_verifies(secret: str, raw_body: bytes, headers: Mapping[str, str]) -> bool:
    """The NotifyKit SDK's check: ``t=`` and the LAST ``v1=`` of X-Webhook-Signature, HMAC-SHA256 of
    ``"<t>.<raw body>"`` keyed with the whole secret string."""
    header = next(value for name, value in headers.items() if name.lower() == "x-webhook-signature")
    pairs = [part.strip().partition("=") for part in header.split(",")]
    timestamp = next(value for key, _, value in pairs if key == "t")
    signature = [value for key, _, value in pairs if key == "v1"][-1]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def standard_verifies(secret: str, raw_body: bytes, headers: Mapping[str, str]) -> bool:
    try:
        Webhook(secret).verify(raw_body, dict(headers))
    except WebhookVerificationError:
        return False
    return True


def test_a_webhook_is_delivered_signed_in_both_formats(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, [])
    created = tenant.call("POST", "/account/webhook-secret")
    assert created.status_code == 201, created.text
    secret = created.json()["data"]["secret"]
    registered = requests.post(
        f"{local_stack.sandbox_url}/_sandbox/secrets", json={"secret": secret}, timeout=HTTP_TIMEOUT
    )
    assert registered.status_code == 201
    name = f"e2e-{uuid.uuid4().hex}"
    payload = {"event": "order.paid", "orderId": uuid.uuid4().hex, "note": "Grüße, 東京"}

    job_id = tenant.send("webhook", {"url": f"{local_stack.sandbox_url}/hooks/{name}", "payload": payload})
    job = finished_job(tenant, job_id)

    assert (job["status"], job["attempts"]) == ("completed", 1)
    assert job["deliveryLogs"][0]["usedProvider"] is None
    [hook] = sandbox(local_stack, "hooks", name=name)
    raw_body, headers = hook["body"].encode(), hook["headers"]
    assert json.loads(raw_body) == payload
    assert hook["jobId"] == job_id
    assert notifykit_verifies(secret, raw_body, headers)
    assert standard_verifies(secret, raw_body, headers)
    assert hook["signatures"] == {"notifykit": True, "standard": True}
    # A receiver that checks signatures refuses a body changed on the way.
    tampered = raw_body.replace(b"order.paid", b"order.refunded")
    assert not notifykit_verifies(secret, tampered, headers)
    assert not standard_verifies(secret, tampered, headers)


def test_a_webhooks_custom_headers_reach_the_receiver_and_rest_sealed(local_stack: RunningStack) -> None:
    """The receiver gets the headers as the tenant gave them; the table holds no value of them and the
    job document masks the credentials."""
    tenant = new_tenant(local_stack, [])
    name = f"e2e-{uuid.uuid4().hex}"
    headers = {"X-Receiver-Token": "receiver-token-31c9", "X-Tenant-Ref": "acme-7"}

    job_id = tenant.send(
        "webhook", {"url": f"{local_stack.sandbox_url}/hooks/{name}", "payload": {"n": 1}, "headers": headers}
    )
    job = finished_job(tenant, job_id)

    [hook] = sandbox(local_stack, "hooks", name=name)
    received = {key.lower(): value for key, value in hook["headers"].items()}
    assert (received["x-receiver-token"], received["x-tenant-ref"]) == ("receiver-token-31c9", "acme-7")
    assert job["payload"]["headers"] == {"X-Receiver-Token": "[masked]", "X-Tenant-Ref": "acme-7"}
    items = table_items(local_stack)
    assert "X-Receiver-Token" in table_text(items)
    assert "receiver-token-31c9" not in table_text(items)


@pytest.mark.parametrize("url", ["https://10.0.0.1/hook", "https://169.254.169.254/latest/meta-data/"])
def test_a_webhook_to_a_private_or_metadata_address_is_refused_at_acceptance(
    local_stack: RunningStack, url: str
) -> None:
    """The local stack lets webhooks reach loopback (the sandbox); private and metadata stay refused."""
    tenant = new_tenant(local_stack, [])

    answer = tenant.call("POST", "/notifications/webhook", {"url": url, "payload": {"a": 1}})

    assert answer.status_code == 400
    assert answer.json()["code"] == "url_not_allowed"
    assert tenant.call("GET", "/notifications/jobs").json()["data"]["pagination"]["total"] == 0
