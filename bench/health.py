"""What the circuit breakers buy, measured through the local stack, with the breakers on and off.

- **Provider outage.** The provider table's first vendor answers 500 for the whole run (the
  sandbox's staged outage); 300 emails of 3 tenants whose order is the table's. Counted: that
  vendor's calls, the accept → completed latency (the job documents' createdAt → completedAt), and that all were
  delivered through the fallback.
- **Endpoint outage.** One tenant's webhook endpoint answers 503 for ``--outage`` seconds, then is
  back; 100 webhooks sent at the start. Counted: the attempts the jobs spent, how many failed, the
  dead-letter queue's depth, and the seconds until every job was delivered (without breakers the
  failed ones are re-queued with ``POST …/jobs/recover`` once the endpoint is back).
- **Breaker writes.** Each stored change bumps a breaker item's ``version``: their sum is the
  number of breaker writes (1 write unit each, the items are far below 1 KB).

The local stack retries after 2 s (then 4 s) instead of 30 s and opens a breaker for 2 s first
instead of 30 s, so the endpoint outage is scaled down from 5 minutes to ``--outage`` (default 60) s.
Run: ``python -m bench.health [--emails 300] [--webhooks 100] [--outage 60]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import requests

from bench.local_stack import local_stack, unlimited_tenant
from bench.report import HEALTH_RESULTS, PAGE, RESULTS, code_version, render
from herald.domain.vendors import TENANT_PROVIDERS, vendor_of
from herald_harness.running_stack import RunningStack
from herald_harness.tenants import ALL_PROVIDERS

POLL_SECONDS = 0.5
DEADLINE_SECONDS = 900
TENANTS = 3
# The provider down for the whole provider outage: the first every tenant tries.
DOWN = TENANT_PROVIDERS[0]
HTTP_TIMEOUT = 60


@dataclass
class Client:
    stack: RunningStack
    key: str
    session: requests.Session

    def call(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.session.request(
            method,
            f"{self.stack.api_root}{path}",
            json=body,
            headers={"X-API-Key": self.key},
            timeout=HTTP_TIMEOUT,
        )
        assert answer.ok, answer.text
        return answer.json()["data"]

    def send(self, route: str, body: dict[str, Any]) -> str:
        return str(self.call("POST", f"/notifications/{route}", body)["jobId"])

    def finished(self, job_ids: list[str], *, accept_failed: bool = True) -> list[dict[str, Any]]:
        """The job documents once every job is completed (or failed, when ``accept_failed``)."""
        done: dict[str, dict[str, Any]] = {}
        final = {"completed", "failed"} if accept_failed else {"completed"}
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(done) < len(job_ids) and time.monotonic() < deadline:
            for job_id in [job_id for job_id in job_ids if job_id not in done]:
                job = self.call("GET", f"/notifications/jobs/{job_id}")
                if job["status"] in final:
                    done[job_id] = job
            time.sleep(POLL_SECONDS)
        assert len(done) == len(job_ids), (
            f"{len(job_ids) - len(done)} jobs still open after {DEADLINE_SECONDS} s"
        )
        return [done[job_id] for job_id in job_ids]


@contextmanager
def _stack(breakers: bool) -> Iterator[RunningStack]:
    os.environ["HERALD_LOCAL_CIRCUIT_BREAKERS"] = "1" if breakers else "0"
    with local_stack() as stack:
        yield stack


def _client(stack: RunningStack, name: str, providers: tuple[str, ...]) -> Client:
    client = Client(stack, unlimited_tenant(stack, name)[1], requests.Session())
    for provider in providers:
        client.call("PUT", f"/account/providers/{provider}", {"apiKey": f"sandbox-{uuid.uuid4().hex}"})
    return client


def _outage(stack: RunningStack, target: str, **body: Any) -> None:
    requests.put(
        f"{stack.sandbox_url}/_sandbox/outages/{target}", json=body, timeout=HTTP_TIMEOUT
    ).raise_for_status()


def _millis(job: dict[str, Any]) -> float:
    created, completed = (
        datetime.fromisoformat(job[name].replace("Z", "+00:00")) for name in ("createdAt", "completedAt")
    )
    return (completed - created).total_seconds() * 1000


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def provider_outage(stack: RunningStack, emails: int) -> dict[str, Any]:
    clients = [_client(stack, f"{DOWN.value.title()}First{n}", ALL_PROVIDERS) for n in range(TENANTS)]
    _outage(stack, DOWN.value, status=500)
    to = f"bench-health-{uuid.uuid4().hex}@example.com"
    body = {"to": to, "subject": "Bench", "body": "<p>health</p>"}
    with ThreadPoolExecutor(8) as pool:
        sent = list(
            pool.map(
                lambda n: (clients[n % TENANTS], clients[n % TENANTS].send("email", body)), range(emails)
            )
        )
    jobs = [
        job
        for client in clients
        for job in client.finished([job_id for owner, job_id in sent if owner is client])
    ]
    attempts = requests.get(
        f"{stack.sandbox_url}/_sandbox/attempts", params={"to": to}, timeout=HTTP_TIMEOUT
    ).json()
    latencies = [_millis(job) for job in jobs if job["status"] == "completed"]
    return {
        "emails": emails,
        "completed": sum(job["status"] == "completed" for job in jobs),
        "deliveredBy": sorted({job["deliveryLogs"][-1]["usedProvider"] for job in jobs}),
        "downProvider": vendor_of(DOWN).label,
        "downProviderCalls": sum(attempt["provider"] == DOWN.slug for attempt in attempts),
        "attemptsSpent": sum(job["attempts"] for job in jobs),
        "acceptToCompleted_ms_p50": round(statistics.median(latencies)),
        "acceptToCompleted_ms_p95": round(_percentile(latencies, 0.95)),
    }


def endpoint_outage(stack: RunningStack, webhooks: int, outage_seconds: int) -> dict[str, Any]:
    client = _client(stack, "Receiver", ())
    name = f"bench-{uuid.uuid4().hex[:8]}"
    _outage(stack, f"hook:{name}", status=503, seconds=outage_seconds)
    since = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()
    started = time.monotonic()
    url = f"{stack.sandbox_url}/hooks/{name}"
    with ThreadPoolExecutor(8) as pool:
        job_ids = list(
            pool.map(lambda n: client.send("webhook", {"url": url, "payload": {"n": n}}), range(webhooks))
        )
    first = client.finished(job_ids)
    failed = [job["id"] for job in first if job["status"] == "failed"]
    recovered = 0
    if failed:
        time.sleep(max(0.0, outage_seconds - (time.monotonic() - started)) + 1)
        recovered = client.call("POST", "/notifications/jobs/recover", {"since": since, "type": "webhook"})[
            "requeued"
        ]
    final = client.finished(job_ids, accept_failed=False)
    sqs = stack.boto3_client("sqs")
    depth = sqs.get_queue_attributes(
        QueueUrl=stack.outputs["DeadLetterQueueUrl"], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]["ApproximateNumberOfMessages"]
    hooks = requests.get(
        f"{stack.sandbox_url}/_sandbox/hooks", params={"name": name}, timeout=HTTP_TIMEOUT
    ).json()
    return {
        "webhooks": webhooks,
        "outageSeconds": outage_seconds,
        "failedBeforeRecovery": len(failed),
        "recovered": recovered,
        "delivered": sum(job["status"] == "completed" for job in final),
        "attemptsSpent": sum(job["attempts"] for job in final),
        "requestsToTheEndpoint": len(hooks),
        "deadLetterCopies": int(depth),
        "allDeliveredAfter_s": round(time.monotonic() - started, 1),
    }


def breaker_writes(stack: RunningStack) -> int:
    """Stored breaker changes: the sum of the breaker items' versions."""
    dynamodb = stack.boto3_client("dynamodb")
    pages = dynamodb.get_paginator("scan").paginate(
        TableName=stack.outputs["TableName"],
        FilterExpression="#kind = :breaker",
        ExpressionAttributeNames={"#kind": "kind"},
        ExpressionAttributeValues={":breaker": {"S": "breaker"}},
    )
    return sum(int(item["version"]["N"]) for page in pages for item in page["Items"])


def run(breakers: bool, emails: int, webhooks: int, outage_seconds: int) -> dict[str, Any]:
    with _stack(breakers) as stack:
        provider = provider_outage(stack, emails)
        provider_writes = breaker_writes(stack)
        endpoint = endpoint_outage(stack, webhooks, outage_seconds)
        return {
            "breakers": breakers,
            "providerOutage": provider | {"breakerWrites": provider_writes},
            "endpointOutage": endpoint | {"breakerWrites": breaker_writes(stack) - provider_writes},
        }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.health", description=__doc__)
    parser.add_argument("--emails", type=int, default=300)
    parser.add_argument("--webhooks", type=int, default=100)
    parser.add_argument("--outage", type=int, default=60, help="seconds the webhook endpoint is down")
    args = parser.parse_args()
    runs = [run(breakers, args.emails, args.webhooks, args.outage) for breakers in (True, False)]
    print(json.dumps(runs, indent=2))
    write(runs)


SETTING = (
    "Through the local stack on one machine (moto, the provider sandbox), retries after 2 s and 4 s "
    "instead of 30 s and 60 s, a breaker's first cool-down 2 s instead of 30 s: the endpoint's outage "
    "is scaled down from 5 minutes accordingly. Latencies are the job documents' createdAt → "
    "completedAt. Breaker writes: the sum of the breaker items' versions (each stored change is one "
    "write unit); a healthy provider or endpoint adds none. Without breakers, the endpoint's failed "
    "jobs are re-queued with `POST /api/v1/notifications/jobs/recover` once it is back. The sandbox "
    "answers the provider's 500 at once, so here the breaker saves calls more than time; against a "
    "provider that times out, every pass without it waits out the read timeout (10 s) first. No run "
    "writes a dead-letter copy: a receiver's outage is the tenant's to fix, breakers or not."
)


def write(runs: list[dict[str, Any]]) -> None:
    """bench/health-results.json, and the page re-rendered with it (from bench/results.json)."""
    measured = {
        "measuredAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": code_version()["commit"][:10],
        "setting": SETTING,
        "runs": runs,
    }
    HEALTH_RESULTS.write_text(json.dumps(measured, indent=1) + "\n")
    PAGE.write_text(render(json.loads(RESULTS.read_text())))


if __name__ == "__main__":
    main()
