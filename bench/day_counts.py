"""What the day counters cost (docs/console.md): a worker batch whose jobs belong to several tenants
(no day count writes: TallyFunction keeps them from the table's stream), TallyFunction's batch of
a window's status changes (one counter write per tenant-day), and the reads of a console view, of
a job listing and of a status poll for a tenant with 10, 1 000 and 100 000 jobs of history.

The history is written straight into the table (completed jobs spread over the last 30 days, their
status items, and the counters the accept path and the tally would have left), since only the
reads are measured here; each size is written once per run and shared by the scenarios that read it.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from bench.rig import API, WEBHOOK_QUEUE, Rig, Step, StepCost
from herald.adapters.store.models import DeflatedJSONAttribute
from herald.domain.clock import iso, utc_now
from herald_harness.in_moto import client

if TYPE_CHECKING:
    from herald.services.tenants import IssuedKey

HISTORY_DAYS = 30
HISTORY_SIZES = (10, 1_000, 100_000)
# The console's overview: the account, a 30-day chart; its jobs page: the newest 20.
CONSOLE_VIEW = ("/api/v1/account", "/api/v1/account/activity?days=30", "/api/v1/notifications/jobs?limit=20")
LISTING = "/api/v1/notifications/jobs?limit=20&type=webhook"


def _put(rig: Rig, items: list[dict[str, Any]]) -> None:
    table = rig.herald.topology.outputs["TableName"]
    writer = client("dynamodb")
    for start in range(0, len(items), 25):
        writer.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": item}} for item in items[start : start + 25]]}
        )


# The seeded emails go to this many recipients in turn; the webhooks to one host.
RECIPIENTS = 10
HOOK_HOST = "hooks.example.com"


def recipient(index: int) -> str:
    return f"reader-{index % RECIPIENTS}@example.com"


def write_history(rig: Rig, tenant_id: str, jobs: int, channel: str = "webhook") -> list[str]:
    """``jobs`` completed webhooks (or emails) over the last 30 days, with their day counters and
    their search entries as the accept path writes them; their ids."""
    now = utc_now()
    email = channel == "email"
    document = {"to": recipient(0), "subject": "Your order", "body": "<p>Hi</p>"} if email else {}
    request = DeflatedJSONAttribute().serialize(document or {"url": f"https://{HOOK_HOST}/x", "payload": {}})
    items: list[dict[str, Any]] = []
    ids: list[str] = []
    per_day: Counter[str] = Counter()
    for index in range(jobs):
        # Within the last HISTORY_DAYS days, so inside the one billing period written below
        # (a job accepted before its period began would be counted in none).
        created = now - timedelta(days=index % HISTORY_DAYS, milliseconds=index)
        created_at, job_id = iso(created), str(uuid.uuid4())
        per_day[created_at[:10]] += 1
        ids.append(job_id)
        pk = {"S": f"JOB#{tenant_id}#{job_id}"}
        job: dict[str, dict[str, Any]] = {"pk": pk, "sk": {"S": "JOB"}, "kind": {"S": "job"}}
        job |= {"type": {"S": channel}}
        job |= {"priority": {"N": "5"}, "maxAttempts": {"N": "3"}, "request": {"B": request}}
        job |= {"gsi1pk": {"S": f"JOBS#{tenant_id}"}, "gsi1sk": {"S": f"{created_at}#{job_id}"}}
        term = recipient(index) if email else HOOK_HOST
        job |= {"gsi4pk": {"S": f"FIND#{tenant_id}#{term}"}}
        if email:
            job |= {"target": {"S": term}, "subject": {"S": "Your order"}}
        status = {"pk": pk, "sk": {"S": "STATUS"}, "kind": {"S": "status"}, "type": {"S": channel}}
        status |= {"status": {"S": "completed"}, "priority": {"N": "5"}, "createdAt": {"S": created_at}}
        status |= {"attempts": {"N": "1"}, "maxAttempts": {"N": "3"}, "completedAt": {"S": created_at}}
        items += [job, status]
    start = now - timedelta(days=HISTORY_DAYS)
    period: dict[str, Any] = {
        "pk": {"S": f"USAGE#{tenant_id}"},
        "sk": {"S": f"PERIOD#{start.strftime('%Y%m%dT%H%M%S')}"},
        "kind": {"S": "usage"},
        "total": {"N": str(jobs)},
        f"{channel}s": {"N": str(jobs)},
    }
    period |= {f"a{channel[0]}{day[5:7]}{day[8:10]}": {"N": str(count)} for day, count in per_day.items()}
    days = [
        {
            "pk": {"S": f"USAGE#{tenant_id}"},
            "sk": {"S": f"DAY#{day}"},
            "kind": {"S": "days"},
            f"completed_{channel}": {"N": str(count)},
        }
        for day, count in per_day.items()
    ]
    _put(rig, [*items, period, *days])
    return ids


@dataclass(frozen=True)
class History:
    tenant: IssuedKey
    job_ids: list[str]


_HISTORIES: dict[tuple[int, int, str], History] = {}


def history(rig: Rig, jobs: int, channel: str = "webhook") -> History:
    """A tenant with ``jobs`` jobs of history (webhooks, or emails), written once per rig."""
    key = (id(rig), jobs, channel)
    if key not in _HISTORIES:
        tenant = rig.new_tenant()
        _HISTORIES[key] = History(tenant, write_history(rig, tenant.tenant_id, jobs, channel))
    return _HISTORIES[key]


def console_reads(jobs: int, path_set: tuple[str, ...]) -> Step:
    def step(rig: Rig) -> StepCost:
        tenant = history(rig, jobs).tenant
        for path in path_set:  # warm-up: the key lookup, the clients
            assert rig.get(path, tenant.api_key).status == 200
        with rig.measuring(1) as cost:
            for path in path_set:
                answer = rig.get(path, tenant.api_key)
                assert answer.status == 200, answer.text
        listed = rig.get(LISTING, tenant.api_key).data["pagination"]["total"]
        assert listed == jobs, f"the listing counted {listed} of {jobs} jobs"
        return cost

    return step


# Searches sizes: the page a person reads, over the last week, at 10 and 100 000 jobs of history.
SEARCH_SIZES = (10, 100_000)
SEARCH_WEEK = "since={since}&limit=20"


def search_page(jobs: int, channel: str) -> Step:
    """One page of ``GET /notifications/jobs`` by recipient (a history of emails to 10 recipients
    in turn) or by webhook host (a history of webhooks to one host), over the last 7 days."""

    def step(rig: Rig) -> StepCost:
        past = history(rig, jobs, channel)
        term = f"recipient={recipient(0)}" if channel == "email" else f"host={HOOK_HOST}"
        since = iso(utc_now() - timedelta(days=7)).replace(":", "%3A")
        path = f"/api/v1/notifications/jobs?{term}&{SEARCH_WEEK.format(since=since)}"
        assert rig.get(path, past.tenant.api_key).status == 200  # warm-up
        with rig.measuring(1) as cost:
            answer = rig.get(path, past.tenant.api_key)
        assert answer.status == 200, answer.text
        # The seeded jobs of the last 7 days (a day each in turn) to that recipient or host.
        week = [
            n
            for n in range(jobs)
            if n % HISTORY_DAYS < 7 and (channel != "email" or recipient(n) == recipient(0))
        ]
        assert len(answer.data["data"]) == min(20, len(week)), (len(answer.data["data"]), len(week))
        return cost

    return step


def status_poll(jobs: int) -> Step:
    """``GET /notifications/jobs/{id}`` of the tenant's last written job, as a client polling it
    would."""

    def step(rig: Rig) -> StepCost:
        past = history(rig, jobs)
        path = f"/api/v1/notifications/jobs/{past.job_ids[-1]}"
        assert rig.get(path, past.tenant.api_key).status == 200  # warm-up
        with rig.measuring(1) as cost:
            answer = rig.get(path, past.tenant.api_key)
            assert (answer.status, answer.data["status"]) == (200, "completed"), answer.text
        return cost

    return step


def deliver_for_tenants(tenants: int) -> Step:
    """One warm worker batch of webhooks, each of another tenant: the worker writes no day counts."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        senders = [rig.new_tenant() for _ in range(tenants + 1)]
        worker = rig.herald.event_source(WEBHOOK_QUEUE).function
        # Warm-up with another tenant's job: the tenant directory, the data key cache.
        rig.environment(API)
        assert rig.send("webhook", rig.webhook(), senders[0].api_key).status == 202
        rig.environment(worker)
        rig.deliver(WEBHOOK_QUEUE, rig.receive(WEBHOOK_QUEUE, 1, senders[0].tenant_id))
        rig.environment(API)
        for sender in senders[1:]:
            assert rig.send("webhook", rig.webhook(), sender.api_key).status == 202
        rig.environment(worker)
        records = rig.receive(WEBHOOK_QUEUE, tenants, *(sender.tenant_id for sender in senders[1:]))
        with rig.measuring(len(records)) as cost:
            answer = rig.deliver(WEBHOOK_QUEUE, records)
        assert answer == {"batchItemFailures": []}, answer
        return cost

    return step


# The day counts of one TallyFunction batch: the jobs a tenant's traffic finishes within the event
# source's batching window (100 in 5 s: a tenant sending 20 a second), 2 status changes each.
WINDOW_JOBS = 100


def tally_window(tenants: int, jobs: int = WINDOW_JOBS) -> Step:
    """``jobs`` webhooks of ``tenants`` tenants (sent in turn, so the fair queue mixes them in every
    worker batch) delivered, then TallyFunction's one batch of their status changes."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        while rig.tally():  # what earlier steps left on the stream, unmeasured
            pass
        senders = [rig.new_tenant() for _ in range(tenants)]
        rig.environment(API)
        for n in range(jobs):
            assert rig.send("webhook", rig.webhook(), senders[n % tenants].api_key).status == 202
        rig.environment(rig.herald.event_source(WEBHOOK_QUEUE).function)
        ids = [sender.tenant_id for sender in senders]
        for delivered in range(0, jobs, rig.batch_size):
            records = rig.receive(WEBHOOK_QUEUE, min(rig.batch_size, jobs - delivered), *ids)
            assert rig.deliver(WEBHOOK_QUEUE, records) == {"batchItemFailures": []}
        with rig.measuring(jobs) as cost:
            answers = rig.tally()
        assert answers == [{"changes": 2 * jobs, "writes": tenants}], answers
        return cost

    return step
