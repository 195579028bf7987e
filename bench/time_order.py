"""Time and order, measured: ``python -m bench.time_order``.

1. **Cost per scheduled notification** (in-process, moto, the table meter of ``bench.scenarios``):
   write and read units and AWS calls of accepting a 1 KB webhook with a ``sendAt``, of its
   dispatch (one DispatcherFunction run over a batch of due jobs), and of a cancel, beside the
   accept of the same webhook sent at once.
2. **Ordering** (local stack): 200 emails on 10 keys across two tenants, a third of them to
   recipients that fail at first (``flaky-<n>``, n the number of vendors: the first attempt fails
   over all of the tenant's providers, the retry succeeds), with 50 unkeyed emails sent alongside. Checked: each key's jobs reached the
   sandbox in acceptance order. Printed: how long the keyed and the unkeyed jobs took, and the same
   200 emails without keys, the throughput cost of ordering.
3. **Timing** (the same stack, meanwhile): 50 webhooks scheduled 10-120 s ahead: none early, start
   delay (startedAt - sendAt) p50 / p99.
4. **Cancel racing dispatch** (a stack of its own whose schedules fire every second, so that the
   dispatcher's runs fall among the cancels): 20 jobs due 3 s ahead, cancelled concurrently; each
   must be sent once or cancelled, never both.
"""

from __future__ import annotations

import os

# Lambda sets these before any import; herald.observability builds its Metrics at import time.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "HeraldBench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")

import argparse  # noqa: E402 (after the environment above)
import json  # noqa: E402
import logging  # noqa: E402
import statistics
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from bench.local_stack import UNLIMITED, local_stack
from bench.rig import Rig, StepCost, table_schemas
from herald.domain.vendors import TENANT_PROVIDERS
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import herald_in_moto
from herald_harness.patches import patched
from herald_harness.running_stack import RunningStack
from herald_harness.tenants import Tenant, new_tenant
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root
from herald_local.sandbox import SandboxServer

DISPATCHER = "DispatcherFunction"
SCHEDULED_EVENT = project_root() / "events" / "dispatcher" / "scheduled.json"
# The first attempt fails over every provider of the tenant, which has each vendor of the table.
FLAKY = f"flaky-{len(TENANT_PROVIDERS)}"
POLL_SECONDS = 0.5
DEADLINE_SECONDS = 900


# ---------------------------------------------------------------- 1. units per scheduled notification


def ahead(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def scheduled_costs(count: int) -> dict[str, Any]:
    template = load_template(project_root() / "template.yaml")
    event = json.loads(SCHEDULED_EVENT.read_text(encoding="utf-8"))
    with patched() as patches, herald_in_moto(patches) as herald, SandboxServer() as sandbox:
        resolve_publicly(patches)
        rig = Rig(herald, sandbox, table_schemas(template))
        steps: dict[str, StepCost] = {}
        key = rig.new_tenant().api_key
        assert rig.send("webhook", rig.webhook(), key).status == 202  # warm-up
        with rig.measuring(count) as steps["accept_now"]:
            for _ in range(count):
                assert rig.send("webhook", rig.webhook(), key).status == 202
        with rig.measuring(count) as steps["accept_scheduled"]:
            due = [
                rig.send("webhook", {**rig.webhook(), "sendAt": ahead(60)}, key).data["jobId"]
                for _ in range(count)
            ]
        kept = [
            rig.send("webhook", {**rig.webhook(), "sendAt": ahead(3600)}, key).data["jobId"]
            for _ in range(count)
        ]
        with rig.measuring(count) as steps["cancel"]:
            for job_id in kept:
                assert rig.get(f"/api/v1/notifications/jobs/{job_id}/cancel", key, "POST").status == 200
        rig.environment(DISPATCHER)
        with rig.measuring(count) as steps["dispatch"]:
            report = rig.invoke(DISPATCHER, event)
        assert report["dispatched"] == len(due), report
    return {name: step.per_notification() for name, step in steps.items()}


def units_summary(costs: dict[str, Any]) -> dict[str, Any]:
    def units(name: str) -> dict[str, float]:
        step = costs[name]
        return {
            "write_units": round(step["write_units"]["total"], 2),
            "index_write_units": round(step["write_units"]["index"], 2),
            "read_units": round(step["read_units"]["total"], 3),
            "aws_calls": round(sum(step["calls"].values()), 2),
        }

    summary: dict[str, Any] = {
        name: units(name) for name in ("accept_now", "accept_scheduled", "dispatch", "cancel")
    }
    extra = summary["accept_scheduled"]["write_units"] - summary["accept_now"]["write_units"]
    summary["scheduled_extra_write_units"] = round(extra + summary["dispatch"]["write_units"], 2)
    summary["scheduled_extra_read_units"] = round(
        summary["accept_scheduled"]["read_units"]
        - summary["accept_now"]["read_units"]
        + summary["dispatch"]["read_units"],
        3,
    )
    return summary


# ---------------------------------------------------------------- local stack helpers


def unlimited(stack: RunningStack, tenant: Tenant) -> Tenant:
    stack.cli("tenant", "set-limit", tenant.tenant_id, UNLIMITED, "--rate", UNLIMITED)
    return tenant


def post(tenant: Tenant, route: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = tenant.call("POST", f"/notifications/{route}", body)
    assert answer.status_code == 202, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def email_to(local_part: str, **fields: Any) -> dict[str, Any]:
    return {
        "to": f"{local_part}+{uuid.uuid4().hex}@example.com",
        "subject": "Bench",
        "body": "<p>b</p>",
        **fields,
    }


def finished(
    tenant: Tenant, job_ids: list[str], ended: tuple[str, ...] = ("completed", "failed")
) -> dict[str, Any]:
    """Each job's document once it ended, polled as a client would."""
    left, done = set(job_ids), {}
    deadline = time.monotonic() + DEADLINE_SECONDS
    while left and time.monotonic() < deadline:
        for job_id in list(left):
            job = tenant.job(job_id)
            if job["status"] in ended:
                done[job_id] = job
                left.discard(job_id)
        time.sleep(POLL_SECONDS)
    assert not left, f"{len(left)} jobs still open after {DEADLINE_SECONDS} s"
    return done


def moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def received(stack: RunningStack, view: str, job_id: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{stack.sandbox_url}/_sandbox/{view}", params={"jobId": job_id}, timeout=30)
    answer.raise_for_status()
    records: list[dict[str, Any]] = answer.json()
    return records


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def seconds(values: list[float]) -> dict[str, float]:
    return {
        "p50_s": round(statistics.median(values), 2),
        "p99_s": round(percentile(values, 0.99), 2),
        "max_s": round(max(values), 2),
    }


# ---------------------------------------------------------------- 2. ordering


def send_keyed(tenants: list[Tenant], jobs: int, keys: int) -> list[tuple[Tenant, str, str]]:
    """(tenant, key, job id) in acceptance order: keys round-robin, every third recipient flaky."""
    sent = []
    for index in range(jobs):
        tenant = tenants[index % len(tenants)]
        key = f"key-{index % keys}"
        recipient = FLAKY if index % 3 == 0 else "ok"
        sent.append((tenant, key, post(tenant, "email", email_to(recipient, orderingKey=key))["jobId"]))
    return sent


def ordering(stack: RunningStack, jobs: int, keys: int, unkeyed: int) -> dict[str, Any]:
    tenants = [unlimited(stack, new_tenant(stack, name=f"Order{n}")) for n in range(2)]
    started = time.monotonic()
    with ThreadPoolExecutor(2) as pool:
        keyed_future = pool.submit(send_keyed, tenants, jobs, keys)
        loose = [post(tenants[n % 2], "email", email_to("ok"))["jobId"] for n in range(unkeyed)]
        keyed = keyed_future.result()
    loose_done = finished(tenants[0], loose[0::2]) | finished(tenants[1], loose[1::2])
    loose_seconds = time.monotonic() - started
    keyed_done: dict[str, Any] = {}
    for tenant in tenants:
        keyed_done |= finished(tenant, [job for owner, _, job in keyed if owner is tenant])
    keyed_seconds = time.monotonic() - started
    out_of_order = 0
    for tenant in tenants:
        for key in {key for owner, key, _ in keyed if owner is tenant}:
            ids = [job for owner, k, job in keyed if owner is tenant and k == key]
            arrivals = [moment(received(stack, "messages", job)[0]["receivedAt"]) for job in ids]
            out_of_order += sum(
                1 for before, after in zip(arrivals, arrivals[1:], strict=False) if after < before
            )
    attempts = [job["attempts"] for job in keyed_done.values()]
    return {
        "keyed_jobs": jobs,
        "keys": keys * len(tenants),
        "tenants": len(tenants),
        "flaky_share": round(sum(1 for n in range(jobs) if n % 3 == 0) / jobs, 2),
        "keyed_completed": sum(1 for job in keyed_done.values() if job["status"] == "completed"),
        "keyed_retried": sum(1 for attempt in attempts if attempt > 1),
        "out_of_order_arrivals": out_of_order,
        "keyed_drained_s": round(keyed_seconds, 1),
        "unkeyed_jobs": unkeyed,
        "unkeyed_latency": seconds(
            [(moment(j["completedAt"]) - moment(j["createdAt"])).total_seconds() for j in loose_done.values()]
        ),
        "unkeyed_drained_s": round(loose_seconds, 1),
    }


def unordered_baseline(stack: RunningStack, jobs: int) -> dict[str, Any]:
    """The same 200 emails, a third flaky, without keys: what ordering costs in drain time."""
    tenants = [unlimited(stack, new_tenant(stack, name=f"Loose{n}")) for n in range(2)]
    started = time.monotonic()
    sent = [
        (tenants[n % 2], post(tenants[n % 2], "email", email_to(FLAKY if n % 3 == 0 else "ok"))["jobId"])
        for n in range(jobs)
    ]
    for tenant in tenants:
        finished(tenant, [job for owner, job in sent if owner is tenant])
    return {"jobs": jobs, "drained_s": round(time.monotonic() - started, 1)}


# ---------------------------------------------------------------- 3. timing


def schedule_webhooks(stack: RunningStack, tenant: Tenant, count: int) -> list[dict[str, Any]]:
    """``count`` webhooks to the sandbox, due evenly from 10 to 120 s ahead."""
    step = 110 / max(count - 1, 1)
    return [
        post(
            tenant,
            "webhook",
            {
                "url": f"{stack.sandbox_url}/hooks/scheduled",
                "payload": {"n": n},
                "sendAt": ahead(10 + n * step),
            },
        )
        for n in range(count)
    ]


def timing(stack: RunningStack, tenant: Tenant, accepted: list[dict[str, Any]]) -> dict[str, Any]:
    jobs = finished(tenant, [job["jobId"] for job in accepted])
    delays, early = [], 0
    for job in jobs.values():
        send_at = moment(job["sendAt"])
        [hook] = received(stack, "hooks", job["id"])
        early += int(moment(job["startedAt"]) < send_at or moment(hook["receivedAt"]) < send_at)
        delays.append((moment(job["startedAt"]) - send_at).total_seconds())
    return {
        "scheduled": len(accepted),
        "completed": sum(j["status"] == "completed" for j in jobs.values()),
        "early": early,
        "start_delay": seconds(delays),
    }


# ---------------------------------------------------------------- 4. cancel racing dispatch


@contextmanager
def fast_schedules() -> Iterator[None]:
    os.environ["HERALD_LOCAL_SCHEDULE_SECONDS"] = "1"
    try:
        yield
    finally:
        del os.environ["HERALD_LOCAL_SCHEDULE_SECONDS"]


def cancel_race(count: int) -> dict[str, Any]:
    with fast_schedules(), local_stack() as stack:
        tenant = unlimited(stack, new_tenant(stack, name="Race"))
        url = f"{stack.sandbox_url}/hooks/race"
        jobs = [
            post(tenant, "webhook", {"url": url, "payload": {"n": n}, "sendAt": ahead(3)})["jobId"]
            for n in range(count)
        ]
        with ThreadPoolExecutor(count) as pool:
            statuses = list(
                pool.map(
                    lambda job: tenant.call("POST", f"/notifications/jobs/{job}/cancel").status_code, jobs
                )
            )
        won = [job for job, status in zip(jobs, statuses, strict=True) if status == 200]
        sent = [job for job in jobs if job not in won]
        finished(tenant, sent)
        time.sleep(5)  # a second copy of any message would have arrived by now
        both = sum(1 for job in won if received(stack, "hooks", job))
        twice = sum(1 for job in sent if len(received(stack, "hooks", job)) != 1)
        refused = {status for status in statuses if status not in (200, 409)}
    return {
        "jobs": count,
        "cancelled": len(won),
        "dispatched_first": len(sent),
        "sent_and_cancelled": both,
        "not_sent_exactly_once": twice,
        "other_answers": sorted(refused),
    }


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    say("1/4 units per scheduled notification (in-process, moto)")
    results: dict[str, Any] = {"scheduled_units": units_summary(scheduled_costs(args.batch))}
    say("2-3/4 ordering and timing (local stack)")
    with local_stack() as stack:
        timer = unlimited(stack, new_tenant(stack, name="Timing"))
        scheduled = schedule_webhooks(stack, timer, args.scheduled)
        results["ordering"] = ordering(stack, args.jobs, args.keys, args.unkeyed)
        results["ordering"]["unordered_baseline"] = unordered_baseline(stack, args.jobs)
        results["timing"] = timing(stack, timer, scheduled)
    say("4/4 cancels racing the dispatcher (local stack, schedules every second)")
    results["cancel_race"] = cancel_race(args.cancels)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.time_order", description=__doc__)
    parser.add_argument("--jobs", type=int, default=200, help="keyed emails (default 200)")
    parser.add_argument("--keys", type=int, default=5, help="keys per tenant, two tenants (default 5)")
    parser.add_argument("--unkeyed", type=int, default=50, help="unkeyed emails sent alongside (default 50)")
    parser.add_argument("--scheduled", type=int, default=50, help="webhooks scheduled 10-120 s ahead")
    parser.add_argument("--cancels", type=int, default=20, help="scheduled jobs cancelled during dispatch")
    parser.add_argument("--batch", type=int, default=10, help="notifications per in-process step")
    parser.add_argument("--out", type=Path, help="also write the results there (JSON)")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)
    results = run(args, lambda line: print(line, flush=True))
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
