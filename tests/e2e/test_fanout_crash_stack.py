"""One event to many subscriptions while the fan-out's workers are killed mid-way: every subscription
still receives the event exactly once (no delivery lost, none sent twice).

On a stack of the test's own: the killed environments' pages come back only after the fan-out
queue's visibility timeout (60 s), which would hold up other tests' events on the shared stack."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from herald.adapters.store.models import JOB_SK, job_pk
from herald.domain.events import delivery_job_id
from herald_harness.tenants import new_tenant
from herald_local.config import AWS_CALLS_DIR_NAME
from tests.e2e.clients import sandbox, wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack
    from herald_harness.tenants import Tenant

pytestmark = pytest.mark.e2e

# Two fan-out pages of 100: sized for the whole suite's run (the bench fans out to 1 000).
SUBSCRIPTIONS = 200
# Subscriptions created side by side, as many as the local API has environments.
CREATORS = 4
# The killed pages come back after the 60 s visibility timeout, on a busy 2-core machine.
SETTLE_TIMEOUT_SECONDS = 600.0
START_LINE = "| START RequestId: "
END_LINE = "| END RequestId: "
BATCH_GET = 100


def fanout_runners(stack: RunningStack) -> set[int]:
    """The PIDs of this stack's FanoutFunction environments, found by their command line: the
    function's name and this stack's own folder (other stacks' runners have the same name)."""
    name = stack.state["functions"]["FanoutFunction"]["name"]
    calls_dir = str(stack.state_dir / AWS_CALLS_DIR_NAME)
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        args = [part.decode(errors="replace") for part in argv]
        if (
            "--function-name" in args
            and args[args.index("--function-name") + 1] == name
            and calls_dir in args
        ):
            found.add(int(entry.name))
    return found


def kill(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(pid, signal.SIGKILL)


def fanout_lines(stack: RunningStack, marker: str) -> list[str]:
    """The FanoutFunction environments' log lines with ``marker`` (the stack's log says each run)."""
    lines = stack.log_file.read_text(errors="replace").splitlines()
    return [line for line in lines if line.startswith("FanoutFunction") and marker in line]


def written_jobs(stack: RunningStack, tenant_id: str, job_ids: list[str]) -> int:
    """How many of the delivery jobs the table holds (the fan-out writes each before queueing it)."""
    dynamodb = stack.boto3_client("dynamodb")
    table = stack.outputs["TableName"]
    found = 0
    for start in range(0, len(job_ids), BATCH_GET):
        keys = [
            {"pk": {"S": job_pk(tenant_id, job_id)}, "sk": {"S": JOB_SK}}
            for job_id in job_ids[start : start + BATCH_GET]
        ]
        request: dict[str, Any] = {
            table: {"Keys": keys, "ProjectionExpression": "pk", "ConsistentRead": True}
        }
        while request:
            answer = dynamodb.batch_get_item(RequestItems=request)
            found += len(answer["Responses"].get(table, []))
            request = answer.get("UnprocessedKeys") or {}
    return found


def more_written(stack: RunningStack, tenant_id: str, job_ids: list[str], before: int) -> Callable[[], bool]:
    """Whether a page run has written jobs since there were ``before`` of them."""
    return lambda: written_jobs(stack, tenant_id, job_ids) > before


def unfinished_runs(stack: RunningStack) -> set[str]:
    """The request ids of the runs that started and never ended: those the kills stopped mid-way."""
    started = {line.split(START_LINE)[1].split()[0] for line in fanout_lines(stack, START_LINE)}
    ended = {line.split(END_LINE)[1].split()[0] for line in fanout_lines(stack, END_LINE)}
    return started - ended


def hooks_of(stack: RunningStack, prefix: str) -> list[dict[str, Any]]:
    return [hook for hook in sandbox(stack, "hooks") if hook["name"].startswith(prefix)]


def queues_idle(stack: RunningStack) -> bool:
    """Nothing waiting, in flight or delayed on any of the stack's queues but the dead-letter ones."""
    sqs = stack.boto3_client("sqs")
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    names.append("ApproximateNumberOfMessagesDelayed")
    for url in sqs.list_queues().get("QueueUrls", []):
        if "dlq" in url or "dead" in url:
            continue
        counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)["Attributes"]
        if any(int(counts.get(name, "0")) for name in names):
            return False
    return True


def subscribe(stack: RunningStack, tenant: Tenant, name: str) -> tuple[str, str]:
    """A subscription to the hook ``name``: (its id, the name)."""
    body = {"url": f"{stack.sandbox_url}/hooks/{name}", "eventTypes": ["order.paid"]}
    created = tenant.call("POST", "/subscriptions", body)
    assert created.status_code == 201, created.text
    return str(created.json()["data"]["id"]), name


def measure(record_property: Callable[[str, object], None], name: str, value: float) -> None:
    record_property(name, round(value, 1))
    print(f"\n{name} {value:.1f}")


def event_deliveries(tenant: Tenant, event_id: str) -> list[dict[str, Any]]:
    """Every delivery GET /events/{id} shows, page after page."""
    shown: list[dict[str, Any]] = []
    cursor = ""
    while True:
        answer = tenant.call("GET", f"/events/{event_id}" + (f"?cursor={cursor}" if cursor else ""))
        assert answer.status_code == 200, answer.text
        document = answer.json()["data"]
        shown += document["deliveries"]
        cursor = document["nextCursor"]
        if not cursor:
            return shown


def test_a_fan_out_killed_twice_delivers_to_every_subscription_exactly_once(
    fresh_stack: RunningStack, record_property: Callable[[str, object], None]
) -> None:
    stack = fresh_stack
    tenant = new_tenant(stack, [])
    answer = tenant.call("POST", "/event-types", {"name": "order.paid"})
    assert answer.status_code == 201, answer.text
    run = uuid.uuid4().hex[:10]
    prefix = f"crash-{run}-"
    started = time.monotonic()
    with ThreadPoolExecutor(CREATORS) as pool:
        names = dict(
            pool.map(lambda number: subscribe(stack, tenant, f"{prefix}{number:04d}"), range(SUBSCRIPTIONS))
        )
    # Measured, not asserted: what creating them over HTTP takes, and where each kill landed.
    measure(record_property, "subscriptions_created_seconds", time.monotonic() - started)

    sent_at = time.monotonic()
    sent = tenant.call("POST", "/events", {"type": "order.paid", "payload": {"orderId": "ord_1"}})
    assert sent.status_code == 202, sent.text
    assert sent.json()["data"]["subscriptions"] == SUBSCRIPTIONS
    event_id = sent.json()["data"]["eventId"]

    # The crash: as soon as the page runs have written a first job (their GetItem and Query done,
    # their puts under way), every FanoutFunction environment is killed: one per page run in flight.
    # How far the pages had come is measured, not asserted (a fast machine may finish a page first).
    jobs = [delivery_job_id(tenant.tenant_id, event_id, sub_id) for sub_id in names]
    wait_for(
        more_written(stack, tenant.tenant_id, jobs, 0), "the page runs to write jobs", SETTLE_TIMEOUT_SECONDS
    )
    runners = fanout_runners(stack)
    kill(runners)
    assert runners
    measure(record_property, "workers_killed", len(runners))
    measure(record_property, "jobs_written_at_the_kill", written_jobs(stack, tenant.tenant_id, jobs))

    # In the end: every subscription once, every webhook-id once, and nothing left to run.
    wait_for(
        lambda: len(hooks_of(stack, prefix)) >= SUBSCRIPTIONS,
        "every subscription's delivery",
        SETTLE_TIMEOUT_SECONDS,
    )
    wait_for(lambda: queues_idle(stack), "the queues to settle", SETTLE_TIMEOUT_SECONDS)
    hooks = hooks_of(stack, prefix)
    assert len(hooks) == SUBSCRIPTIONS
    assert sorted(hook["name"] for hook in hooks) == sorted(names.values())
    assert len({hook["jobId"] for hook in hooks}) == SUBSCRIPTIONS
    assert {hook["json"]["id"] for hook in hooks} == {event_id}
    shown = event_deliveries(tenant, event_id)
    assert {delivery["subscriptionId"] for delivery in shown} == set(names)
    assert {delivery["jobId"] for delivery in shown} == {hook["jobId"] for hook in hooks}
    assert {(delivery["status"], delivery["attempts"]) for delivery in shown} == {("completed", 1)}
    measure(record_property, "event_to_settled_seconds", time.monotonic() - sent_at)
    measure(record_property, "page_runs_killed_before_their_end", len(unfinished_runs(stack)))
