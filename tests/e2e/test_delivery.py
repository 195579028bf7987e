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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
import requests
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.e2e.conftest import wait_for as shared_wait_for

if TYPE_CHECKING:
    from tests.e2e.conftest import RunningStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

HTTP_TIMEOUT = (3.05, 20.0)
CLI_TIMEOUT_SECONDS = 60
# Three attempts with ~2 s and ~4 s between them, plus the pollers' pick-up: well inside this.
JOB_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.1
# A second dead-letter copy would come from a redelivered message; a retry would be due by then.
NO_SECOND_COPY_WINDOW_SECONDS = 3.0
ALL_PROVIDERS = ("SENDGRID", "RESEND", "POSTMARK")
FINISHED = ("completed", "failed")


@dataclass(frozen=True)
class Tenant:
    api_root: str
    tenant_id: str
    api_key: str

    def call(self, method: str, path: str, body: Any = None) -> requests.Response:
        return requests.request(
            method,
            f"{self.api_root}{path}",
            json=body,
            headers={"X-API-Key": self.api_key},
            timeout=HTTP_TIMEOUT,
        )

    def send(self, route: str, body: dict[str, Any]) -> str:
        answer = self.call("POST", f"/notifications/{route}", body)
        assert answer.status_code == 202, answer.text
        return str(answer.json()["data"]["jobId"])

    def job(self, job_id: str) -> dict[str, Any]:
        answer = self.call("GET", f"/notifications/jobs/{job_id}")
        assert answer.status_code == 200, answer.text
        document: dict[str, Any] = answer.json()["data"]
        return document


def new_tenant(stack: RunningStack, providers: Sequence[str] = ALL_PROVIDERS) -> Tenant:
    """A startup-plan tenant made with the operator CLI, with sandbox keys for ``providers`` in order."""
    tenant = Tenant(stack.api_root, *stack.create_tenant())
    for name in providers:
        answer = tenant.call("PUT", f"/account/providers/{name}", {"apiKey": f"sandbox-{uuid.uuid4().hex}"})
        assert answer.status_code == 201, answer.text
    return tenant


def wait_for(check: Callable[[], Any], what: str, timeout: float = JOB_TIMEOUT_SECONDS) -> Any:
    return shared_wait_for(check, what, timeout=timeout, interval=POLL_SECONDS)


def finished_job(tenant: Tenant, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = wait_for(
        lambda: (job := tenant.job(job_id))["status"] in FINISHED and job, f"job {job_id} to finish"
    )
    return job


def sandbox(stack: RunningStack, view: str, **filters: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{stack.sandbox_url}/_sandbox/{view}", params=filters, timeout=HTTP_TIMEOUT)
    answer.raise_for_status()
    records: list[dict[str, Any]] = answer.json()
    return records


def address(local_part: str) -> str:
    """A recipient of this test alone; the sandbox ignores the ``+tag``."""
    return f"{local_part}+{uuid.uuid4().hex}@example.com"


def email(to: str, **extra: Any) -> dict[str, Any]:
    return {"to": to, "subject": "Your order", "body": "<p>Shipped.</p>", **extra}


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
    first, second, third = (moment(log["createdAt"]) for log in logs)
    gap1, gap2 = (second - first).total_seconds(), (third - second).total_seconds()
    assert gap2 > gap1 > 0, (gap1, gap2)
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
        time.sleep(NO_SECOND_COPY_WINDOW_SECONDS)
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


# ------------------------------------------------------------------ the dead-letter queue


class DeadLetterQueue:
    """Reads the stack's DLQ without taking messages away from anyone else: each look receives
    everything, then makes what it received visible again."""

    LOOK_VISIBILITY_SECONDS = 30

    def __init__(self, stack: RunningStack) -> None:
        self._sqs = stack.boto3_client("sqs")
        self._url = stack.outputs["DeadLetterQueueUrl"]

    def _receive_all(self) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        while batch := self._sqs.receive_message(
            QueueUrl=self._url, MaxNumberOfMessages=10, VisibilityTimeout=self.LOOK_VISIBILITY_SECONDS
        ).get("Messages", []):
            seen.update({message["MessageId"]: message for message in batch})
        return list(seen.values())

    def _release(self, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self._sqs.change_message_visibility(
                QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )

    def _mine(self, messages: list[dict[str, Any]], job_id: str) -> list[dict[str, Any]]:
        return [message for message in messages if json.loads(message["Body"]).get("jobId") == job_id]

    def copies(self, job_id: str) -> list[dict[str, Any]]:
        messages = self._receive_all()
        self._release(messages)
        return [json.loads(message["Body"]) for message in self._mine(messages, job_id)]

    def delete_copies(self, job_id: str) -> None:
        messages = self._receive_all()
        mine = self._mine(messages, job_id)
        for message in mine:
            self._sqs.delete_message(QueueUrl=self._url, ReceiptHandle=message["ReceiptHandle"])
        self._release([message for message in messages if message not in mine])
