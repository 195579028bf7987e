"""Health-aware delivery: an open provider breaker moves the provider to the end of the pass, an open
endpoint breaker defers its jobs without spending attempts, a long outage disables the endpoint.
Given / When / Then over the in-memory fakes, with a manual clock shared by engine and breakers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from msgspec.structs import replace

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.store.conversions import request_from_document
from herald.adapters.vault import Vault
from herald.domain.account import TenantContext
from herald.domain.breakers import (
    ENDPOINT_POLICY,
    PROVIDER_POLICY,
    BreakerKey,
    BreakerKind,
    BreakerState,
)
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, JobStatus
from herald.domain.plans import Plan
from herald.domain.sweeping import is_stuck
from herald.domain.vendors import ProviderName
from herald.domain.webhooks import WebhookOutcome
from herald.services.delivery import HOLDING, DeliveryEngine, DeliveryPolicy
from herald.services.email_attempt import EmailAttempt
from herald.services.health import BreakerBoard, EndpointAccount, EndpointHealth, ProviderHealth
from herald.services.tenant_directory import TenantDirectory
from herald.services.webhook_attempt import ENDPOINT_DISABLED, WebhookAttempt
from tests.fakes.attachments import FakeAttachmentStore
from tests.fakes.breakers import FakeBreakers
from tests.fakes.common import ManualClock, full_grant, settings_for_tests
from tests.fakes.console import FakeMail
from tests.fakes.jobs import FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.providers import FakeProviders, transient
from tests.fakes.queues import FakeAlerts, FakeDeadLetters, FakeQueue
from tests.fakes.tenants import FakeSuppressions, FakeTenantTable, unsubscribe_gate

SENDGRID, RESEND = ProviderName.SENDGRID, ProviderName.RESEND
TENANT = "tenant-sg-first"
# The tenant's full key, calling the endpoint routes.
CALLER = TenantContext(TENANT, "startup", "active", full_grant(), datetime(2026, 1, 1, tzinfo=UTC))
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
HOOK: dict[str, Any] = {"url": "https://hooks.example/in", "payload": {"n": 1}}
ORIGIN = BreakerKey(BreakerKind.ENDPOINT, TENANT, "https://hooks.example")
SG_KEY = BreakerKey(BreakerKind.PROVIDER, TENANT, "SENDGRID")


@dataclass
class Rig:
    clock: ManualClock
    tenants: FakeTenantTable
    breakers: FakeBreakers
    providers: FakeProviders
    sent_hooks: list[str]
    hook_outcome: list[WebhookOutcome]
    mail: FakeMail
    store: FakeJobTable
    queue: FakeQueue
    dead_letters: FakeDeadLetters
    email: DeliveryEngine
    webhook: DeliveryEngine
    counter: int = 0

    def submit(self, channel: Channel, ordering_key: str | None = None) -> JobMessage:
        self.counter += 1
        job_id = f"job-{self.counter}"
        document = EMAIL if channel is Channel.EMAIL else HOOK
        self.store.add_job(TENANT, job_id, document, channel=channel)
        request = request_from_document(channel, document)
        return JobMessage(
            job_id,
            TENANT,
            channel,
            Plan.STARTUP,
            0,
            request,
            5,
            "2025-01-01T00:00:00.000Z",
            ordering_key=ordering_key,
        )

    def engine(self, message: JobMessage) -> DeliveryEngine:
        return self.email if message.channel is Channel.EMAIL else self.webhook

    def drain(self) -> list[Any]:
        """Deliver every queued message, waiting out each one's delay on the manual clock."""
        results = []
        while self.queue.sent:
            taken = self.queue.take()
            self.clock.advance(taken.delay_seconds)
            results.append(self.engine(taken.message).handle(taken.message))
        return results


def build(enabled: bool = True) -> Rig:
    clock = ManualClock()
    vault = Vault(InMemoryKeyManager(), DataKeyCache(max_entries=16, ttl_seconds=300))
    tenants = FakeTenantTable()
    tenants.add_tenant(
        TENANT, Plan.STARTUP, secrets=vault, provider_keys=[(SENDGRID, "SG.k-0001"), (RESEND, "re_k_0002")]
    )
    breakers = FakeBreakers(tenants)
    providers = FakeProviders()
    sent_hooks: list[str] = []
    hook_outcome = [WebhookOutcome(ok=True, status_code=200)]

    def sender(hook: Any, *, secrets: Any) -> WebhookOutcome:
        sent_hooks.append(hook.job_id)
        return hook_outcome[0]

    directory = TenantDirectory(tenants, vault)
    mail = FakeMail()
    store, queue, dead_letters = FakeJobTable(), FakeQueue(), FakeDeadLetters()

    def engine(attempt: Any) -> DeliveryEngine:
        return DeliveryEngine(
            DeliveryPolicy(max_attempts=3, retry_base_delay_seconds=30),
            store=store,
            queue=queue,
            dead_letters=dead_letters,
            alerts=FakeAlerts(),
            attempt=attempt,
            clock=clock,
        )

    email = EmailAttempt(
        attachments=FakeAttachmentStore(),
        directory=directory,
        suppressions=FakeSuppressions(),
        unsubscribes=unsubscribe_gate(),
        providers=providers,
        platform_sender=settings_for_tests().platform_sender,
        health=ProviderHealth(BreakerBoard(breakers, PROVIDER_POLICY, enabled=enabled, clock=clock)),
    )
    hooks = WebhookAttempt(
        directory=directory,
        sender=sender,
        health=EndpointHealth(BreakerBoard(breakers, ENDPOINT_POLICY, enabled=enabled, clock=clock), mail),
    )
    return Rig(
        clock,
        tenants,
        breakers,
        providers,
        sent_hooks,
        hook_outcome,
        mail,
        store,
        queue,
        dead_letters,
        engine(email),
        engine(hooks),
    )


@pytest.fixture
def rig() -> Rig:
    return build()


def send(rig: Rig, channel: Channel, jobs: int) -> None:
    """``jobs`` new jobs of ``channel``, each handled once (their retries stay queued)."""
    for _ in range(jobs):
        rig.engine(message := rig.submit(channel)).handle(message)


def sendgrid_down(rig: Rig) -> None:
    rig.providers.script(SENDGRID, transient(SENDGRID, 503))


def endpoint_up(rig: Rig) -> None:
    rig.hook_outcome[0] = WebhookOutcome(ok=True, status_code=200)


def endpoint_down(rig: Rig) -> None:
    rig.hook_outcome[0] = WebhookOutcome(
        ok=False, status_code=503, error_class="transient", error_message="the endpoint answered HTTP 503"
    )


# ---------------------------------------------------------------- provider breakers


def test_given_sendgrid_down_when_20_emails_go_out_then_it_is_called_5_times_and_all_go_through_resend(
    rig: Rig,
) -> None:
    sendgrid_down(rig)

    results = [rig.email.handle(rig.submit(Channel.EMAIL)) for _ in range(20)]

    assert [result.result for result in results] == ["completed"] * 20
    assert rig.providers.calls.count("SENDGRID") == 5
    assert rig.providers.calls.count("RESEND") == 20
    # Writes only for SendGrid's failures (the fifth one trips it); Resend's successes write nothing.
    assert rig.breakers.writes == 5
    assert rig.breakers.stored[SG_KEY].state is BreakerState.OPEN
    logs = rig.store.state(TENANT, "job-6").delivery_logs
    assert [dict(entry) for entry in logs[0].tried][0] == {
        "provider": "SENDGRID",
        "outcome": "moved back",
        "error": "breaker open",
    }
    assert logs[0].used_provider == "RESEND"


def test_given_an_open_breaker_when_its_cool_down_ends_then_one_pass_probes_and_a_failure_doubles_it(
    rig: Rig,
) -> None:
    sendgrid_down(rig)
    send(rig, Channel.EMAIL, 5)
    rig.clock.advance(30)

    rig.email.handle(rig.submit(Channel.EMAIL))  # the probe
    rig.email.handle(rig.submit(Channel.EMAIL))  # moved back again

    assert rig.providers.calls.count("SENDGRID") == 6
    breaker = rig.breakers.stored[SG_KEY]
    assert (breaker.state, breaker.cooldown_seconds) == (BreakerState.OPEN, 60)


def test_given_sendgrid_back_when_the_probe_succeeds_then_the_breaker_closes_and_successes_cost_no_write(
    rig: Rig,
) -> None:
    sendgrid_down(rig)
    send(rig, Channel.EMAIL, 5)
    rig.providers.script(SENDGRID)  # healthy again
    rig.clock.advance(30)

    rig.email.handle(rig.submit(Channel.EMAIL))
    writes = rig.breakers.writes
    send(rig, Channel.EMAIL, 5)

    assert rig.breakers.stored[SG_KEY].state is BreakerState.CLOSED
    assert rig.breakers.writes == writes
    assert rig.providers.calls[-5:] == ["SENDGRID"] * 5


def test_given_every_provider_open_when_a_pass_runs_then_each_is_still_tried() -> None:
    rig = build()
    sendgrid_down(rig)
    rig.providers.script(RESEND, transient(RESEND, 500))
    send(rig, Channel.EMAIL, 5)
    assert {rig.breakers.stored[key].state for key in rig.breakers.stored} == {BreakerState.OPEN}
    calls = len(rig.providers.calls)

    rig.email.handle(rig.submit(Channel.EMAIL))

    assert rig.providers.calls[calls:] == ["SENDGRID", "RESEND"]


def test_given_breakers_disabled_when_sendgrid_is_down_then_every_pass_calls_it_and_nothing_is_written() -> (
    None
):
    rig = build(enabled=False)
    sendgrid_down(rig)

    for _ in range(10):
        rig.email.handle(rig.submit(Channel.EMAIL))

    assert rig.providers.calls.count("SENDGRID") == 10
    assert rig.breakers.writes == 0


def test_given_two_workers_when_the_cool_down_ends_then_only_one_claims_the_probe(rig: Rig) -> None:
    sendgrid_down(rig)
    send(rig, Channel.EMAIL, 5)
    rig.clock.advance(30)
    stale = rig.tenants.load(TENANT).breakers
    health = ProviderHealth(BreakerBoard(rig.breakers, PROVIDER_POLICY, clock=rig.clock))

    first = health.plan(["SENDGRID", "RESEND"], TENANT, stale)
    second = health.plan(["SENDGRID", "RESEND"], TENANT, stale)  # read before the first claimed

    assert (first.order, first.probing) == (["SENDGRID", "RESEND"], {"SENDGRID"})
    assert (second.order, second.moved_back, second.probing) == (["RESEND", "SENDGRID"], ["SENDGRID"], set())


# ---------------------------------------------------------------- endpoint breakers


def test_given_an_endpoint_down_when_jobs_run_then_its_breaker_opens_and_later_jobs_wait_without_attempts(
    rig: Rig,
) -> None:
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    assert rig.breakers.stored[ORIGIN].state is BreakerState.OPEN
    rig.queue.sent.clear()

    waiting = rig.submit(Channel.WEBHOOK)
    handled = rig.webhook.handle(waiting)

    assert (handled.result, handled.delay_seconds) == ("deferred", 30)
    state = rig.store.state(TENANT, waiting.job_id)
    assert (state.status, state.attempts, state.delivery_logs) == (JobStatus.PENDING, 0, ())
    # Due again when its message comes back: the sweeper does not take it for a lost job before.
    assert state.requeued_at == "2023-11-14T22:13:50.000Z"
    assert not is_stuck(state, datetime(2023, 11, 14, 22, 28, 49, tzinfo=UTC), timedelta(seconds=900))
    assert len(rig.sent_hooks) == 5
    [again] = rig.queue.sent
    assert (again.message.seen_attempts, again.delay_seconds) == (0, 30)


def test_given_an_open_endpoint_when_a_keyed_job_waits_then_its_message_is_held_and_none_re_sent(
    rig: Rig,
) -> None:
    """A FIFO queue drops a re-send of the same job and attempt within 5 minutes, and a new message
    would queue behind the key's later jobs: the keyed job holds its one message for the cool-down."""
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    rig.queue.sent.clear()

    keyed = rig.submit(Channel.WEBHOOK, ordering_key="rk")
    handled = rig.webhook.handle(keyed)

    assert (handled.result, handled.attempt, handled.delay_seconds) == (HOLDING, 0, 30)
    assert not rig.queue.sent
    state = rig.store.state(TENANT, keyed.job_id)
    assert (state.status, state.attempts, state.requeued_at) == (
        JobStatus.PENDING,
        0,
        "2023-11-14T22:13:50.000Z",
    )
    rig.clock.advance(30)
    endpoint_up(rig)
    assert rig.webhook.handle(keyed).result == "completed"  # the held message, when it comes back


@pytest.mark.parametrize("ordering_key", [None, "rk"])
def test_given_a_job_with_a_failed_attempt_when_it_is_deferred_then_its_attempts_are_kept(
    rig: Rig, ordering_key: str | None
) -> None:
    """Attempt numbers only grow: a deferral hands back the attempt it claimed, not the earlier ones."""
    endpoint_down(rig)
    job = rig.submit(Channel.WEBHOOK, ordering_key)
    first = rig.webhook.handle(job)  # attempt 1 fails: its retry is re-sent, or held when keyed
    retry = job if ordering_key else rig.queue.take().message
    send(rig, Channel.WEBHOOK, 4)  # the breaker opens
    rig.queue.sent.clear()

    handled = rig.webhook.handle(retry)

    assert (first.attempt, handled.attempt, handled.delay_seconds) == (1, 1, 30)
    state = rig.store.state(TENANT, job.job_id)
    assert (state.status, state.attempts, len(state.delivery_logs)) == (JobStatus.PENDING, 1, 1)
    if ordering_key:
        assert (handled.result, list(rig.queue.sent)) == (HOLDING, [])
    else:
        [again] = rig.queue.sent
        assert (handled.result, again.message.seen_attempts, again.delay_seconds) == ("deferred", 1, 30)


def test_given_an_endpoint_down_for_a_while_when_it_comes_back_then_every_job_is_delivered_without_dead_letters(
    rig: Rig,
) -> None:
    endpoint_down(rig)
    for _ in range(10):
        rig.webhook.handle(rig.submit(Channel.WEBHOOK))
    # Down for 5 minutes of deferrals and probes, then back.
    while rig.clock.now < 1_700_000_000 + 300:
        taken = rig.queue.take()
        rig.clock.advance(taken.delay_seconds)
        rig.webhook.handle(taken.message)
    rig.hook_outcome[0] = WebhookOutcome(ok=True, status_code=200)

    rig.drain()

    states = [rig.store.state(TENANT, f"job-{index}") for index in range(1, 11)]
    assert [state.status for state in states] == [JobStatus.COMPLETED] * 10
    assert rig.dead_letters.records == []
    assert max(state.attempts for state in states) <= 3
    assert rig.breakers.stored[ORIGIN].state is BreakerState.CLOSED


def test_given_an_endpoint_failing_for_five_days_then_it_is_disabled_the_tenant_is_told_once_and_new_jobs_fail(
    rig: Rig,
) -> None:
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    rig.queue.sent.clear()
    breaker = rig.breakers.stored[ORIGIN]
    rig.breakers.stored[ORIGIN] = replace(breaker, opened_at=int(rig.clock.now) - 5 * 86400)
    rig.clock.advance(30)

    probe = rig.submit(Channel.WEBHOOK)
    rig.webhook.handle(probe)
    later = rig.submit(Channel.WEBHOOK)
    handled = rig.webhook.handle(later)

    assert rig.breakers.stored[ORIGIN].state is BreakerState.DISABLED
    [(to, subject, text)] = rig.mail.sent
    assert (to, subject) == (f"ops@{TENANT}.example", "Webhook endpoint disabled: https://hooks.example")
    assert "endpoint_disabled" in text
    assert handled.result == "failed"
    state = rig.store.state(TENANT, later.job_id)
    assert (state.status, state.error_message) == (JobStatus.FAILED, ENDPOINT_DISABLED)
    assert len(rig.sent_hooks) == 6  # the later job was never sent
    assert rig.dead_letters.records == []


# ---------------------------------------------------------------- the tenant's endpoints


def test_given_a_disabled_endpoint_when_the_tenant_enables_it_then_its_jobs_are_sent_again(rig: Rig) -> None:
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    breaker = rig.breakers.stored[ORIGIN]
    rig.breakers.stored[ORIGIN] = replace(breaker, state=BreakerState.DISABLED, since=int(rig.clock.now))
    account = EndpointAccount(rig.breakers, clock=rig.clock)
    [listed] = account.list(TENANT)
    assert (listed.key.name, listed.state, listed.last_error) == (
        "https://hooks.example",
        BreakerState.DISABLED,
        "the endpoint answered HTTP 503",
    )
    rig.hook_outcome[0] = WebhookOutcome(ok=True, status_code=200)

    enabled = account.enable(CALLER, "hooks.example")  # by its host alone, as the route takes it
    handled = rig.webhook.handle(rig.submit(Channel.WEBHOOK))

    assert (enabled.state, enabled.since) == (BreakerState.CLOSED, int(rig.clock.now))
    assert handled.result == "completed"
    with pytest.raises(HeraldError) as unknown:
        account.enable(CALLER, "https://never-failed.example")
    assert unknown.value.code is ErrorCode.ENDPOINT_NOT_FOUND
    assert account.list("another-tenant") == []


def test_given_an_open_endpoint_when_its_probe_fails_then_the_probing_job_waits_again_with_its_attempt_back(
    rig: Rig,
) -> None:
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    rig.queue.sent.clear()
    rig.clock.advance(30)
    probe = rig.submit(Channel.WEBHOOK)

    handled = rig.webhook.handle(probe)

    assert len(rig.sent_hooks) == 6  # the probe went out
    assert (handled.result, handled.delay_seconds) == ("deferred", 60)
    state = rig.store.state(TENANT, probe.job_id)
    assert (state.status, state.attempts) == (JobStatus.PENDING, 0)
    assert rig.breakers.stored[ORIGIN].cooldown_seconds == 60


@pytest.mark.parametrize(("pause", "state"), [(0, BreakerState.CLOSED), (61, BreakerState.OPEN)])
def test_given_sendgrid_succeeded_before_failing_then_its_recent_successes_count_against_the_failures(
    rig: Rig, pause: int, state: BreakerState
) -> None:
    """6 successes (no write), then 5 failures: 5 of 11 calls failed, under half, unless the
    successes are older than the window."""
    rig.providers.script(SENDGRID, *([None] * 6), transient(SENDGRID, 503))
    send(rig, Channel.EMAIL, 6)
    assert rig.breakers.writes == 0
    rig.clock.advance(pause)

    send(rig, Channel.EMAIL, 5)

    assert rig.breakers.stored[SG_KEY].state is state


def test_given_an_open_endpoint_when_the_tenant_disables_it_then_its_jobs_fail_unsent(rig: Rig) -> None:
    endpoint_down(rig)
    send(rig, Channel.WEBHOOK, 5)
    sent_before = len(rig.sent_hooks)
    account = EndpointAccount(rig.breakers, clock=rig.clock)

    disabled = account.disable(CALLER, "https://hooks.example")
    later = rig.submit(Channel.WEBHOOK)
    handled = rig.webhook.handle(later)

    assert (disabled.state, disabled.since, disabled.last_error) == (
        BreakerState.DISABLED,
        int(rig.clock.now),
        "the endpoint answered HTTP 503",
    )
    assert handled.result == "failed"
    state = rig.store.state(TENANT, later.job_id)
    assert (state.status, state.error_message) == (JobStatus.FAILED, ENDPOINT_DISABLED)
    assert len(rig.sent_hooks) == sent_before  # never sent
    assert rig.mail.sent == []  # the tenant did it: no mail about it
    assert account.disable(CALLER, "hooks.example") == disabled  # already disabled: unchanged
    # Recorded once, as the key's change from its client address (the second call changed nothing).
    [logged] = rig.breakers.tenants.audit
    assert (logged.action.value, logged.target, logged.actor.name, logged.actor.ip) == (
        "endpoint.disabled",
        "https://hooks.example",
        "Default key",
        "203.0.113.9",
    )
    assert logged.details == {"previous": "open"}
