"""What the end-to-end tests do as a client and an operator would, beside the harness's tenants
(herald_harness.tenants): waiting for jobs, the provider sandbox's views, and a look into the
table and the dead-letter queue."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
import requests

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT, Tenant
from tests.e2e.conftest import wait_for as shared_wait_for

# Three attempts with ~2 s and ~4 s between them, plus the pollers' pick-up: well inside this.
JOB_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.1
FINISHED = ("completed", "failed")
# A burst of requests starts at most this far into a minute (below), leaving it the rest.
BURST_LATEST_SECOND = 40
BURST_ATTEMPTS = 3

Prepared = TypeVar("Prepared")
Answered = TypeVar("Answered")


def wait_for(check: Callable[[], Any], what: str, timeout: float = JOB_TIMEOUT_SECONDS) -> Any:
    return shared_wait_for(check, what, timeout=timeout, interval=POLL_SECONDS)


def finished_job(tenant: Tenant, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = wait_for(
        lambda: (job := tenant.job(job_id))["status"] in FINISHED and job, f"job {job_id} to finish"
    )
    return job


def table_items(stack: RunningStack) -> list[dict[str, Any]]:
    """Every item of the stack's table as the raw table holds it (every page of a scan): a shared
    stack's table also holds other tests' items, jobs with deflated requests among them."""
    dynamodb = stack.boto3_client("dynamodb")
    items: list[dict[str, Any]] = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=stack.outputs["TableName"]):
        items.extend(page["Items"])
    return items


def handled_lines(stack: RunningStack, job_id: str) -> list[dict[str, Any]]:
    """The workers' "job handled" log lines of a job, oldest first (each line of the stack's log is
    ``<function label> | <the function's JSON line>``)."""
    lines = []
    for line in stack.log_file.read_text(errors="replace").splitlines():
        _, _, logged = line.partition("| ")
        if '"job handled"' in logged and job_id in logged:
            lines.append(json.loads(logged))
    return [line for line in lines if line.get("job_id") == job_id]


def handling_ended(stack: RunningStack, job_id: str, result: str) -> bool:
    """Whether a worker's handling of the job ended with ``result`` (``failed``, ``completed`` ...):
    whatever that handling wrote or sent (the job, a dead-letter copy, an alert) was done before."""
    return any(line["result"] == result for line in handled_lines(stack, job_id))


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


def _minute() -> int:
    return int(time.time() // 60)


def in_one_minute(
    prepare: Callable[[], Prepared], burst: Callable[[Prepared], Answered]
) -> tuple[Prepared, Answered]:
    """``burst`` on what ``prepare`` made, sent and answered within one calendar minute. Rate limits
    count per minute of the clock this machine and the local stack share, so a burst's answers are
    judged only if it began and ended in the same minute; one that crossed into the next (a slow
    machine) is sent again, on a fresh ``prepare``."""
    for _ in range(BURST_ATTEMPTS):
        prepared = prepare()
        wait_for(lambda: time.gmtime().tm_sec <= BURST_LATEST_SECOND, "a minute with room for the burst")
        began = _minute()
        answered = burst(prepared)
        if _minute() == began:
            return prepared, answered
    pytest.fail(f"no burst began and ended within one minute in {BURST_ATTEMPTS} tries")
