"""Scheduled sends end to end: a job with a sendAt is sent by the local stack's own DispatcherFunction
(played on the template's schedule) never before its time and within a minute after it; a cancel
stops it; cancels racing the dispatch leave each job sent once or cancelled, never both."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from herald_harness.running_stack import start_stack
from herald_harness.tenants import Tenant, new_tenant
from tests.e2e.clients import address, email, finished_job, sandbox, wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

# The dispatcher runs every minute; a job starts at most that long (plus the pick-up) after its time.
START_BOUND_SECONDS = 60.0


def moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def ahead(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def schedule(tenant: Tenant, to: str, seconds: float) -> dict[str, Any]:
    answer = tenant.call("POST", "/notifications/email", email(to, sendAt=ahead(seconds)))
    assert answer.status_code == 202, answer.text
    data: dict[str, Any] = answer.json()["data"]
    assert data["status"] == "scheduled"
    return data


def test_a_scheduled_email_is_not_sent_before_its_time_and_starts_within_a_minute(
    local_stack: RunningStack, record_property: Callable[[str, object], None]
) -> None:
    tenant = new_tenant(local_stack)
    to = address("later")
    accepted = schedule(tenant, to, 20)
    send_at = moment(accepted["sendAt"])
    assert tenant.job(accepted["jobId"])["status"] == "scheduled"

    job = finished_job_within(tenant, accepted["jobId"], 20 + START_BOUND_SECONDS + 30)

    assert (job["status"], job["sendAt"]) == ("completed", accepted["sendAt"])
    [message] = sandbox(local_stack, "messages", jobId=accepted["jobId"])
    started, received = moment(job["startedAt"]), moment(message["receivedAt"])
    assert started >= send_at
    assert received >= send_at
    assert (started - send_at).total_seconds() < START_BOUND_SECONDS
    record_property("scheduled_start_delay_seconds", (started - send_at).total_seconds())


def finished_job_within(tenant: Tenant, job_id: str, timeout: float) -> dict[str, Any]:
    job: dict[str, Any] = wait_for(
        lambda: (job := tenant.job(job_id))["status"] in ("completed", "failed") and job,
        f"job {job_id} to finish",
        timeout=timeout,
    )
    return job


def test_a_cancelled_job_is_never_sent_and_leaves_the_usage(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack)
    to = address("cancelled")
    accepted = schedule(tenant, to, 5)
    used = tenant.call("GET", "/account").json()["data"]["usage"]["total"]

    answer = tenant.call("POST", f"/notifications/jobs/{accepted['jobId']}/cancel")

    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["status"] == "cancelled"
    assert tenant.call("GET", "/account").json()["data"]["usage"]["total"] == used - 1
    # An unscheduled job sent meanwhile is delivered: the workers ran past the cancelled one's time.
    finished_job(tenant, tenant.send("email", email(address("after"))))
    time.sleep(6)
    assert tenant.job(accepted["jobId"])["status"] == "cancelled"
    assert sandbox(local_stack, "messages", jobId=accepted["jobId"]) == []
    again = tenant.call("POST", f"/notifications/jobs/{accepted['jobId']}/cancel")
    assert (again.status_code, again.json()["code"]) == (409, "job_not_cancellable")


def test_cancels_racing_the_dispatcher_leave_each_job_sent_once_or_cancelled(tmp_path: Path) -> None:
    # The schedules played every second, so the dispatcher's runs fall among the cancels.
    stack = start_stack(tmp_path, {"HERALD_LOCAL_SCHEDULE_SECONDS": "1"})
    try:
        tenant = new_tenant(stack)
        jobs = [schedule(tenant, address(f"race{index}"), 4)["jobId"] for index in range(20)]
        with ThreadPoolExecutor(10) as pool:
            answers = list(
                pool.map(lambda job_id: tenant.call("POST", f"/notifications/jobs/{job_id}/cancel"), jobs)
            )
        assert {answer.status_code for answer in answers} <= {200, 409}
        won = {job_id for job_id, answer in zip(jobs, answers, strict=True) if answer.status_code == 200}
        for job_id in jobs:
            if job_id in won:
                continue
            assert finished_job_within(tenant, job_id, 90)["status"] == "completed"
        time.sleep(5)  # long enough for a second copy of any message to arrive
        for job_id in jobs:
            sent = sandbox(stack, "messages", jobId=job_id)
            if job_id in won:
                assert (tenant.job(job_id)["status"], sent) == ("cancelled", [])
            else:
                assert len(sent) == 1
    finally:
        stack.stop_cleanly()
