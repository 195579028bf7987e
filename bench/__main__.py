"""python -m bench: Herald's performance budgets (cost, AWS calls, latency), measured.

1. accept path  - AWS calls per accepted email and webhook (real ApiFunction, moto from template.yaml)
2. delivery     - DynamoDB, SQS and KMS calls per delivered email in a warm EmailWorker
3. vault        - KMS calls for 100 decrypts of one tenant's key in a warm process
4. end to end   - accept -> completed latency of N emails through the local stack (median, p95)

Figures are printed as a Markdown table; bench/README.md keeps the dated results.
"""

from __future__ import annotations

import os

# Lambda sets these before any import; herald.observability builds its Metrics at import time.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "HeraldBench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")

import argparse
import logging
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from bench.aws_calls import CallCounter, counting_aws_calls
from herald.adapters.store.sealed import provider_credential
from herald.adapters.store.table import ensure_bound
from herald.adapters.store.tenant_store import TenantStore
from herald.services import tenants
from herald_local.pollers import sqs_record
from herald_local.sandbox import SandboxServer
from herald_local.topology import QueueSourceSpec
from tests.support.dns import resolve_publicly
from tests.support.herald_in_moto import REGION, HeraldInMoto, LambdaContext, client, herald_in_moto

EMAIL = {"to": "someone@example.com", "subject": "Bench", "body": "<p>" + "x" * 900 + "</p>"}
WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "bench", "data": "y" * 900}}


def _per(counter: CallCounter, n: int) -> str:
    parts = [f"{service} {count / n:.2f}" for service, count in sorted(counter.by_service().items())]
    ops = ", ".join(f"{op} {count / n:.2f}" for (_, op), count in sorted(counter.calls.items()))
    return f"{' / '.join(parts)} ({ops})"


def bench_accept(herald: HeraldInMoto, n: int) -> list[tuple[str, str]]:
    ensure_bound()
    rows = []
    for route, body in (("email", EMAIL), ("webhook", WEBHOOK)):
        # A tenant per route: the startup plan allows 200 requests a minute.
        key = tenants.create_tenant(TenantStore(), "Bench", "bench@example.com", "startup").api_key
        for _ in range(5):  # warm-up: cold start, auth cache
            herald.api("POST", f"/api/v1/notifications/{route}", body, key=key)
        with counting_aws_calls() as counter:
            for _ in range(n):
                assert herald.api("POST", f"/api/v1/notifications/{route}", body, key=key).status == 202
        rows.append((f"accept {route}: AWS calls per request (n={n})", _per(counter, n)))
    herald.drain_queues()
    return rows


def _worker_records(herald: HeraldInMoto, output: str, max_messages: int) -> list[dict[str, Any]]:
    sqs = client("sqs")
    url = herald.queue_url(output)
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    source = QueueSourceSpec(
        logical_id="Bench",
        function="EmailWorkerFunction",
        queue_arn=arn,
        batch_size=5,
        batching_window_seconds=0,
        max_concurrency=2,
        report_batch_item_failures=True,
    )
    messages = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=max_messages,
        MessageSystemAttributeNames=["All"],
        MessageAttributeNames=["All"],
    ).get("Messages", [])
    return [sqs_record(message, source, REGION) for message in messages]


def bench_delivery(herald: HeraldInMoto, n: int) -> list[tuple[str, str]]:
    with SandboxServer() as sandbox:
        urls = {
            f"HERALD_{name.upper()}_BASE_URL": sandbox.provider_base_url(name)
            for name in ("sendgrid", "resend", "postmark")
        }
        herald.use_function_environment("ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1", **urls})
        ensure_bound()
        key = tenants.create_tenant(TenantStore(), "Bench", "bench@example.com", "startup").api_key
        assert (
            herald.api(
                "PUT", "/api/v1/account/providers/SENDGRID", {"apiKey": "sandbox-bench-key"}, key=key
            ).status
            == 201
        )
        for _ in range(n + 5):
            herald.api("POST", "/api/v1/notifications/email", EMAIL, key=key)
        herald.use_function_environment("EmailWorkerFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1", **urls})
        worker = herald.handler_module("EmailWorkerFunction")
        # Warm-up batch: cold start, tenant directory, data key cache.
        worker.handler(
            {"Records": _worker_records(herald, "EmailNormalQueueUrl", 5)},
            LambdaContext("EmailWorkerFunction"),
        )
        batches: list[list[dict[str, Any]]] = []
        while sum(map(len, batches)) < n and (records := _worker_records(herald, "EmailNormalQueueUrl", 5)):
            batches.append(records)
        # Only the worker's own calls count (not the bench's receives, which Lambda's poller makes).
        with counting_aws_calls() as counter:
            for records in batches:
                answer = worker.handler({"Records": records}, LambdaContext("EmailWorkerFunction"))
                assert answer == {"batchItemFailures": []}
        delivered = sum(map(len, batches))
        accepted = len(sandbox.store.messages())
    herald.drain_queues()
    return [
        (
            f"delivered email: AWS calls per message, warm worker (n={delivered}, sandbox got {accepted})",
            _per(counter, delivered),
        )
    ]


def bench_vault(herald: HeraldInMoto) -> list[tuple[str, str]]:
    herald.use_function_environment("EmailWorkerFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1"})
    ensure_bound()
    from herald.adapters.store.models import ProviderCredential
    from herald.adapters.store.sealed import seal_attribute
    from herald.adapters.vault import Purpose, default_vault

    vault = default_vault()
    stored = ProviderCredential(
        provider="SENDGRID",
        priority=1,
        last_four="1234",
        added_at="now",
        api_key=seal_attribute(vault, "t-bench", Purpose.PROVIDER_KEY, "sandbox-key-1234"),
    )
    with counting_aws_calls() as counter:
        for _ in range(100):
            provider_credential(vault, "t-bench", stored)
    decrypts = counter.calls[("kms", "Decrypt")]
    return [("100 decrypts of one tenant's key, one warm process: KMS Decrypt calls", str(decrypts))]


def bench_end_to_end(n: int, concurrency: int) -> list[tuple[str, str]]:
    from tests.e2e.conftest import start_stack

    with tempfile.TemporaryDirectory() as state_dir:
        stack = start_stack(Path(state_dir))
        try:
            return _drive(stack.api_root, str(stack.demo_api_key), n, concurrency)
        finally:
            stack.stop_cleanly()


def _drive(api: str, key: str, n: int, concurrency: int) -> list[tuple[str, str]]:
    session = requests.Session()
    headers = {"X-API-Key": key, "Content-Type": "application/json"}

    def send(i: int) -> tuple[str, float]:
        started = time.perf_counter()
        answer = session.post(
            f"{api}/notifications/email", json={**EMAIL, "subject": f"bench {i}"}, headers=headers, timeout=30
        )
        assert answer.status_code == 202, answer.text
        return answer.json()["data"]["jobId"], time.perf_counter() - started

    with ThreadPoolExecutor(concurrency) as pool:
        sent = list(pool.map(send, range(n)))
    latencies, statuses, unfinished = [], Counter[str](), list[str]()
    deadline = time.monotonic() + 120
    for job_id, _ in sent:
        while True:
            job = session.get(f"{api}/notifications/jobs/{job_id}", headers=headers, timeout=30).json()[
                "data"
            ]
            if job["status"] in {"completed", "failed"} or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        statuses[job["status"]] += 1
        if job["status"] != "completed" and len(unfinished) < 3:
            unfinished.append(f"{job['id']} {job['status']} attempts={job['attempts']} {job['errorMessage']}")
        if job["status"] == "completed":
            latencies.append((_ts(job["completedAt"]) - _ts(job["createdAt"])) * 1000)
    accept_ms = sorted(seconds * 1000 for _, seconds in sent)
    latencies.sort()
    return [
        (
            f"local stack, {n} emails ({concurrency} concurrent clients): final statuses",
            dict(statuses).__repr__(),
        ),
        *((f"not completed: {line}", "") for line in unfinished),
        (
            "accept -> completed (ms, server timestamps): median / p95 / max",
            f"{statistics.median(latencies):.0f} / {_p95(latencies):.0f} / {latencies[-1]:.0f}",
        ),
        (
            "POST /notifications/email round trip (ms): median / p95",
            f"{statistics.median(accept_ms):.0f} / {_p95(accept_ms):.0f}",
        ),
    ]


def _ts(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _p95(values: list[float]) -> float:
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--requests", type=int, default=150, help="accept-path requests per route (< 195: rate limit)"
    )
    parser.add_argument(
        "--deliveries", type=int, default=100, help="emails delivered by the in-process worker"
    )
    parser.add_argument("--emails", type=int, default=200, help="emails through the local stack")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--skip-e2e", action="store_true")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the sandbox's request lines
    rows: list[tuple[str, str]] = []
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as herald:
        resolve_publicly(monkeypatch)
        rows += bench_accept(herald, args.requests)
        rows += bench_delivery(herald, args.deliveries)
        rows += bench_vault(herald)
    if not args.skip_e2e:
        rows += bench_end_to_end(args.emails, args.concurrency)
    print("| measurement | result |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
