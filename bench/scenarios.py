"""What one notification costs, step by step: AWS calls, DynamoDB units and handler time.

The real handlers run in this process against moto resources built from template.yaml
(herald_harness.in_moto), with the provider sandbox on loopback. Each scenario prepares what
its step needs (unmeasured: a fresh tenant, accepted jobs, a warm-up invocation that fills the
function's caches as a warm container has them), then measures one batch of the step only: the
calls the handlers make, the units of the items they write and read (bench.table_meter), and the
handlers' own time. Workers get the template's batch size of messages in one invocation, as the
event source mapping sends them. Add a scenario by adding a ``Scenario`` to ``SCENARIOS``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.day_counts import (
    CONSOLE_VIEW,
    HISTORY_SIZES,
    LISTING,
    SEARCH_SIZES,
    WINDOW_JOBS,
    console_reads,
    deliver_for_tenants,
    search_page,
    status_poll,
    tally_window,
)
from bench.fanout import ACCEPT_WIDTHS, PAGE_WIDTH, accept_event, deliver_fanout, fanout_page
from bench.rig import API, BOUNCER, EMAIL_QUEUE, REPORTER, WEBHOOK_QUEUE, Rig, Signed, Step, StepCost
from herald.domain.vendors import ProviderName, vendor_of, webhook_route
from herald_harness.in_moto import ApiAnswer
from herald_harness.inbound_samples import polar_subscription
from herald_harness.inbound_signers import POLAR_PRODUCT_INDIE, polar_headers
from herald_harness.senders import SignedRequest
from herald_harness.vendors import side

# Named keys a scoped-key scenario gives its tenant (besides its first, full, key).
SCOPED_KEYS = 12
# Every provider answers 500: a transient failure, so the pass is retried (or, on the last attempt,
# the job fails and is dead-lettered).
FAILING_RECIPIENT = "fail-500@example.com"


def queue_of(route: str) -> str:
    return EMAIL_QUEUE if route == "email" else WEBHOOK_QUEUE


def accept(route: str, *, keyed: bool = False) -> Step:
    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        key = rig.new_tenant().api_key
        body = rig.body(route)

        def headers() -> dict[str, str]:
            return {"Idempotency-Key": str(uuid.uuid4())} if keyed else {}

        assert rig.send(route, body, key, headers()).status == 202  # warm-up: key lookup, clients
        with rig.measuring(rig.batch_size) as cost:
            for _ in range(rig.batch_size):
                answer = rig.send(route, body, key, headers())
                assert answer.status == 202, answer.body
        return cost

    return step


def accept_scoped(route: str, *, fresh: bool) -> Step:
    """Accepts by send-scoped named keys of a tenant holding ``SCOPED_KEYS`` of them besides its first:
    one key, used within five minutes (its last use already recorded), or with ``fresh`` each
    request by another key unused for five minutes (its last use written: the worst case)."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        issued = rig.new_tenant()
        body = rig.body(route)
        keys = [rig.named_key(issued.api_key, f"service {number}", ["send"]) for number in range(SCOPED_KEYS)]
        assert rig.send(route, body, keys[0]).status == 202  # warm-up: key lookup, clients, last use
        for key in keys[1:] if fresh else ():
            rig.send(route, body, key)  # the owners known to the container; their last use...
        if fresh:
            rig.forget_last_use(issued.tenant_id)  # ...five minutes ago
        used = keys[1 : rig.batch_size + 1] if fresh else [keys[0]] * rig.batch_size
        with rig.measuring(len(used)) as cost:
            for key in used:
                answer = rig.send(route, body, key)
                assert answer.status == 202, answer.body
        return cost

    return step


def accept_templated() -> Step:
    """The bench's email, named as a published template with its order number as data: the same
    mail once rendered, so its units compare with ``accept_email``'s; the handler's time holds the
    template's read and its rendering (the engine's import is the warm-up's)."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        key = rig.new_tenant().api_key
        sent = rig.email()
        order = "SO-2026-118734"
        template = {
            "name": "Order",
            "subject": sent["subject"].replace(order, "{{ order }}"),
            "html": sent["body"].replace(order, "{{ order }}"),
        }
        created = rig.herald.api("POST", "/api/v1/templates", template, key=key)
        assert created.status == 201, created.body
        path = f"/api/v1/templates/{created.data['id']}/publish"
        assert rig.herald.api("POST", path, {}, key=key).status == 200
        body = {"to": sent["to"], "template": {"id": created.data["id"], "data": {"order": order}}}
        assert rig.send("email", body, key).status == 202  # warm-up: the engine's import, clients
        with rig.measuring(rig.batch_size) as cost:
            for _ in range(rig.batch_size):
                answer = rig.send("email", body, key)
                assert answer.status == 202, answer.body
        return cost

    return step


def duplicate(route: str) -> Step:
    """The same keyed request again: 409 with the first job's id, nothing stored."""

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        key = rig.new_tenant().api_key
        body = rig.body(route)
        sent = [{"Idempotency-Key": str(uuid.uuid4())} for _ in range(rig.batch_size)]
        for headers in sent:
            assert rig.send(route, body, key, headers).status == 202
        with rig.measuring(rig.batch_size) as cost:
            for headers in sent:
                answer = rig.send(route, body, key, headers)
                assert answer.status == 409, answer.body
        return cost

    return step


def deliver(
    route: str,
    expected: str,
    recipient: str | None = None,
    environment: Mapping[str, str] | None = None,
) -> Step:
    """Jobs accepted as a client sends them, then one warm worker invocation of a full batch, after
    which every job must have the ``expected`` status (``environment``: on top of both functions')."""
    queue = queue_of(route)

    def step(rig: Rig) -> StepCost:
        rig.herald.drain_queues()
        tenant = rig.new_tenant()
        rig.environment(API, environment)
        body = rig.body(route, recipient)
        jobs = [rig.send(route, body, tenant.api_key).data["jobId"] for _ in range(rig.batch_size + 1)]
        rig.environment(rig.herald.event_source(queue).function, environment)
        # Warm-up: tenant directory, data key cache.
        rig.deliver(queue, rig.receive(queue, 1, tenant.tenant_id))
        records = rig.receive(queue, rig.batch_size, tenant.tenant_id)
        with rig.measuring(len(records)) as cost:
            answer = rig.deliver(queue, records)
        assert answer == {"batchItemFailures": []}, answer
        statuses = {str(getattr(rig.herald.job_state(tenant.tenant_id, job), "status", None)) for job in jobs}
        assert statuses == {expected}, f"{route} jobs ended {statuses}, not {expected}"
        return cost

    return step


# ---------------------------------------------------------------- inbound events

Sign = Callable[[str, str, str], Signed]  # (tenant id, job id, recipient) -> the provider's request


def vendor_event(name: ProviderName, event: Callable[..., SignedRequest]) -> Sign:
    """A vendor's signed report about a tenant's job, posted to its webhook route."""

    def sign(tenant_id: str, job_id: str, to: str) -> Signed:
        request = event(tenant_id=tenant_id, job_id=job_id, to=to)
        return Signed(webhook_route(name).replace("{tenantId}", tenant_id), request.body, request.headers)

    return sign


def polar_activation(tenant_id: str) -> Signed:
    """A tenant's Indie subscription becoming active, with a subscription and customer of its own."""
    event = json.loads(
        polar_subscription("subscription.active", tenant_id=tenant_id, product_id=POLAR_PRODUCT_INDIE)
    )
    event["data"] |= {"id": str(uuid.uuid4()), "customer_id": str(uuid.uuid4())}
    body = json.dumps(event, separators=(",", ":")).encode()
    headers = polar_headers(body, int(time.time()), f"evt_{uuid.uuid4().hex}")
    return Signed("/api/v1/payments/polar/webhook", body, headers)


def _answered(answer: ApiAnswer, outcome: str) -> None:
    """200 with one event, and that event's outcome: no figure comes from a refused request."""
    expected = {"received": True, "recorded": 0, "duplicate": 0, "ignored": 0, outcome: 1}
    assert (answer.status, answer.data) == (200, expected), answer.text


def _posted(rig: Rig, requests: list[Signed], outcome: str, *, retried: bool) -> StepCost:
    """The first request warms the function up (secret, clients); the others are measured, each
    answered with ``outcome``; ``retried``: they were all posted once before, unmeasured."""
    warm_up, *measured = requests
    rig.environment(rig.function_of(warm_up.path))
    for request in [warm_up, *(measured if retried else ())]:
        _answered(rig.post(request), "recorded")
    with rig.measuring(len(measured)) as cost:
        for request in measured:
            _answered(rig.post(request), outcome)
    return cost


def delivery_event(sign: Sign, event_type: str, *, suppresses: bool = False, retried: bool = False) -> Step:
    """One provider event per delivered email, each in its own signed request; afterwards every job
    lists exactly that event, and the tenant's suppressions are the recipients if ``suppresses``."""

    def step(rig: Rig) -> StepCost:
        tenant = rig.inbound_tenant()
        recipients = [f"inbound-{uuid.uuid4().hex[:12]}@example.org" for _ in range(rig.batch_size + 1)]
        jobs = rig.handed_over(tenant, recipients)
        requests = [sign(tenant.tenant_id, job, to) for job, to in zip(jobs, recipients, strict=True)]
        cost = _posted(rig, requests, "duplicate" if retried else "recorded", retried=retried)
        for job in jobs:
            events = rig.herald.api("GET", f"/api/v1/notifications/jobs/{job}", key=tenant.api_key).data[
                "events"
            ]
            assert [event["type"] for event in events] == [event_type], events
        listed = rig.herald.api("GET", "/api/v1/account/suppressions", key=tenant.api_key).data
        assert {entry["email"] for entry in listed} == (set(recipients) if suppresses else set()), listed
        return cost

    return step


def plan_change(rig: Rig) -> StepCost:
    """Free tenants' Polar subscriptions becoming active: afterwards every tenant is on Indie."""
    rig.environment(API)
    tenants = [rig.herald.new_tenant("free", "Bench", providers=()) for _ in range(rig.batch_size + 1)]
    cost = _posted(rig, [polar_activation(tenant.tenant_id) for tenant in tenants], "recorded", retried=False)
    plans = {rig.herald.api("GET", "/api/v1/account", key=tenant.api_key).data["plan"] for tenant in tenants}
    assert plans == {"indie"}, plans
    return cost


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    step: Step
    note: str = ""


def history_size(jobs: int) -> str:
    """10 000, as the page writes its numbers."""
    return f"{jobs:,}".replace(",", " ")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("accept_email", "accept an email", accept("email")),
    Scenario("accept_email_keyed", "accept an email with an idempotency key", accept("email", keyed=True)),
    Scenario(
        "accept_email_templated",
        "accept an email named as a published template (rendered at accept)",
        accept_templated(),
        note="the same mail as accept an email, rendered from a template: one more GetItem",
    ),
    Scenario("accept_webhook", "accept a 1 KB webhook", accept("webhook")),
    Scenario(
        "accept_webhook_keyed", "accept a 1 KB webhook with an idempotency key", accept("webhook", keyed=True)
    ),
    Scenario(
        "accept_webhook_scoped_key",
        "accept a 1 KB webhook with a send-scoped key (one of 13 named keys)",
        accept_scoped("webhook", fresh=False),
        "the key's last use was recorded within five minutes: no write of its own",
    ),
    Scenario(
        "accept_webhook_key_first_use",
        "accept a 1 KB webhook with a key's first use in five minutes",
        accept_scoped("webhook", fresh=True),
        "every request by another key: each writes its key's last use (at most once per key per five minutes)",
    ),
    Scenario("duplicate_webhook", "a duplicate webhook (409, same idempotency key)", duplicate("webhook")),
    Scenario("deliver_email", "deliver an email (first provider accepts)", deliver("email", "completed")),
    Scenario(
        "deliver_webhook", "deliver a 1 KB webhook (endpoint answers 2xx)", deliver("webhook", "completed")
    ),
    Scenario(
        "retried_pass",
        "a failed pass that is retried (every provider 500)",
        deliver("email", "pending", FAILING_RECIPIENT),
    ),
    Scenario(
        "retried_webhook_large_answer",
        "a failed webhook attempt that is retried (endpoint answers 503 with 5 KB)",
        deliver("webhook", "pending", "fail-503-large"),
        "the attempt keeps the answer's first 4 KB in an item of its own, written once",
    ),
    Scenario(
        "failed_job",
        "a job's last pass fails (FAILED + dead-letter copy)",
        deliver("email", "failed", FAILING_RECIPIENT, {"HERALD_MAX_ATTEMPTS": "1"}),
        "with MaxAttempts 1, so the first pass is the last",
    ),
    Scenario(
        "inbound_delivered",
        f"a {vendor_of(REPORTER).label} delivery event of a job (signed, verified, stored)",
        delivery_event(vendor_event(REPORTER, side(REPORTER).delivered), "delivered"),
    ),
    Scenario(
        "inbound_bounce",
        f"a {vendor_of(BOUNCER).label} hard bounce of a job (stored, recipient suppressed)",
        delivery_event(vendor_event(BOUNCER, side(BOUNCER).bounced), "bounced", suppresses=True),
    ),
    Scenario(
        "inbound_retried",
        f"a provider's retry of a {vendor_of(REPORTER).label} event (acknowledged as a duplicate)",
        delivery_event(vendor_event(REPORTER, side(REPORTER).delivered), "delivered", retried=True),
        "the same signed request a second time",
    ),
    Scenario(
        "payment_plan_change",
        "a Polar subscription.active moves a free tenant to Indie",
        plan_change,
    ),
    Scenario(
        "deliver_webhook_five_tenants",
        "deliver a batch of 5 webhooks of 5 tenants",
        deliver_for_tenants(5),
        "no two jobs of a batch share a tenant-day (the fair queue's usual mix): the worker writes no"
        " day counts, so this costs what one tenant's batch costs",
    ),
    Scenario(
        "tally_one_tenant",
        f"the day counts of {WINDOW_JOBS} webhooks of one tenant (one TallyFunction batch)",
        tally_window(1),
        "per job: the jobs one tenant's traffic finishes in the 5 s batching window at 20 a second;"
        " one counter write for the tenant-day, in a transaction (billed twice) whose request token"
        " keeps a retried batch from counting twice",
    ),
    Scenario(
        "tally_five_tenants",
        f"the day counts of {WINDOW_JOBS} webhooks of five tenants (one TallyFunction batch)",
        tally_window(5),
        "per job: a write per tenant-day of the batch, however the queue mixed them",
    ),
    *(
        Scenario(
            f"event_accept_{width}",
            f"accept a 1 KB event for {width} subscription{'s' if width > 1 else ''}",
            accept_event(width),
            "per event: its fixed cost, whatever the fan-out's width (one fan-out message per page of 100)",
        )
        for width in ACCEPT_WIDTHS
    ),
    Scenario(
        "event_fanout_page",
        f"a fan-out page of {PAGE_WIDTH} subscriptions (FanoutFunction)",
        fanout_page,
        "per delivery job: the page's reads and messages shared by its jobs, one conditional put each",
    ),
    Scenario(
        "event_deliver",
        "deliver a fan-out job of a 1 KB event (endpoint answers 2xx)",
        deliver_fanout(),
    ),
    Scenario(
        "event_deliver_rate_limited",
        "deliver a fan-out job to a rate-limited subscription (10 a second)",
        deliver_fanout(rate_limit=10),
        "each delivery reserves its send slot first (the subscription idle: no wait)",
    ),
    *(
        Scenario(
            f"console_view_{jobs}",
            f"a console overview and its jobs page, {history_size(jobs)} jobs of history",
            console_reads(jobs, CONSOLE_VIEW),
            "per view: GET account, activity (30 days), jobs (20)",
        )
        for jobs in HISTORY_SIZES
    ),
    *(
        Scenario(
            f"listing_{jobs}",
            f"a job listing with its total, {history_size(jobs)} jobs of history",
            console_reads(jobs, (LISTING,)),
            "per request: the total comes from the day counters, not a COUNT; the handler time is"
            " moto's, which filters the whole index on every Query (DynamoDB reads only the page)",
        )
        for jobs in HISTORY_SIZES
    ),
    *(
        Scenario(
            f"search_{by}_{jobs}",
            f"a search page by {by} (last 7 days), {history_size(jobs)} jobs of history",
            search_page(jobs, channel),
            f"per request: 1 Query of gsi4 ({by}'s own entries) and 1 BatchGetItem of the page's"
            " status items (and, for webhooks, of their requests: the URL column); the reads follow"
            " the page's rows (fewer at 10 jobs of history), not the history; the handler time is"
            " moto's, which filters the whole index on every Query",
        )
        for jobs in SEARCH_SIZES
        for by, channel in (("recipient", "email"), ("host", "webhook"))
    ),
    *(
        Scenario(
            f"status_poll_{jobs}",
            f"a status poll of one job, {history_size(jobs)} jobs of history",
            status_poll(jobs),
            "per request: one Query of the job's own partition",
        )
        for jobs in HISTORY_SIZES
    ),
)

# What a notification costs end to end: the steps it takes, by scenario key.
NOTIFICATIONS: dict[str, tuple[str, ...]] = {
    "email": ("accept_email", "deliver_email", "tally_one_tenant"),
    "email, keyed": ("accept_email_keyed", "deliver_email", "tally_one_tenant"),
    "1 KB webhook": ("accept_webhook", "deliver_webhook", "tally_one_tenant"),
    "1 KB webhook, keyed": ("accept_webhook_keyed", "deliver_webhook", "tally_one_tenant"),
}


@dataclass(frozen=True)
class Recorded:
    """One notification's AWS calls as its handlers made them: accepted, then delivered."""

    route: str
    accept: list[tuple[str, str, dict[str, Any]]]
    deliver: list[tuple[str, str, dict[str, Any]]]
    ids: tuple[str, ...]  # the tenant's and the job's: a replay gives each notification fresh ones


def record_notification(rig: Rig, route: str) -> Recorded:
    queue = queue_of(route)
    rig.herald.drain_queues()
    tenant = rig.new_tenant()
    assert rig.send(route, rig.body(route), tenant.api_key).status == 202  # warm-up
    with rig.measuring(1) as accepted:
        job_id = rig.send(route, rig.body(route), tenant.api_key).data["jobId"]
    rig.environment(rig.herald.event_source(queue).function)
    records = rig.receive(queue, 2, tenant.tenant_id)
    rig.deliver(queue, [record for record in records if job_id not in record["body"]])  # warm-up
    with rig.measuring(1) as delivered:
        rig.deliver(queue, [record for record in records if job_id in record["body"]])
    return Recorded(route, accepted.recorder.calls, delivered.recorder.calls, (tenant.tenant_id, job_id))


def chosen(only: tuple[str, ...]) -> list[Scenario]:
    return [scenario for scenario in SCENARIOS if not only or scenario.key.startswith(only)]


def run_scenarios(rig: Rig, progress: Callable[[str], None], only: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every scenario, or those whose key starts with one of ``only``."""
    results: dict[str, Any] = {}
    for scenario in chosen(only):
        progress(scenario.title)
        step = scenario.step(rig).per_notification()
        results[scenario.key] = {"title": scenario.title, "note": scenario.note, **step}
    rig.herald.drain_queues()
    return results
