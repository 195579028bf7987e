"""Free tenants kept apart on the platform's SES, through the local stack: two free tenants made by
the operator CLI (each gets its own SES tenant), one tripped at the SES imitation; its next email
fails with sending_paused while the other's is delivered, and the operator resumes it."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

TIMEOUT = 15


def send(stack: RunningStack, key: str, to: str) -> str:
    answer = requests.post(
        f"{stack.api_root}/notifications/email",
        json={"to": to, "subject": "Your receipt", "body": "<p>Thanks.</p>"},
        headers={"x-api-key": key},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 202, answer.text
    return str(answer.json()["data"]["jobId"])


def finished(stack: RunningStack, key: str, job_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        job = requests.get(
            f"{stack.api_root}/notifications/jobs/{job_id}", headers={"x-api-key": key}, timeout=TIMEOUT
        ).json()["data"]
        return job if job["status"] in ("completed", "failed") else None

    found: dict[str, Any] = wait_for(done, f"job {job_id} to finish", timeout=60)
    return found


def account(stack: RunningStack, key: str) -> dict[str, Any]:
    data: dict[str, Any] = requests.get(
        f"{stack.api_root}/account", headers={"x-api-key": key}, timeout=TIMEOUT
    ).json()["data"]
    return data


def test_a_tripped_free_tenant_is_paused_alone_and_resumes(local_stack: RunningStack) -> None:
    tripped, tripped_key = local_stack.create_tenant(plan="free", name=f"Tripped{uuid.uuid4().hex[:6]}")
    _, healthy_key = local_stack.create_tenant(plan="free", name=f"Healthy{uuid.uuid4().hex[:6]}")
    trip = requests.post(
        f"{local_stack.sandbox_url}/ses/_sandbox/tenants/herald-{tripped}/trip", timeout=TIMEOUT
    )
    assert trip.status_code == 200, trip.text

    paused_to, other_to = (f"{name}-{uuid.uuid4().hex[:8]}@example.org" for name in ("paused", "other"))
    paused = finished(local_stack, tripped_key, send(local_stack, tripped_key, paused_to))
    other = finished(local_stack, healthy_key, send(local_stack, healthy_key, other_to))

    assert other["status"] == "completed"
    assert (paused["status"], paused["errorMessage"]) == (
        "failed",
        "SES provider_permanent: SES paused this account's free-plan sending after too many bounces or "
        "complaints (sending_paused); other accounts keep sending, and the operator can resume it "
        "(HTTP 400, sending_paused)",
    )
    mailbox = requests.get(f"{local_stack.sandbox_url}/_sandbox/messages", timeout=TIMEOUT).json()
    recipients = str(mailbox)
    assert other_to in recipients
    assert paused_to not in recipients
    assert account(local_stack, tripped_key)["platformSending"] == "paused"
    assert account(local_stack, healthy_key)["platformSending"] == "enabled"
    assert json.loads(local_stack.cli("tenant", "show", tripped, "--json"))["sesSending"] == "paused"

    local_stack.cli("tenant", "resume-sending", tripped)

    assert account(local_stack, tripped_key)["platformSending"] == "enabled"
    again = finished(
        local_stack, tripped_key, send(local_stack, tripped_key, f"again-{uuid.uuid4().hex[:8]}@example.org")
    )
    assert again["status"] == "completed"
