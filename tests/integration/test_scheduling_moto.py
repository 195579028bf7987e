"""Scheduled sends through the real ApiFunction and DispatcherFunction against moto resources built
from template.yaml: the scheduled status item and its due-time index entry, the dispatch with the
SQS delay left, cancel, and cancel racing the dispatch."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from herald.domain.clock import iso
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

EMAIL = {"to": "user@example.com", "subject": "Later", "body": "<p>Hi</p>"}
SCHEDULED_EVENT = json.loads(
    (Path(__file__).parents[2] / "events" / "dispatcher" / "scheduled.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


@pytest.fixture(autouse=True)
def _empty_queues(herald: HeraldInMoto) -> None:
    herald.drain_queues()


def ahead(seconds: float) -> str:
    return iso(datetime.now(UTC) + timedelta(seconds=seconds))


def schedule(herald: HeraldInMoto, key: str, seconds: float, **fields: Any) -> dict[str, Any]:
    answer = herald.api(
        "POST", "/api/v1/notifications/email", {**EMAIL, "sendAt": ahead(seconds), **fields}, key=key
    )
    assert answer.status == 202, answer.body
    data: dict[str, Any] = answer.data
    return data


def waiting_messages(herald: HeraldInMoto, output: str) -> int:
    """Messages in the queue, delayed ones included (a receive does not see those)."""
    attributes = client("sqs").get_queue_attributes(
        QueueUrl=herald.queue_url(output),
        AttributeNames=["ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessages"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessagesDelayed"]) + int(
        attributes["ApproximateNumberOfMessages"]
    )


def usage(herald: HeraldInMoto, key: str) -> int:
    return int(herald.api("GET", "/api/v1/account", key=key).data["usage"]["total"])


def status_of(herald: HeraldInMoto, key: str, job_id: str) -> str:
    state = herald.job_state(herald.tenant_of(key), job_id)
    assert state is not None
    return state.status.value


def dispatch(herald: HeraldInMoto) -> dict[str, Any]:
    report: dict[str, Any] = herald.invoke_function("DispatcherFunction", SCHEDULED_EVENT)
    return report


def test_a_scheduled_job_waits_unqueued_until_the_dispatcher_queues_it_with_the_delay_left(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    # Its own queue (low): the message stays there, delayed, after the test.
    accepted = schedule(herald, key, 90, priority=10)
    assert accepted["status"] == "scheduled"
    assert waiting_messages(herald, "EmailLowQueueUrl") == 0
    job = herald.api("GET", f"/api/v1/notifications/jobs/{accepted['jobId']}", key=key).data
    assert (job["status"], job["sendAt"]) == ("scheduled", accepted["sendAt"])
    listed = herald.api("GET", "/api/v1/notifications/jobs?status=scheduled", key=key).data
    assert [entry["id"] for entry in listed["data"]] == [accepted["jobId"]]

    assert dispatch(herald)["dispatched"] >= 1
    assert herald.api("GET", f"/api/v1/notifications/jobs/{accepted['jobId']}", key=key).data["status"] == (
        "pending"
    )
    # Delayed by SQS until its time: nothing a worker could receive yet.
    assert herald.queued("EmailLowQueueUrl") == []
    assert waiting_messages(herald, "EmailLowQueueUrl") == 1


def test_a_job_due_after_the_horizon_is_left_for_a_later_run(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    accepted = schedule(herald, key, 3600)
    dispatch(herald)
    assert status_of(herald, key, accepted["jobId"]) == "scheduled"


def test_cancel_ends_a_scheduled_job_returns_its_usage_and_a_second_cancel_is_409(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    accepted = schedule(herald, key, 60)
    assert usage(herald, key) == 1
    answer = herald.api("POST", f"/api/v1/notifications/jobs/{accepted['jobId']}/cancel", key=key)
    assert answer.status == 200
    assert (answer.data["status"], answer.data["sendAt"]) == ("cancelled", accepted["sendAt"])
    assert usage(herald, key) == 0
    herald.tally()  # the cancel's status change, as TallyFunction reads it from the table's stream
    listed = herald.api("GET", "/api/v1/notifications/jobs?status=cancelled", key=key).data
    assert [entry["id"] for entry in listed["data"]] == [accepted["jobId"]]
    # Counted among its day's jobs, as cancelled: the listing totals agree with what they list.
    assert listed["pagination"]["total"] == 1
    everything = herald.api("GET", "/api/v1/notifications/jobs", key=key).data
    assert (len(everything["data"]), everything["pagination"]["total"]) == (1, 1)
    again = herald.api("POST", f"/api/v1/notifications/jobs/{accepted['jobId']}/cancel", key=key)
    assert (again.status, again.body["code"]) == (409, "job_not_cancellable")
    assert "this one is cancelled" in again.body["error"]
    dispatch(herald)
    assert status_of(herald, key, accepted["jobId"]) == "cancelled"


def test_another_tenant_cannot_cancel_a_job_and_sees_404(herald: HeraldInMoto) -> None:
    owner, intruder = herald.new_key(), herald.new_key()
    accepted = schedule(herald, owner, 600)
    answer = herald.api("POST", f"/api/v1/notifications/jobs/{accepted['jobId']}/cancel", key=intruder)
    assert (answer.status, answer.body["code"]) == (404, "job_not_found")
    assert status_of(herald, owner, accepted["jobId"]) == "scheduled"


def test_cancels_racing_the_dispatch_each_job_is_either_queued_once_or_cancelled(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    # Their own queue (critical), so that the count of its messages is theirs.
    jobs = [schedule(herald, key, 30, priority=1)["jobId"] for _ in range(20)]

    def cancel(job_id: str) -> int:
        return herald.api("POST", f"/api/v1/notifications/jobs/{job_id}/cancel", key=key).status

    # The dispatcher runs in the API function's environment here (both read the same settings):
    # switching the process's environment under the concurrent requests would rebuild it mid-way.
    with ThreadPoolExecutor(8) as pool:
        dispatched = pool.submit(herald.invoke, "DispatcherFunction", SCHEDULED_EVENT)
        statuses = list(pool.map(cancel, jobs))
        report = dispatched.result()
    assert set(statuses) <= {200, 409}
    cancelled = {job for job, status in zip(jobs, statuses, strict=True) if status == 200}
    final = {job: status_of(herald, key, job) for job in jobs}
    assert {job for job, status in final.items() if status == "cancelled"} == cancelled
    assert all(status == "pending" for job, status in final.items() if job not in cancelled)
    assert (
        report["dispatched"]
        == len(jobs) - len(cancelled)
        == waiting_messages(herald, "EmailCriticalQueueUrl")
    )
    assert usage(herald, key) == len(jobs) - len(cancelled)
