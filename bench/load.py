"""Load through the local stack: many notifications from several clients and tenants, emails and
webhooks mixed, with provider failures the sandbox plays (``fail-500``, ``fail-401-<provider>``,
``timeout-<provider>`` recipients) and repeated idempotency keys. Then every job is followed to its
end and the sandbox is asked what it received.

Checks: every accepted job ends completed or failed with a reason (none lost), no job reaches the
sandbox twice, no 5xx answer; a repeated key answers 409 with the first job's id. Reports
throughput, latency percentiles, outcome counts and the stack's peak memory (every process).

``make load`` runs 10 000 (``python -m bench.load --jobs 10000``); the test suite runs 1 000.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from bench.local_stack import local_stack
from bench.report import code_version, machine
from herald.domain.vendors import TENANT_PROVIDERS
from herald_harness.running_stack import RunningStack
from herald_harness.tenants import new_tenant

HUGE = "100000000"
# The mix: shares of the requests (the rest are healthy emails and webhooks).
FAILING_SHARE, FALLBACK_SHARE, TIMEOUT_SHARE, DUPLICATE_SHARE = 0.05, 0.03, 0.005, 0.05
# The provider the fallback and timeout recipients fail: the first every tenant tries.
FIRST = TENANT_PROVIDERS[0].slug
MIX = {
    "failingRecipients": FAILING_SHARE,
    "fallbackRecipients": FALLBACK_SHARE,
    "timeoutRecipients": TIMEOUT_SHARE,
    "repeatedKeys": DUPLICATE_SHARE,
}
FINAL = {"completed", "failed"}
FOLLOW_DEADLINE_SECONDS = 1800


@dataclass
class Sent:
    tenant: str
    key: str
    job_id: str
    channel: str
    accept_ms: float
    expect: str  # "completed" or "failed"
    index: int


@dataclass
class LoadReport:
    jobs: int
    clients: int
    tenants: int
    statuses: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    accept_ms: list[float] = field(default_factory=list)
    completion_ms: list[float] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    sent_twice: list[str] = field(default_factory=list)
    unexplained_failures: list[str] = field(default_factory=list)
    unexpected_outcomes: list[str] = field(default_factory=list)  # e.g. a fallback that did not fall back
    duplicate_answers_wrong: int = 0
    read_errors: Counter[int] = field(default_factory=Counter)  # status reads not answered 200
    read_error_samples: list[str] = field(default_factory=list)
    seconds: float = 0.0
    peak_memory_mb: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "clients": self.clients,
            "tenants": self.tenants,
            "answers": {str(status): count for status, count in sorted(self.statuses.items())},
            "outcomes": dict(self.outcomes),
            "lost": len(self.lost),
            "sentTwice": len(self.sent_twice),
            "failedWithoutReason": len(self.unexplained_failures),
            "unexpectedOutcomes": len(self.unexpected_outcomes),
            "duplicateAnswersWrong": self.duplicate_answers_wrong,
            "readErrors": {str(status): count for status, count in sorted(self.read_errors.items())},
            "readErrorSamples": self.read_error_samples,
            "seconds": round(self.seconds, 1),
            "completionsPerSecond": round(sum(self.outcomes.values()) / self.seconds, 2)
            if self.seconds
            else 0,
            "acceptMs": _percentiles(self.accept_ms),
            "acceptToFinalMs": _percentiles(self.completion_ms),
            "peakMemoryMB": round(self.peak_memory_mb),
        }


def _percentiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": round(cuts[49], 1), "p95": round(cuts[94], 1), "p99": round(cuts[98], 1)}


# ---------------------------------------------------------------- memory of the whole stack


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == pid:
                found.append(int(entry.name))
    return found


def tree_rss_mb(root: int) -> float:
    """Resident memory of a process and all its descendants."""
    total_kb, pending = 0, [root]
    while pending:
        pid = pending.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total_kb += next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0
        )
        pending += _children(pid)
    return total_kb / 1024


@contextmanager
def _memory_watch(report: LoadReport, root: int) -> Iterator[None]:
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(2):
            report.peak_memory_mb = max(report.peak_memory_mb, tree_rss_mb(root))

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# ---------------------------------------------------------------- the load


def _tenants(stack: RunningStack, count: int) -> list[tuple[str, str]]:
    """Paid tenants with the sandbox's keys (the demo tenant's providers) and no limits in the way."""
    tenants = [(str(stack.demo_tenant_id), str(stack.demo_api_key))]
    for index in range(count - 1):
        tenant = new_tenant(stack, name=f"Load{index}")
        tenants.append((tenant.tenant_id, tenant.api_key))
    for tenant_id, _ in tenants:
        stack.cli("tenant", "set-limit", tenant_id, HUGE, "--rate", HUGE)
    return tenants


def _request(stack: RunningStack, rng: random.Random, index: int) -> tuple[str, dict[str, Any], str]:
    """(route, body, expected outcome) of the index-th request."""
    roll = rng.random()
    if roll < FAILING_SHARE:
        recipient, expect = f"fail-500+{index}@example.com", "failed"
    elif roll < FAILING_SHARE + FALLBACK_SHARE:
        recipient, expect = f"fail-401-{FIRST}+{index}@example.com", "completed"
    elif roll < FAILING_SHARE + FALLBACK_SHARE + TIMEOUT_SHARE:
        recipient, expect = f"timeout-{FIRST}+{index}@example.com", "completed"
    elif index % 2:
        return "webhook", {"url": f"{stack.sandbox_url}/hooks/load", "payload": {"n": index}}, "completed"
    else:
        recipient, expect = f"reader+{index}@example.com", "completed"
    return "email", {"to": recipient, "subject": f"load {index}", "body": "<p>load</p>"}, expect


Planned = tuple[tuple[str, dict[str, Any], str], tuple[str, str]]  # (route, body, expect), (tenant, key)


class _Sender:
    """Sends the planned requests from ``clients`` threads, then repeats some with their keys."""

    def __init__(self, stack: RunningStack, plan: list[Planned], clients: int, report: LoadReport) -> None:
        self._stack, self._plan, self._clients, self._report = stack, plan, clients, report
        self._lock = threading.Lock()
        self._sessions = threading.local()
        self.sent: list[Sent] = []

    def send_all(self) -> list[Sent]:
        with ThreadPoolExecutor(self._clients) as pool:
            list(pool.map(self._send, range(len(self._plan))))
        again = random.Random(len(self.sent)).sample(self.sent, k=int(len(self.sent) * DUPLICATE_SHARE))
        with ThreadPoolExecutor(self._clients) as pool:
            list(pool.map(self._repeat, again))
        return self.sent

    def _send(self, index: int) -> None:
        (route, body, expect), (tenant, key) = self._plan[index]
        started = time.perf_counter()
        answer = self._post(index, key)
        elapsed = (time.perf_counter() - started) * 1000
        with self._lock:
            self._report.statuses[answer.status_code] += 1
            if answer.status_code == 202:
                self.sent.append(
                    Sent(tenant, key, answer.json()["data"]["jobId"], route, elapsed, expect, index)
                )
                self._report.accept_ms.append(elapsed)

    def _repeat(self, job: Sent) -> None:
        """The same request with the same idempotency key must answer 409 naming the first job."""
        answer = self._post(job.index, job.key)
        with self._lock:
            self._report.statuses[answer.status_code] += 1
            if answer.status_code != 409 or answer.json().get("jobId") != job.job_id:
                self._report.duplicate_answers_wrong += 1

    def _post(self, index: int, key: str) -> requests.Response:
        (route, body, _), _ = self._plan[index]
        session = getattr(self._sessions, "session", None) or requests.Session()
        self._sessions.session = session
        return session.post(
            f"{self._stack.api_root}/notifications/{route}",
            json=body,
            headers={"X-API-Key": key, "Idempotency-Key": f"load-{index}"},
            timeout=120,
        )


def _follow(stack: RunningStack, sent: list[Sent], report: LoadReport) -> None:
    session, open_jobs = requests.Session(), {job.job_id: job for job in sent}
    deadline = time.monotonic() + FOLLOW_DEADLINE_SECONDS
    while open_jobs and time.monotonic() < deadline:
        for job_id, job in list(open_jobs.items()):
            answer = session.get(
                f"{stack.api_root}/notifications/jobs/{job_id}", headers={"X-API-Key": job.key}, timeout=120
            )
            if answer.status_code != 200:  # counted, and the job read again on the next round
                report.read_errors[answer.status_code] += 1
                if len(report.read_error_samples) < 5:
                    report.read_error_samples.append(f"{answer.status_code} {answer.text[:300]}")
                continue
            document = answer.json()["data"]
            if document["status"] not in FINAL:
                continue
            del open_jobs[job_id]
            report.outcomes[document["status"]] += 1
            if document["status"] != job.expect:
                report.unexpected_outcomes.append(job_id)
            if document["status"] == "failed" and not document["errorMessage"]:
                report.unexplained_failures.append(job_id)
            report.completion_ms.append(_epoch_ms(document["completedAt"]) - _epoch_ms(document["createdAt"]))
        if open_jobs:
            time.sleep(1)
    report.lost = sorted(open_jobs)


def _epoch_ms(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000


def _deliveries_per_job(stack: RunningStack) -> Counter[str]:
    received: Counter[str] = Counter()
    for view in ("messages", "hooks"):
        for item in requests.get(f"{stack.sandbox_url}/_sandbox/{view}", timeout=120).json():
            if item.get("jobId"):
                received[item["jobId"]] += 1
    return received


def run_load(stack: RunningStack, jobs: int, clients: int, tenants: int) -> LoadReport:
    report = LoadReport(jobs, clients, tenants)
    started = time.monotonic()
    with _memory_watch(report, stack.process.pid):
        rng, chosen = random.Random(20261130), _tenants(stack, tenants)
        plan = [(_request(stack, rng, index), chosen[index % len(chosen)]) for index in range(jobs)]
        sent = _Sender(stack, plan, clients, report).send_all()
        _follow(stack, sent, report)
    report.seconds = time.monotonic() - started
    # Only this run's jobs: other clients of the same stack (the contract fuzzer retries the jobs it
    # sends) may have jobs delivered again on purpose.
    mine = {job.job_id for job in sent}
    received = _deliveries_per_job(stack)
    report.sent_twice = sorted(job for job, count in received.items() if count > 1 and job in mine)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--out", type=Path, help="also write the report here as JSON")
    args = parser.parse_args()
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    with local_stack() as stack:  # a failed run keeps the stack's state folder and log
        report = run_load(stack, args.jobs, args.clients, args.tenants).as_dict()
        report["run"] = {"started": started, "code": code_version(), "machine": machine(), "mix": MIX}
        print(json.dumps(report, indent=2))
        if args.out:
            args.out.write_text(json.dumps(report, indent=2) + "\n")
        server_errors = sum(count for status, count in report["answers"].items() if int(status) >= 500)
        failures = (
            report["lost"],
            report["sentTwice"],
            server_errors,
            report["failedWithoutReason"],
            report["unexpectedOutcomes"],
            report["duplicateAnswersWrong"],
            sum(report["readErrors"].values()),
        )
        if any(failures):
            sys.exit("load failed: see the report above")


if __name__ == "__main__":
    main()
