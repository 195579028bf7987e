"""What a tenant or an operator changes holds from the next request, in every warm container.

Each test first makes the local stack run at least two warm API environments (and, where deliveries
matter, two email worker environments), then changes the tenant through one way in (the API, the
operator CLI) and checks the next requests, read from the stack's log to have been served by more
than one environment.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant, new_tenant
from tests.e2e.clients import address, email, finished_job, in_one_minute, sandbox, wait_for

pytestmark = pytest.mark.e2e

WARM_PARALLEL = 8
# The done-when of this behaviour: every request over the next 10 s, 20 of them.
AFTER_CHANGE_REQUESTS = 20
AFTER_CHANGE_SECONDS = 10.0


def in_parallel(count: int, call: Callable[[], requests.Response]) -> list[requests.Response]:
    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


def log_offset(stack: RunningStack) -> int:
    return stack.log_file.stat().st_size if stack.log_file.exists() else 0


def environments_since(stack: RunningStack, offset: int, function: str) -> set[str]:
    """The labels (``ApiFunction``, ``ApiFunction#2`` ...) of the environments of ``function`` that
    finished an invocation since ``offset`` of the stack's log."""
    with stack.log_file.open("rb") as log:
        log.seek(offset)
        lines = log.read().decode(errors="replace").splitlines()
    return {
        label
        for line in lines
        if "REPORT RequestId" in line
        and ((label := line.split("|", 1)[0].strip()) == function or label.startswith(f"{function}#"))
    }


def warm(stack: RunningStack, call: Callable[[], requests.Response], function: str = "ApiFunction") -> None:
    """Calls in parallel until at least two environments of ``function`` have served calls."""
    offset = log_offset(stack)
    wait_for(
        lambda: in_parallel(WARM_PARALLEL, call) and len(environments_since(stack, offset, function)) >= 2,
        f"two warm {function} environments",
    )


def spread_over(seconds: float, count: int, call: Callable[[], requests.Response]) -> list[requests.Response]:
    """``count`` calls over ``seconds``, in pairs, so that both warm environments serve some."""
    answers: list[requests.Response] = []
    pause = seconds / (count / 2)
    for _ in range(count // 2):
        answers += in_parallel(2, call)
        time.sleep(pause)
    return answers


def get_account(stack: RunningStack, api_key: str) -> Callable[[], requests.Response]:
    return lambda: requests.get(
        f"{stack.api_root}/account", headers={"X-API-Key": api_key}, timeout=HTTP_TIMEOUT
    )


def statuses(answers: list[requests.Response]) -> list[tuple[int, str | None]]:
    return [(answer.status_code, answer.json().get("code")) for answer in answers]


def test_after_a_provider_is_added_sixteen_parallel_sends_are_accepted_or_duplicates(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, [], name="Consistent")
    key = f"order-{uuid.uuid4().hex}"
    body = email(address("first"), idempotencyKey=key)

    def send() -> requests.Response:
        return tenant.call("POST", "/notifications/email", body)

    warm(local_stack, send)  # every environment has now seen the tenant without a provider (403)
    added = tenant.call("PUT", "/account/providers/SENDGRID", {"apiKey": f"sandbox-{uuid.uuid4().hex}"})
    assert added.status_code == 201, added.text
    offset = log_offset(local_stack)

    answers = in_parallel(16, send)

    assert sorted({status for status, _ in statuses(answers)}) in ([202, 409], [409], [202])
    assert [answer.status_code for answer in answers].count(202) == 1
    assert len(environments_since(local_stack, offset, "ApiFunction")) >= 2


def test_after_a_rotation_without_grace_the_old_key_is_refused_by_every_warm_container(
    local_stack: RunningStack,
) -> None:
    tenant_id, old_key = local_stack.create_tenant(plan="startup", name="Rotated")
    warm(local_stack, get_account(local_stack, old_key))

    revoked = local_stack.cli("key", "rotate", tenant_id).splitlines()
    new_key = revoked[1].split()[2]
    offset = log_offset(local_stack)
    answers = spread_over(AFTER_CHANGE_SECONDS, AFTER_CHANGE_REQUESTS, get_account(local_stack, old_key))

    assert statuses(answers) == [(401, "invalid_api_key")] * AFTER_CHANGE_REQUESTS
    assert len(environments_since(local_stack, offset, "ApiFunction")) >= 2
    assert get_account(local_stack, new_key)().status_code == 200


def test_after_a_tenant_is_disabled_every_warm_container_refuses_it_and_its_queued_job_is_not_sent(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, ["SENDGRID"], name="Disabled")
    warm(local_stack, get_account(local_stack, tenant.api_key))
    # Its attempts all fail before the change (every provider answers 500), and the operator queues
    # it again after the change. Queued between two of its attempts instead, it raced the disabling
    # command, which a busy machine lost to all three attempts.
    job_id = tenant.send("email", email(address("fail-500")))
    assert finished_job(tenant, job_id)["status"] == "failed"

    assert local_stack.cli("tenant", "disable", tenant.tenant_id).splitlines() == [
        f"{tenant.tenant_id} is now disabled",
        "its next request is refused (403 tenant_disabled); its queued jobs end failed, not sent",
    ]
    offset = log_offset(local_stack)
    answers = spread_over(
        AFTER_CHANGE_SECONDS, AFTER_CHANGE_REQUESTS, get_account(local_stack, tenant.api_key)
    )
    redriven = json.loads(local_stack.cli("dlq", "redrive", "--job", job_id, "--json"))

    assert statuses(answers) == [(403, "tenant_disabled")] * AFTER_CHANGE_REQUESTS
    assert len(environments_since(local_stack, offset, "ApiFunction")) >= 2
    assert [(row["jobId"], row["outcome"]) for row in redriven] == [(job_id, "redriven")]
    job = operator_job(local_stack, job_id)
    assert (job["status"], job["errorMessage"]) == (
        "failed",
        "the tenant is disabled (tenant_disabled); the job was not sent",
    )
    # The attempts before the change called SendGrid (it answered 500); the one after it called nobody.
    *before, after = job["deliveryLogs"]
    assert before
    assert all(log["usedProvider"] == "SENDGRID" for log in before)
    assert (after["usedProvider"], after["providers"]) == (None, [])
    assert sandbox(local_stack, "messages", jobId=job_id) == []


def operator_job(stack: RunningStack, job_id: str) -> dict[str, Any]:
    """The job as the operator sees it (the tenant's own key is refused), once it has failed."""
    job: dict[str, Any] = wait_for(
        lambda: (
            (found := json.loads(stack.cli("jobs", "show", job_id, "--json")))["status"] == "failed" and found
        ),
        f"job {job_id} to fail",
    )
    return job


def test_a_plan_change_holds_from_the_next_request_in_every_warm_container(local_stack: RunningStack) -> None:
    hook = {"url": f"{local_stack.sandbox_url}/hooks/upgrade-{uuid.uuid4().hex}", "payload": {"n": 1}}

    def free_tenant() -> Tenant:
        return Tenant(local_stack.api_root, *local_stack.create_tenant(plan="free", name="Upgraded"))

    def send_as(tenant: Tenant) -> Callable[[], requests.Response]:
        return lambda: tenant.call("POST", "/notifications/webhook", hook)

    # The free plan's 5 a minute, and one more.
    tenant, sent = in_one_minute(free_tenant, lambda tenant: in_parallel(6, send_as(tenant)))
    assert sorted(answer.status_code for answer in sent) == [202] * 5 + [429]
    warm(local_stack, get_account(local_stack, tenant.api_key))

    local_stack.cli("tenant", "set-plan", tenant.tenant_id, "startup")

    plans = {
        answer.json()["data"]["plan"] for answer in in_parallel(8, get_account(local_stack, tenant.api_key))
    }
    assert plans == {"startup"}
    # Six more: the free plan would refuse some in this minute or the next, the startup plan none.
    assert [answer.status_code for answer in in_parallel(6, send_as(tenant))] == [202] * 6


def test_a_new_provider_order_and_a_rotated_signing_secret_hold_for_the_next_delivery(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, ["SENDGRID", "RESEND"], name="Reordered")
    first = finished_job(tenant, tenant.send("email", email(address("order"))))
    assert first["deliveryLogs"][-1]["usedProvider"] == "SENDGRID"
    # Three queues at once: their pollers invoke the worker concurrently.
    priorities = itertools.cycle([1, 5, 10])
    warm(
        local_stack,
        lambda: tenant.call(
            "POST", "/notifications/email", email(address("warm"), priority=next(priorities))
        ),
        function="EmailWorkerFunction",
    )

    moved = tenant.call("PATCH", "/account/providers/RESEND", {"priority": 1})
    assert moved.status_code == 200, moved.text
    jobs = [tenant.send("email", email(address("after"))) for _ in range(4)]

    assert {finished_job(tenant, job)["deliveryLogs"][-1]["usedProvider"] for job in jobs} == {"RESEND"}

    created = tenant.call("POST", "/account/webhook-secret")
    assert created.status_code == 201, created.text
    rotated = tenant.call("POST", "/account/webhook-secret/rotate")
    assert rotated.status_code == 200, rotated.text
    name = f"rotated-{uuid.uuid4().hex}"
    finished_job(
        tenant, tenant.send("webhook", {"url": f"{local_stack.sandbox_url}/hooks/{name}", "payload": {}})
    )
    [hook] = sandbox(local_stack, "hooks", name=name)
    headers = {name.lower(): value for name, value in hook["headers"].items()}
    assert len(headers["webhook-signature"].split()) == 2  # the old secret's and the new one's
