"""Throughput of the local stack (``python -m herald_local``) driven over HTTP as clients would,
and moto's own rate for the same AWS calls in the same run: the local ceiling.

N notifications, emails and 1 KB webhooks alternating over every priority, are sent by concurrent
clients for two startup-plan tenants whose rate limit and quota the operator lifted (at 200 a
minute, two tenants would spend most of the run waiting on 429s). Accept latency is the client's
round trip; accept -> completed comes from the job's own timestamps; completions per second
count from the first acceptance to the last completion.

moto's raw rate replays, against the same moto server, the calls one notification's handlers made
(recorded by bench.scenarios) with fresh tenant and job ids, at the same concurrency, with the
event source mapping's receive and batch delete per batch, on a queue no poller reads.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests
from botocore.exceptions import ClientError

from bench.local_stack import local_stack, unlimited_tenant
from bench.samples import ORDER_EMAIL_HTML, ORDER_EVENT
from bench.scenarios import Recorded
from bench.table_meter import UNAPPLIED_WRITES
from herald_harness.running_stack import RunningStack
from herald_local.aws.sdk_calls import call_unobserved
from herald_local.demo import DemoTenant, configure

PRIORITIES = (1, 5, 10)
TENANTS = ("BenchA", "BenchB")
SETTLE_TIMEOUT_SECONDS = 300
# Nothing finished for this long: the rest wait out a visibility timeout (6 x the worker timeout),
# e.g. records a worker reported unstarted because its invocation had too little time left.
STALL_SECONDS = 30
PAGE = 100
REPLAY_QUEUE = "herald-bench-replay"
LIST_TRIES = 10
# Notifications replayed straight against moto: enough for a steady rate.
REPLAYED = 500

Advance = Callable[[str, int], None]


@dataclass(frozen=True)
class Tenant:
    tenant_id: str
    api_key: str


@dataclass(frozen=True)
class Sent:
    tenant: Tenant
    seconds: float
    status: int
    answer: dict[str, Any]

    @property
    def accepted(self) -> bool:
        return self.status == 202

    @property
    def refusal(self) -> str:
        return f"{self.status} {self.answer.get('code')}"


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}

    def rank(share: float) -> float:
        return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]

    return {"p50": rank(0.50), "p95": rank(0.95), "p99": rank(0.99), "max": ordered[-1]}


def _timestamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class Client:
    def __init__(self, stack: RunningStack) -> None:
        self._api = stack.api_root
        self._hook = f"{stack.sandbox_url}/hooks/bench"
        self._local = threading.local()

    def _session(self) -> requests.Session:
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        session: requests.Session = self._local.session
        return session

    def request(self, index: int) -> tuple[str, dict[str, Any]]:
        priority = PRIORITIES[index % len(PRIORITIES)]
        if index % 2 == 0:
            email = {"to": f"user{index}@example.com", "subject": f"bench {index}", "body": ORDER_EMAIL_HTML}
            return "email", {**email, "priority": priority}
        return "webhook", {
            "url": self._hook,
            "payload": {**ORDER_EVENT, "n": index},
            "priority": priority,
        }

    def send(self, tenant: Tenant, index: int) -> Sent:
        route, body = self.request(index)
        started = time.perf_counter()
        answer = self._session().post(
            f"{self._api}/notifications/{route}", json=body, headers={"X-API-Key": tenant.api_key}, timeout=60
        )
        return Sent(tenant, time.perf_counter() - started, answer.status_code, answer.json())

    def jobs(self, tenant: Tenant, **query: Any) -> dict[str, Any]:
        """A page of the tenant's jobs; asked again while the stack is too busy to answer (5xx)."""
        for _ in range(LIST_TRIES):
            answer = self._session().get(
                f"{self._api}/notifications/jobs",
                params=query,
                headers={"X-API-Key": tenant.api_key},
                timeout=60,
            )
            if answer.status_code < 500:
                break
            time.sleep(1)
        assert answer.status_code == 200, answer.text
        listing: dict[str, Any] = answer.json()["data"]
        return listing

    def finished(self, tenant: Tenant) -> int:
        return sum(
            self.jobs(tenant, status=status, limit=1)["pagination"]["total"]
            for status in ("completed", "failed")
        )

    def all_jobs(self, tenant: Tenant) -> Iterator[dict[str, Any]]:
        cursor: str | None = None
        while True:
            listing = self.jobs(tenant, limit=PAGE, **({"cursor": cursor} if cursor else {}))
            yield from listing["data"]
            cursor = listing["pagination"]["nextCursor"]
            if not cursor:
                return


def _new_tenant(stack: RunningStack, name: str) -> Tenant:
    """Unlimited, with the sandbox's provider keys and a signing secret, as the demo tenant has."""
    tenant = Tenant(*unlimited_tenant(stack, name))
    configure(DemoTenant(tenant.tenant_id, tenant.api_key), stack.api_root, stack.sandbox_url)
    return tenant


def _settle(client: Client, tenants: list[Tenant], expected: Counter[Tenant], advance: Advance) -> int:
    """Waits until every job is completed or failed, or nothing finishes any more; how many are."""
    deadline, done = time.monotonic() + SETTLE_TIMEOUT_SECONDS, 0
    last_progress = time.monotonic()
    while time.monotonic() < min(deadline, last_progress + STALL_SECONDS):
        now = sum(min(client.finished(tenant), expected[tenant]) for tenant in tenants)
        if now > done:
            advance("completed", now - done)
            done, last_progress = now, time.monotonic()
        if done == sum(expected.values()):
            break
        time.sleep(1)
    return done


def drive(stack: RunningStack, notifications: int, concurrency: int, advance: Advance) -> dict[str, Any]:
    client = Client(stack)
    tenants = [_new_tenant(stack, name) for name in TENANTS]

    def send(index: int) -> Sent:
        sent = client.send(tenants[index % len(tenants)], index)
        advance("sent", 1)
        return sent

    with ThreadPoolExecutor(concurrency) as pool:
        answered = list(pool.map(send, range(notifications)))
    sent = [item for item in answered if item.accepted]
    settled = _settle(client, tenants, Counter(item.tenant for item in sent), advance)
    jobs = [job for tenant in tenants for job in client.all_jobs(tenant)]
    completed = [job for job in jobs if job["status"] == "completed"]
    latencies = [(_timestamp(job["completedAt"]) - _timestamp(job["createdAt"])) * 1000 for job in completed]
    span = max(map(_timestamp, (job["completedAt"] for job in completed))) - min(
        _timestamp(job["createdAt"]) for job in jobs
    )
    return {
        "notifications": notifications,
        "tenants": len(tenants),
        "concurrency": concurrency,
        "refused": dict(Counter(item.refusal for item in answered if not item.accepted)),
        "logged_problems": _problems(stack),
        "statuses": dict(Counter(job["status"] for job in jobs)),
        "settled": settled,
        "accept_ms": percentiles([item.seconds * 1000 for item in sent]),
        "accept_to_completed_ms": percentiles(latencies),
        "completions_per_second": len(completed) / span,
    }


def _problems(stack: RunningStack, top: int = 8) -> dict[str, int]:
    """The stack log's warnings and errors, by function, level and message (exception type)."""
    found: Counter[str] = Counter()
    for line in stack.log_file.read_text(errors="replace").splitlines():
        label, _, entry = line.partition("| ")
        try:
            logged = json.loads(entry)
        except json.JSONDecodeError:
            continue
        if isinstance(logged, dict) and logged.get("level") in {"WARNING", "ERROR", "CRITICAL"}:
            exception = f" ({logged['exception_name']})" if logged.get("exception_name") else ""
            found[f"{label.strip()} {logged['level']}: {logged.get('message')}{exception}"] += 1
    return dict(found.most_common(top))


# ---------------------------------------------------------------- moto's raw rate


def _fresh(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in ids.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {name: _fresh(item, ids) for name, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item, ids) for item in value]
    return value


class Replay:
    def __init__(self, stack: RunningStack, recorded: list[Recorded], batch_size: int) -> None:
        services = {service for one in recorded for service, _, _ in [*one.accept, *one.deliver]}
        self._clients = {service: stack.boto3_client(service) for service in services | {"sqs"}}
        self._queue = self._clients["sqs"].create_queue(QueueName=REPLAY_QUEUE)["QueueUrl"]
        self._recorded = recorded
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self.calls = 0
        self.failed_conditions = 0

    def _call(self, service: str, operation: str, params: dict[str, Any]) -> Any:
        if "QueueUrl" in params:
            params = {**params, "QueueUrl": self._queue}
        with self._lock:
            self.calls += 1
        try:
            return call_unobserved(self._clients[service], operation, params)
        except ClientError as exc:
            # Served all the same: a condition recorded for another moment (a counter's minute,
            # its limit) can fail on the replayed item, which moto answers as DynamoDB would.
            if exc.response.get("Error", {}).get("Code") not in UNAPPLIED_WRITES:
                raise
            with self._lock:
                self.failed_conditions += 1
            return {}

    def _replay(self, calls: list[tuple[str, str, dict[str, Any]]], ids: dict[str, str]) -> None:
        for service, operation, params in calls:
            self._call(service, operation, _fresh(params, ids))

    def batch(self, recorded: Recorded) -> int:
        """One batch as the stack handles it: accepts, one receive, deliveries, one batch delete."""
        fresh = [{old: str(uuid.uuid4()) for old in recorded.ids} for _ in range(self._batch_size)]
        for ids in fresh:
            self._replay(recorded.accept, ids)
        received = self._call(
            "sqs", "ReceiveMessage", {"QueueUrl": "", "MaxNumberOfMessages": self._batch_size}
        )
        for ids in fresh:
            self._replay(recorded.deliver, ids)
        handles = [message["ReceiptHandle"] for message in received.get("Messages", [])]
        if handles:
            entries = [{"Id": str(i), "ReceiptHandle": handle} for i, handle in enumerate(handles)]
            self._call("sqs", "DeleteMessageBatch", {"QueueUrl": "", "Entries": entries})
        return self._batch_size

    def rate(self, notifications: int, concurrency: int, advance: Advance) -> dict[str, Any]:
        batches = max(1, notifications // self._batch_size)

        def run(index: int) -> int:
            done = self.batch(self._recorded[index % len(self._recorded)])
            advance("replayed", done)
            return done

        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            replayed = sum(pool.map(run, range(batches)))
        elapsed = time.perf_counter() - started
        return {
            "notifications": replayed,
            "calls_per_notification": self.calls / replayed,
            "failed_conditions_per_notification": self.failed_conditions / replayed,
            "notifications_per_second": replayed / elapsed,
            "calls_per_second": self.calls / elapsed,
        }


def measure_throughput(
    notifications: int, concurrency: int, recorded: list[Recorded], batch_size: int, advance: Advance
) -> dict[str, Any]:
    with local_stack() as stack:
        through_stack = drive(stack, notifications, concurrency, advance)
        raw = Replay(stack, recorded, batch_size).rate(min(notifications, REPLAYED), concurrency, advance)
    return {
        **through_stack,
        "moto_raw": raw,
        "ceiling_ratio": through_stack["completions_per_second"] / raw["notifications_per_second"],
    }
