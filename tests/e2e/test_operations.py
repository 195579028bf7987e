"""Operations end to end, through a local stack of their own (its alarms and schedules sped up): a
provider outage dead-letters a job, which reaches Slack once with the alarm's transition, shows in
``herald dlq list`` and is delivered by ``herald dlq redrive`` once the provider is back; a
rejected recipient fails without a dead-letter copy; a job whose enqueue and FAILED-mark both failed
is picked up by the sweeper."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from herald_harness.running_stack import RunningStack, start_stack
from herald_harness.tenants import HTTP_TIMEOUT, new_tenant
from herald_local.config import AWS_CALLS_DIR_NAME, FAULTS_FILE_NAME, LOG_FILE_NAME
from tests.e2e.clients import (
    DeadLetterQueue,
    address,
    email,
    finished_job,
    handling_ended,
    sandbox,
    wait_for,
)
from tests.support.least_privilege import keep_calls

pytestmark = pytest.mark.e2e

DLQ_ALARM = "herald-local-dlq-not-empty"
# Alarms evaluated every second, the sweeper every 3 s, acting on jobs quiet for 6 s.
SPED_UP = {
    "HERALD_LOCAL_ALARM_SECONDS": "1",
    "HERALD_LOCAL_SCHEDULE_SECONDS": "3",
    "HERALD_LOCAL_STUCK_JOB_SECONDS": "6",
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    running = start_stack(tmp_path_factory.mktemp("herald-ops"), SPED_UP)
    yield running
    running.stop_cleanly()
    keep_calls(running.state_dir / AWS_CALLS_DIR_NAME)


def slack(stack: RunningStack) -> list[dict[str, Any]]:
    return sandbox(stack, "slack")


def slack_texts(stack: RunningStack) -> list[str]:
    return [str(message["text"]) for message in slack(stack)]


def outage(stack: RunningStack, status: int | None) -> None:
    url = f"{stack.sandbox_url}/_sandbox/outage"
    answer = (
        requests.delete(url, timeout=HTTP_TIMEOUT)
        if status is None
        else requests.put(url, json={"status": status}, timeout=HTTP_TIMEOUT)
    )
    answer.raise_for_status()


def cli_json(stack: RunningStack, *args: str) -> Any:
    finished = stack.herald(*args, "--json")
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout)


def test_a_job_that_exhausts_its_attempts_alerts_once_and_is_redriven_once_the_provider_recovers(
    stack: RunningStack,
) -> None:
    tenant = new_tenant(stack, ["SENDGRID"])
    outage(stack, 503)
    try:
        job_id = tenant.send("email", email(address("ada")))
        failed = finished_job(tenant, job_id)
    finally:
        outage(stack, None)
    assert (failed["status"], failed["attempts"]) == ("failed", 3)

    dead_letters = DeadLetterQueue(stack)
    [copy] = wait_for(lambda: dead_letters.copies(job_id), "the dead-letter copy", timeout=20)
    assert (copy["tenantId"], copy["attempts"], copy["error"]) == (
        tenant.tenant_id,
        3,
        failed["errorMessage"],
    )
    wait_for(lambda: f"ALARM: {DLQ_ALARM}" in slack_texts(stack), "the alarm in Slack", timeout=30)
    # The copy and the job's alert were sent by the last attempt's handling, before it ended.
    wait_for(lambda: handling_ended(stack, job_id, "failed"), "the last attempt's handling to end")
    wait_for(lambda: any(job_id in text for text in slack_texts(stack)), "the job's alert in Slack")
    texts = slack_texts(stack)
    assert [text for text in texts if job_id in text] == [
        f"Job {job_id} dead-lettered: {failed['errorMessage']}"
    ]
    assert texts.count(f"ALARM: {DLQ_ALARM}") == 1
    assert len(dead_letters.copies(job_id)) == 1

    listed = cli_json(stack, "dlq", "list")
    assert [(row["jobId"], row["kind"], row["tenantId"]) for row in listed] == [
        (job_id, "copy", tenant.tenant_id)
    ]

    redriven = cli_json(stack, "dlq", "redrive", "--job", job_id)

    assert [(row["jobId"], row["outcome"]) for row in redriven] == [(job_id, "redriven")]
    delivered = finished_job(tenant, job_id)
    assert (delivered["status"], delivered["attempts"]) == ("completed", 4)
    assert [message["jobId"] for message in sandbox(stack, "messages", jobId=job_id)] == [job_id]
    assert cli_json(stack, "dlq", "list") == []
    wait_for(lambda: f"OK: {DLQ_ALARM}" in slack_texts(stack), "the alarm's recovery in Slack", timeout=30)


def test_an_email_to_a_rejected_recipient_fails_without_a_dead_letter_copy_or_alert(
    stack: RunningStack,
) -> None:
    tenant = new_tenant(stack, ["SENDGRID"])
    metrics_before = _log(stack).count('"FailedByTenant"')

    job_id = tenant.send("email", email(address("fail-400")))
    job = finished_job(tenant, job_id)

    assert (job["status"], job["attempts"]) == ("failed", 1)
    assert "HTTP 400" in job["errorMessage"]
    # A copy or an alert would have been sent by the handling, before it ended.
    wait_for(lambda: handling_ended(stack, job_id, "failed"), "the attempt's handling to end")
    assert DeadLetterQueue(stack).copies(job_id) == []
    assert not [text for text in slack_texts(stack) if job_id in text]
    # Counted apart, so the dead-letter alarm keeps meaning "an operator must act".
    wait_for(lambda: _log(stack).count('"FailedByTenant"') > metrics_before, "the FailedByTenant metric")


def test_a_job_whose_enqueue_and_failed_mark_both_failed_is_delivered_by_the_sweeper(
    stack: RunningStack,
) -> None:
    tenant = new_tenant(stack, ["SENDGRID"])
    to = address("lost")
    # The queue refuses the message and the table refuses the FAILED mark (but the request's write).
    _faults(
        stack,
        [
            {"function": "ApiFunction", "action": "sqs:SendMessage"},
            {"function": "ApiFunction", "action": "dynamodb:UpdateItem", "match": '"STATUS"'},
        ],
    )
    try:
        answer = tenant.call("POST", "/notifications/email", email(to))
    finally:
        _faults(stack, None)

    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["code"] == "queue_unavailable"
    job_id = body["jobId"]
    assert tenant.job(job_id)["status"] == "pending"

    job = finished_job(tenant, job_id)

    assert (job["status"], job["attempts"]) == ("completed", 1)
    assert [message["recipient"] for message in sandbox(stack, "messages", jobId=job_id)] == [to]
    requeued = [line for line in _log(stack).splitlines() if "stuck job re-queued" in line and job_id in line]
    assert len(requeued) == 1


def _log(stack: RunningStack) -> str:
    return (stack.state_dir / LOG_FILE_NAME).read_text(errors="replace")


def _faults(stack: RunningStack, rules: list[dict[str, str]] | None) -> None:
    path: Path = stack.state_dir / FAULTS_FILE_NAME
    if rules is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(json.dumps(rules))
