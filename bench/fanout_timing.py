"""Time from an event's acceptance to its last subscription's first attempt, through the local stack.

For fan-outs of 1, 10 and 1 000 subscriptions of one unlimited tenant each, pointing at the sandbox's
hook receiver, which answers 200 and records every arrival with its time. At most ``OVER_HTTP`` of
a tenant's subscriptions are registered over HTTP (``POST /api/v1/subscriptions``, by concurrent
clients: some 0.3 s each on this machine, the API's one table and KMS behind the local stack's one
moto server); the rest of the 1 000 are copies of those written straight into the stack's table,
each with an id of its own and its original's sealed secret (so its original's data key: the
workers open 100 distinct secrets, not 1 000). Each run sends
one 1 KB event (``POST /api/v1/events``) and waits until every subscription has received it: the
figure is the last first arrival (the sandbox's ``receivedAt``) minus the moment the 202 came back
(the client's clock; both run on this machine). The small fan-outs run a few times (median), the
1 000 once.
"""

from __future__ import annotations

import secrets
import statistics
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import requests

from bench.fanout import EVENT_TYPE, SCHEMA
from bench.local_stack import local_stack, unlimited_tenant
from bench.samples import ORDER_EVENT
from herald_harness.running_stack import RunningStack

# Fan-out width -> runs (median of those).
WIDTHS = {1: 5, 10: 5, 1000: 1}
REGISTERING_CLIENTS = 8
OVER_HTTP = 100
ARRIVAL_TIMEOUT_SECONDS = 600
POLL_SECONDS = 0.2
ACCEPT_RETRIES = 4
ACCEPT_RETRY_SECONDS = 5

Advance = Callable[[str], None]


def _timestamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _page_timeouts(stack: RunningStack) -> int:
    """FanoutFunction invocations the stack's log shows timed out so far (their pages come back
    after the queue's visibility timeout and write only what is missing)."""
    lines = stack.log_file.read_text(errors="replace").splitlines()
    return sum(1 for line in lines if line.startswith("FanoutFunction") and "Task timed out" in line)


def _copy(item: dict[str, Any]) -> dict[str, Any]:
    """A subscription item under a new id (every string attribute that named the old one)."""
    old, new = item["sk"]["S"], f"sub_{secrets.token_hex(8)}"
    return {
        name: {"S": value["S"].replace(old, new)} if "S" in value else value for name, value in item.items()
    }


class FanoutClient:
    def __init__(self, stack: RunningStack) -> None:
        self._stack = stack
        self._session = requests.Session()

    def call(self, key: str, method: str, path: str, body: Any = None) -> requests.Response:
        return requests.request(
            method, f"{self._stack.api_root}{path}", json=body, headers={"X-API-Key": key}, timeout=60
        )

    def subscribed(self, width: int) -> tuple[str, str, float]:
        """A tenant with ``width`` subscriptions to the event type: (API key, hook name, seconds
        the registrations took)."""
        tenant_id, key = unlimited_tenant(self._stack, f"Fanout{width}")
        created = self.call(key, "POST", "/event-types", {"name": EVENT_TYPE, "schema": SCHEMA})
        assert created.status_code == 201, created.text
        hook = f"fanout-{width}"
        body = {"url": f"{self._stack.sandbox_url}/hooks/{hook}", "eventTypes": [EVENT_TYPE]}

        def register(_: int) -> None:
            answer = self.call(key, "POST", "/subscriptions", body)
            assert answer.status_code == 201, answer.text

        started = time.perf_counter()
        with ThreadPoolExecutor(REGISTERING_CLIENTS) as pool:
            list(pool.map(register, range(min(width, OVER_HTTP))))
        if width > OVER_HTTP:
            self._copies(tenant_id, width - OVER_HTTP)
        return key, hook, time.perf_counter() - started

    def _copies(self, tenant_id: str, count: int) -> None:
        """``count`` more subscriptions: copies of those registered, under new ids."""
        dynamodb, table = self._stack.boto3_client("dynamodb"), self._stack.outputs["TableName"]
        registered = dynamodb.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": f"SUBSCRIPTIONS#{tenant_id}"}},
            ConsistentRead=True,
        )["Items"]
        originals = [item for item in registered if not item["sk"]["S"].endswith("#BREAKER")]
        copies = [_copy(originals[index % len(originals)]) for index in range(count)]
        for start in range(0, len(copies), 25):
            batch = [{"PutRequest": {"Item": item}} for item in copies[start : start + 25]]
            unprocessed = dynamodb.batch_write_item(RequestItems={table: batch})["UnprocessedItems"]
            assert not unprocessed, unprocessed

    def first_arrivals(self, hook: str, event_id: str) -> dict[str, float]:
        """Each delivery job's first arrival at the hook (epoch seconds), by job id."""
        answer = self._session.get(
            f"{self._stack.sandbox_url}/_sandbox/hooks", params={"name": hook}, timeout=60
        )
        answer.raise_for_status()
        first: dict[str, float] = {}
        for hook_call in answer.json():
            if (hook_call.get("json") or {}).get("id") != event_id:
                continue
            arrived = _timestamp(hook_call["receivedAt"])
            first[hook_call["jobId"]] = min(arrived, first.get(hook_call["jobId"], arrived))
        return first

    def accept(self, key: str) -> tuple[requests.Response, int]:
        """The event's 202, and how many 503s came before it (the same request again under its
        idempotency key: on a busy machine, the accept's read of 1 000 subscriptions can outlast the
        clients' read timeout in moto, which serialises every item it answers in a few ms)."""
        body = {"type": EVENT_TYPE, "payload": ORDER_EVENT, "idempotencyKey": uuid.uuid4().hex}
        answer, refused = self.call(key, "POST", "/events", body), 0
        while answer.status_code == 503 and refused < ACCEPT_RETRIES:
            time.sleep(ACCEPT_RETRY_SECONDS)
            answer, refused = self.call(key, "POST", "/events", body), refused + 1
        assert answer.status_code == 202, answer.text
        return answer, refused

    def one_run(self, key: str, hook: str, width: int) -> tuple[float, int]:
        """Seconds from the 202 to the last subscription's first attempt, and the 503s before it."""
        answer, refused = self.accept(key)
        accepted = time.time()
        assert answer.json()["data"]["subscriptions"] == width, answer.text
        event_id = answer.json()["data"]["eventId"]
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
        while len(arrivals := self.first_arrivals(hook, event_id)) < width:
            assert time.monotonic() < deadline, f"{len(arrivals)} of {width} subscriptions reached"
            time.sleep(POLL_SECONDS)
        return max(arrivals.values()) - accepted, refused


def measure_fanout_timing(advance: Advance, widths: dict[int, int] | None = None) -> dict[str, Any]:
    """Per width: each run's seconds, their median, and how long the registrations took."""
    measured: dict[str, Any] = {}
    with local_stack() as stack:
        client = FanoutClient(stack)
        for width, runs in (widths or WIDTHS).items():
            advance(f"register {width} subscriptions over HTTP")
            key, hook, registering = client.subscribed(width)
            seconds, refused, timeouts = [], 0, _page_timeouts(stack)
            for run in range(runs):
                advance(f"fan-out of {width}, run {run + 1} of {runs}")
                took, refusals = client.one_run(key, hook, width)
                seconds.append(took)
                refused += refusals
            measured[str(width)] = {
                "subscriptions": width,
                "runs": seconds,
                "median_seconds": statistics.median(seconds),
                "registration_seconds": registering,
                "accept_503s": refused,
                "fanout_page_timeouts": _page_timeouts(stack) - timeouts,
                "registered_by": f"POST /api/v1/subscriptions ({REGISTERING_CLIENTS} clients)"
                + (f" for {OVER_HTTP}, copies in the table for the rest" if width > OVER_HTTP else ""),
            }
    return measured


def timing_steps(widths: dict[int, int] | None = None) -> int:
    return sum(1 + runs for runs in (widths or WIDTHS).values())
