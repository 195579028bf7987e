"""Scheduled sends end to end: a job with a sendAt is sent by the local stack's own DispatcherFunction
(played on the template's schedule) never before its time and within a minute after it; a cancel
stops it; cancels racing the dispatch leave each job sent once or cancelled, never both.

The cancels run on a stack whose schedules do not fire by themselves: the tests run the dispatcher
when they mean it to race or follow a cancel, instead of hoping that a cancel comes before (or
during) a dispatcher run that takes every job due within its horizon."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from herald_harness.running_stack import RunningStack, start_stack
from herald_harness.tenants import Tenant, new_tenant
from herald_local.config import AWS_CALLS_DIR_NAME
from tests.e2e.clients import address, email, sandbox, wait_for
from tests.support.least_privilege import keep_calls

pytestmark = pytest.mark.e2e

# The dispatcher runs every minute; a job starts at most that long (plus the pick-up) after its time.
START_BOUND_SECONDS = 60.0
# Every schedule fires a day after the stack started, so in these tests only when they run it.
ON_DEMAND = {"HERALD_LOCAL_SCHEDULE_SECONDS": "86400"}
# Ahead of acceptance even when the request takes long on a busy machine (a sendAt already past is
# sent at once), and within the dispatcher's horizon, so that one run takes the job.
SCHEDULED_AHEAD_SECONDS = 30


@pytest.fixture(scope="module")
def on_demand(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    stack = start_stack(tmp_path_factory.mktemp("herald-dispatch"), ON_DEMAND)
    yield stack
    stack.stop_cleanly()
    keep_calls(stack.state_dir / AWS_CALLS_DIR_NAME)


def dispatch(stack: RunningStack) -> dict[str, int]:
    """One run of DispatcherFunction, as its schedule starts it: its report."""
    report: dict[str, int] = json.loads(stack.cli("schedules", "run", "DispatcherFunction"))
    return report


def queues_drained(stack: RunningStack) -> bool:
    """No work queue holds a message, visible, in flight or delayed: every job queued so far was
    handled, and none can come back."""
    sqs = stack.boto3_client("sqs")
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    names.append("ApproximateNumberOfMessagesDelayed")
    for output, url in stack.outputs.items():
        if output.endswith("QueueUrl") and "DeadLetter" not in output:
            attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
            if any(int(attributes[name]) for name in names):
                return False
    return True


def cancel(tenant: Tenant, job_id: str) -> requests.Response:
    return tenant.call("POST", f"/notifications/jobs/{job_id}/cancel")


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


def test_a_cancelled_job_is_never_sent_and_leaves_the_usage(on_demand: RunningStack) -> None:
    tenant = new_tenant(on_demand)
    accepted = schedule(tenant, address("cancelled"), SCHEDULED_AHEAD_SECONDS)
    used = tenant.call("GET", "/account").json()["data"]["usage"]["total"]

    answer = cancel(tenant, accepted["jobId"])

    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["status"] == "cancelled"
    assert tenant.call("GET", "/account").json()["data"]["usage"]["total"] == used - 1
    # A dispatcher run now would queue it (its sendAt lies within the run's horizon), delayed until
    # its time; the run leaves it, and no queue holds a message, delayed or not.
    dispatch(on_demand)
    wait_for(lambda: queues_drained(on_demand), "the work queues to drain")
    assert tenant.job(accepted["jobId"])["status"] == "cancelled"
    assert sandbox(on_demand, "messages", jobId=accepted["jobId"]) == []
    again = cancel(tenant, accepted["jobId"])
    assert (again.status_code, again.json()["code"]) == (409, "job_not_cancellable")


def test_cancels_racing_the_dispatcher_leave_each_job_sent_once_or_cancelled(on_demand: RunningStack) -> None:
    tenant = new_tenant(on_demand)
    jobs = [
        schedule(tenant, address(f"race{index}"), SCHEDULED_AHEAD_SECONDS)["jobId"] for index in range(20)
    ]
    # All twenty are still scheduled, however long accepting them took. One dispatcher run takes
    # every one it reaches before its cancel; the cancels start once the run has begun.
    offset = on_demand.log_file.stat().st_size
    with ThreadPoolExecutor(11) as pool:
        run = pool.submit(dispatch, on_demand)
        wait_for(lambda: run.done() or dispatcher_started(on_demand, offset), "the dispatcher's run to start")
        answers = list(pool.map(lambda job_id: cancel(tenant, job_id), jobs))
        report = run.result()

    assert {answer.status_code for answer in answers} <= {200, 409}
    won = {job_id for job_id, answer in zip(jobs, answers, strict=True) if answer.status_code == 200}
    assert (report["dispatched"], report["errors"]) == (len(jobs) - len(won), 0)
    # Every message the run queued was handled and deleted: no copy of one can come later.
    wait_for(lambda: queues_drained(on_demand), "the work queues to drain", timeout=90)
    for job_id in jobs:
        sent = sandbox(on_demand, "messages", jobId=job_id)
        if job_id in won:
            assert (tenant.job(job_id)["status"], sent) == ("cancelled", [])
        else:
            assert tenant.job(job_id)["status"] == "completed"
            assert len(sent) == 1


def dispatcher_started(stack: RunningStack, offset: int) -> bool:
    """Whether a DispatcherFunction invocation began after ``offset`` of the stack's log."""
    with stack.log_file.open("rb") as log:
        log.seek(offset)
        return any(
            line.startswith("DispatcherFunction") and "START RequestId" in line
            for line in log.read().decode(errors="replace").splitlines()
        )
