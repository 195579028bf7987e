"""Ordering keys end to end: jobs sharing a key reach the provider sandbox in acceptance order, also
when some of their recipients fail at first (``flaky-<n>@…``: the first n sends fail with 503, so the
job's first attempt fails over every provider and its retry holds the key's later jobs); jobs of other
keys and unkeyed jobs are not held back."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest

from herald_harness.tenants import ALL_PROVIDERS, Tenant, new_tenant
from tests.e2e.clients import email, finished_job, sandbox

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

# The tenant has every vendor's key: that many failed sends are one failed attempt, then the retry
# succeeds.
FAILS_ONE_ATTEMPT = f"flaky-{len(ALL_PROVIDERS)}"


def moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def send(tenant: Tenant, local_part: str, **fields: Any) -> str:
    return tenant.send("email", email(f"{local_part}+{uuid.uuid4().hex}@example.com", **fields))


def received_at(stack: RunningStack, job_id: str) -> datetime:
    [message] = sandbox(stack, "messages", jobId=job_id)
    return moment(message["receivedAt"])


def test_jobs_sharing_a_key_arrive_in_acceptance_order_though_some_fail_at_first(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack)
    recipients = [FAILS_ONE_ATTEMPT, "ok", FAILS_ONE_ATTEMPT, "ok", "ok", FAILS_ONE_ATTEMPT]
    first_key = [send(tenant, recipient, orderingKey="order-1") for recipient in recipients]
    second_key = [send(tenant, recipient, orderingKey="order-2") for recipient in recipients[::-1]]
    unkeyed = send(tenant, "ok")

    jobs = {job_id: finished_job(tenant, job_id) for job_id in [*first_key, *second_key, unkeyed]}

    assert {job["status"] for job in jobs.values()} == {"completed"}
    for keyed in (first_key, second_key):
        arrivals = [received_at(local_stack, job_id) for job_id in keyed]
        assert arrivals == sorted(arrivals), "a key's jobs arrived out of acceptance order"
        # Each started only after the one before it ended.
        for before, after in zip(keyed, keyed[1:], strict=False):
            assert moment(jobs[after]["startedAt"]) >= moment(jobs[before]["completedAt"])
    assert [jobs[job_id]["attempts"] for job_id in first_key] == [2, 1, 2, 1, 1, 2]
    assert jobs[first_key[0]]["orderingKey"] == "order-1"
    # The unkeyed job, sent last, did not wait for the keyed ones' retries.
    assert moment(jobs[unkeyed]["completedAt"]) < moment(jobs[first_key[-1]]["completedAt"])
