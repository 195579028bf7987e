"""Fair serving between tenants of one queue, measured through the local stack.

Tenant A floods the low-priority webhook queue with 1 000 webhooks; then tenant B sends 20 of its
own. With fair serving (the local pollers' round-robin over tenants, as SQS fair queues serve
``MessageGroupId``s) B's webhooks are served between A's; without it they wait behind A's backlog.
Meanwhile one critical-priority email goes through its own queue. Run twice, fair serving on and
off, in one process: ``python -m bench.fairness [--flood 1000] [--tenant-b 20]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import requests

from bench.local_stack import local_stack, unlimited_tenant
from herald_harness.running_stack import RunningStack

LOW, CRITICAL = 10, 1
POLL_SECONDS = 0.2
DEADLINE_SECONDS = 600


@dataclass(frozen=True)
class FairnessRun:
    fair: bool
    flood: int
    tenant_b: int
    b_completed_seconds: list[float]
    flood_completed_seconds: float
    critical_email_seconds: float
    flood_accepted_seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "fairServing": self.fair,
            "floodOfTenantA": self.flood,
            "webhooksOfTenantB": self.tenant_b,
            "tenantB_p50_s": round(statistics.median(self.b_completed_seconds), 2),
            "tenantB_last_s": round(max(self.b_completed_seconds), 2),
            "tenantA_flood_accepted_s": round(self.flood_accepted_seconds, 2),
            "tenantA_flood_drained_s": round(self.flood_completed_seconds, 2),
            "criticalEmailWhileFlooded_s": round(self.critical_email_seconds, 2),
        }


@contextmanager
def _stack(fair: bool) -> Iterator[RunningStack]:
    os.environ["HERALD_LOCAL_FAIR_SERVING"] = "1" if fair else "0"
    with local_stack() as stack:
        yield stack


def _tenant(stack: RunningStack, name: str) -> str:
    return unlimited_tenant(stack, name)[1]


def _post(session: requests.Session, stack: RunningStack, key: str, route: str, body: dict[str, Any]) -> str:
    answer = session.post(
        f"{stack.api_root}/notifications/{route}", json=body, headers={"X-API-Key": key}, timeout=60
    )
    assert answer.status_code == 202, answer.text
    return str(answer.json()["data"]["jobId"])


def _webhooks(stack: RunningStack, key: str, count: int, label: str) -> list[str]:
    session = requests.Session()
    body = {"url": f"{stack.sandbox_url}/hooks/{label}", "payload": {"bench": label}, "priority": LOW}
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: _post(session, stack, key, "webhook", body), range(count)))


def _completed_after(stack: RunningStack, key: str, job_ids: list[str], started: float) -> list[float]:
    """Seconds from ``started`` until each job completed (polled as a client would)."""
    session, left, done = requests.Session(), set(job_ids), {}
    deadline = time.monotonic() + DEADLINE_SECONDS
    while left and time.monotonic() < deadline:
        for job_id in list(left):
            job = session.get(
                f"{stack.api_root}/notifications/jobs/{job_id}", headers={"X-API-Key": key}, timeout=60
            )
            if job.json()["data"]["status"] in {"completed", "failed"}:
                done[job_id] = time.monotonic() - started
                left.discard(job_id)
        time.sleep(POLL_SECONDS)
    assert not left, f"{len(left)} jobs still open after {DEADLINE_SECONDS} s"
    return [done[job_id] for job_id in job_ids]


def run(fair: bool, flood: int, tenant_b: int) -> FairnessRun:
    with _stack(fair) as stack:
        key_a, key_b = _tenant(stack, "FloodA"), _tenant(stack, "TenantB")
        started = time.monotonic()
        flood_ids = _webhooks(stack, key_a, flood, "flood")
        b_started = time.monotonic()
        flood_accepted = b_started - started
        b_ids = _webhooks(stack, key_b, tenant_b, "b")
        email = {
            "to": "critical@example.com",
            "subject": "critical",
            "body": "<p>now</p>",
            "priority": CRITICAL,
        }
        critical_started = time.monotonic()
        critical = _post(requests.Session(), stack, str(stack.demo_api_key), "email", email)
        critical_seconds = _completed_after(stack, str(stack.demo_api_key), [critical], critical_started)[0]
        b_seconds = _completed_after(stack, key_b, b_ids, b_started)
        flood_seconds = max(_completed_after(stack, key_a, flood_ids, started))
    return FairnessRun(fair, flood, tenant_b, b_seconds, flood_seconds, critical_seconds, flood_accepted)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fairness", description=__doc__)
    parser.add_argument("--flood", type=int, default=1000, help="tenant A's low-priority webhooks")
    parser.add_argument("--tenant-b", type=int, default=20, help="tenant B's webhooks, sent after the flood")
    args = parser.parse_args()
    results = [run(fair, args.flood, args.tenant_b).as_dict() for fair in (True, False)]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
