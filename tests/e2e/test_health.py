"""Health-aware delivery end to end: outages staged in the provider sandbox (``PUT
/_sandbox/outages/<target>``), the breakers routing around them or holding jobs back, the tenant's
endpoint states, and the recovery of failed jobs.

The harness's stack opens a breaker for 2 s first (HERALD_LOCAL_BREAKER_COOLDOWN_SECONDS=2, doubling
at each failed probe) and retries after ~2 s, then ~4 s.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
import requests

from herald_harness.running_stack import start_stack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from herald_local.config import AWS_CALLS_DIR_NAME
from tests.e2e.clients import (
    DeadLetterQueue,
    address,
    email,
    finished_job,
    handled_lines,
    sandbox,
    wait_for,
)
from tests.support.least_privilege import keep_calls

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e


def stage_outage(stack: RunningStack, target: str, **body: Any) -> None:
    answer = requests.put(f"{stack.sandbox_url}/_sandbox/outages/{target}", json=body, timeout=HTTP_TIMEOUT)
    assert answer.status_code == 200, answer.text


def lift_outage(stack: RunningStack, target: str) -> None:
    requests.delete(f"{stack.sandbox_url}/_sandbox/outages/{target}", timeout=HTTP_TIMEOUT)


@pytest.fixture
def outages(local_stack: RunningStack) -> Iterator[list[str]]:
    """Targets a test stages outages of; lifted afterwards whatever happened."""
    staged: list[str] = []
    yield staged
    for target in staged:
        lift_outage(local_stack, target)


def hook_url(stack: RunningStack, name: str) -> str:
    return f"{stack.sandbox_url}/hooks/{name}"


def moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def endpoints(tenant: Tenant) -> list[dict[str, Any]]:
    answer = tenant.call("GET", "/account/endpoints")
    assert answer.status_code == 200, answer.text
    listed: list[dict[str, Any]] = answer.json()["data"]
    return listed


def test_a_sendgrid_outage_is_routed_around_and_sendgrid_is_only_probed(
    local_stack: RunningStack, outages: list[str]
) -> None:
    tenant = new_tenant(local_stack)  # every vendor, SendGrid first
    outages.append("SENDGRID")
    stage_outage(local_stack, "SENDGRID", status=500)
    to = address("outage")

    jobs = [finished_job(tenant, tenant.send("email", email(to))) for _ in range(10)]

    assert [(job["status"], job["attempts"]) for job in jobs] == [("completed", 1)] * 10
    assert {job["deliveryLogs"][0]["usedProvider"] for job in jobs} == {"RESEND"}
    sendgrid_calls = [a for a in sandbox(local_stack, "attempts", to=to) if a["provider"] == "sendgrid"]
    # 5 calls trip the breaker; after that only a probe now and then.
    assert 5 <= len(sendgrid_calls) < 10
    moved = [job for job in jobs if job["deliveryLogs"][0]["providers"][0]["outcome"] == "moved back"]
    assert moved
    assert moved[0]["deliveryLogs"][0]["providers"][0] == {
        "provider": "SENDGRID",
        "outcome": "moved back",
        "error": "breaker open",
    }


def test_an_endpoint_outage_holds_its_jobs_back_and_delivers_them_all_once_it_is_back(
    local_stack: RunningStack, outages: list[str]
) -> None:
    tenant = new_tenant(local_stack, [])
    name = f"e2e-{uuid.uuid4().hex}"
    outages.append(f"hook:{name}")
    stage_outage(local_stack, f"hook:{name}", status=503, seconds=12)

    job_ids = [
        tenant.send("webhook", {"url": hook_url(local_stack, name), "payload": {"n": n}}) for n in range(8)
    ]
    opened = wait_for(lambda: [e for e in endpoints(tenant) if e["state"] == "open"], "the endpoint to open")
    jobs = [finished_job(tenant, job_id) for job_id in job_ids]

    assert opened[0]["origin"] == local_stack.sandbox_url
    assert opened[0]["lastError"] == "the endpoint answered HTTP 503"
    assert [job["status"] for job in jobs] == ["completed"] * 8
    # Without the breaker each job would have spent its 3 attempts within ~6 s and failed.
    assert max(job["attempts"] for job in jobs) <= 3
    assert sum(job["attempts"] for job in jobs) < 8 * 3
    assert DeadLetterQueue(local_stack).copies(job_ids[0]) == []
    [endpoint] = endpoints(tenant)
    assert endpoint["state"] == "closed"


def test_a_keyed_webhook_deferred_by_an_open_breaker_keeps_its_place_in_its_key(
    local_stack: RunningStack, outages: list[str]
) -> None:
    """A deferred keyed job holds its one FIFO message for the cool-down: a re-sent message of the
    same job and attempt would be dropped by the queue's deduplication, the key's next job would
    overtake it, and only the sweeper (15 minutes) would find it again."""
    tenant = new_tenant(local_stack, [])
    failing, healthy = f"e2e-{uuid.uuid4().hex}", f"e2e-{uuid.uuid4().hex}"
    outages.append(f"hook:{failing}")
    stage_outage(local_stack, f"hook:{failing}", status=503)
    for n in range(6):
        tenant.send("webhook", {"url": hook_url(local_stack, failing), "payload": {"n": n}})
    wait_for(lambda: [e for e in endpoints(tenant) if e["state"] == "open"], "the endpoint to open")

    first = tenant.send(
        "webhook", {"url": hook_url(local_stack, healthy), "payload": {"n": 1}, "orderingKey": "rk"}
    )
    waited = wait_for(
        lambda: [line for line in handled_lines(local_stack, first) if line["result"] != "completed"],
        "the keyed job to wait for the breaker",
    )
    lift_outage(local_stack, f"hook:{failing}")
    second = tenant.send(
        "webhook", {"url": hook_url(local_stack, healthy), "payload": {"n": 2}, "orderingKey": "rk"}
    )
    jobs = [finished_job(tenant, job_id) for job_id in (first, second)]

    assert (waited[0]["result"], waited[0]["attempt"]) == ("holding", 0)
    assert [(job["status"], job["attempts"]) for job in jobs] == [("completed", 1)] * 2
    assert moment(jobs[1]["startedAt"]) >= moment(jobs[0]["completedAt"]), "the key's next job overtook it"
    arrivals = [hook["json"]["n"] for hook in sandbox(local_stack, "hooks", name=healthy)]
    assert arrivals == [1, 2]
    # Back after its cool-down (seconds here), never left for the sweeper.
    assert moment(jobs[0]["completedAt"]) - moment(jobs[0]["createdAt"]) < timedelta(seconds=60)


def test_failed_jobs_of_a_window_are_recovered_with_their_attempts_going_on(
    local_stack: RunningStack, outages: list[str]
) -> None:
    tenant = new_tenant(local_stack, ["POSTMARK"])
    outages.append("POSTMARK")
    stage_outage(local_stack, "POSTMARK", status=503)
    since = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()
    failed = [finished_job(tenant, tenant.send("email", email(address("recover")))) for _ in range(2)]
    assert [(job["status"], job["attempts"]) for job in failed] == [("failed", 3)] * 2
    lift_outage(local_stack, "POSTMARK")

    answer = tenant.call("POST", "/notifications/jobs/recover", {"since": since, "type": "email"})

    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"requeued": 2, "nextCursor": None}
    recovered = [finished_job(tenant, job["id"]) for job in failed]
    assert [(job["status"], job["attempts"]) for job in recovered] == [("completed", 4)] * 2
    again = tenant.call("POST", "/notifications/jobs/recover", {"since": since})
    assert again.json()["data"] == {"requeued": 0, "nextCursor": None}
    backwards = tenant.call("POST", "/notifications/jobs/recover", {"since": since, "until": since})
    assert (backwards.status_code, backwards.json()["code"]) == (400, "validation_error")


@pytest.fixture
def quick_disable_stack(tmp_path: Path) -> Iterator[RunningStack]:
    """A stack of its own where an endpoint is disabled 10 s after its breaker first opened."""
    stack = start_stack(tmp_path, {"HERALD_LOCAL_ENDPOINT_DISABLE_AFTER_SECONDS": "10"})
    yield stack
    stack.stop_cleanly()
    keep_calls(stack.state_dir / AWS_CALLS_DIR_NAME)


def test_an_endpoint_failing_too_long_is_disabled_the_tenant_told_once_and_it_can_be_re_enabled(
    quick_disable_stack: RunningStack,
) -> None:
    stack = quick_disable_stack
    tenant = Tenant(stack.api_root, *stack.create_tenant(name="Disabled"))
    name = f"e2e-{uuid.uuid4().hex}"
    stage_outage(stack, f"hook:{name}", status=503)
    for n in range(6):
        tenant.send("webhook", {"url": hook_url(stack, name), "payload": {"n": n}})

    [endpoint] = wait_for(
        lambda: [e for e in endpoints(tenant) if e["state"] == "disabled"],
        "the endpoint to be disabled",
        timeout=90,
    )
    later = finished_job(tenant, tenant.send("webhook", {"url": hook_url(stack, name), "payload": {"n": 99}}))

    assert endpoint["origin"] == stack.sandbox_url
    assert (later["status"], later["attempts"]) == ("failed", 1)
    assert "endpoint_disabled" in later["errorMessage"]
    notices = wait_for(lambda: sandbox(stack, "messages", to="disabled@example.com"), "the tenant's notice")
    assert [notice["subject"] for notice in notices] == [f"Webhook endpoint disabled: {stack.sandbox_url}"]

    lift_outage(stack, f"hook:{name}")
    host = stack.sandbox_url.partition("://")[2]
    enabled = tenant.call("POST", f"/account/endpoints/{quote(host)}/enable")
    assert enabled.status_code == 200, enabled.text
    assert enabled.json()["data"]["state"] == "closed"
    delivered = finished_job(
        tenant, tenant.send("webhook", {"url": hook_url(stack, name), "payload": {"n": 100}})
    )
    assert delivered["status"] == "completed"
    unknown = tenant.call("POST", "/account/endpoints/never-failed.example/enable")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "endpoint_not_found")
    assert len(sandbox(stack, "messages", to="disabled@example.com")) == 1
