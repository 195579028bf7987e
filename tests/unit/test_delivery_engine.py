"""The delivery engine end to end on in-memory ports: claim, one pass over the providers, then
complete, retry with a delayed re-send, or fail and dead-letter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.queueing import INLINE_PAYLOAD_LIMIT, decode_message, encode_message
from herald.adapters.store.conversions import request_from_document
from herald.adapters.vault import Vault
from herald.domain.addresses import Suppression
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage, JobState
from herald.domain.jobs import Channel, JobStatus, QueuePriority
from herald.domain.plans import Plan
from herald.domain.vendors import ProviderName
from herald.observability import metrics
from herald.services.delivery import (
    LEASE_SECONDS,
    AttemptNotReleased,
    DeliveryEngine,
    DeliveryPolicy,
    Handled,
)
from herald.services.email_attempt import SUPPRESSED, EmailAttempt
from herald.services.tenant_directory import TenantDirectory
from tests.fakes.attachments import FakeAttachmentStore
from tests.fakes.common import ManualClock, settings_for_tests
from tests.fakes.jobs import FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.providers import FakeProviders, message_permanent, provider_permanent, transient
from tests.fakes.queues import Enqueued, FakeAlerts, FakeDeadLetters, FakeQueue
from tests.fakes.tenants import FakeSuppressions, FakeTenantTable, unsubscribe_gate
from tests.unit.test_email_attempt import untimed

SENDGRID, RESEND, POSTMARK, SES = (
    ProviderName.SENDGRID,
    ProviderName.RESEND,
    ProviderName.POSTMARK,
    ProviderName.SES,
)
TENANT = "tenant-trio"  # SendGrid, Resend, Postmark, in that order
DUO = "tenant-duo"  # SendGrid, Resend
SOLO = "tenant-solo"  # SendGrid only
FREE = "tenant-free"  # free plan, with a SendGrid key left over from a paid period
SENDGRID_KEY = "SG.trio-sendgrid-key-000000000001"
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi Ada</p>"}


@pytest.fixture(autouse=True)
def _clear_metrics() -> Iterator[None]:
    # The workers flush metrics per invocation; without a flush Powertools refuses the 101st value.
    yield
    metrics.clear_metrics()


@dataclass
class Rig:
    store: FakeJobTable
    suppressions: FakeSuppressions
    queue: FakeQueue
    dead_letters: FakeDeadLetters
    alerts: FakeAlerts
    providers: FakeProviders
    clock: ManualClock
    engine: DeliveryEngine

    def submit(
        self,
        payload: dict[str, Any],
        *,
        tenant: str = TENANT,
        plan: str = Plan.STARTUP,
        job_id: str = "job-1",
        priority: int = 5,
    ) -> JobMessage:
        """A job as the API accepts it: the PENDING row, then its first message."""
        self.store.add_job(tenant, job_id, payload, priority=priority)
        return JobMessage(
            job_id,
            tenant,
            Channel.EMAIL,
            plan,
            0,
            request_from_document(Channel.EMAIL, payload),
            priority,
            "2025-01-01T00:00:00.000Z",
        )

    def run_until_settled(self, first: JobMessage) -> list[Handled]:
        """Play SQS: handle the message, then every delayed re-send, until none is left."""
        results = [self.engine.handle(first)]
        while self.queue.sent:
            results.append(self.engine.handle(self.queue.take().message))
        return results

    def state(self, tenant: str = TENANT, job_id: str = "job-1") -> JobState:
        return self.store.state(tenant, job_id)


@pytest.fixture
def rig() -> Rig:
    vault = Vault(InMemoryKeyManager(), DataKeyCache(max_entries=16, ttl_seconds=300))
    tenants = FakeTenantTable()
    tenants.add_tenant(
        TENANT,
        Plan.STARTUP,
        secrets=vault,
        provider_keys=[(SENDGRID, SENDGRID_KEY), (RESEND, "re_trio_key_0002"), (POSTMARK, "pm-trio-0003")],
    )
    tenants.add_tenant(
        DUO, Plan.INDIE, secrets=vault, provider_keys=[(SENDGRID, "SG.duo-0001"), (RESEND, "re_duo_0002")]
    )
    tenants.add_tenant(SOLO, Plan.INDIE, secrets=vault, provider_keys=[(SENDGRID, "SG.solo-0001")])
    tenants.add_tenant(FREE, Plan.FREE, secrets=vault, provider_keys=[(SENDGRID, "SG.free-0001")])
    settings = settings_for_tests()
    store, suppressions, providers = FakeJobTable(), FakeSuppressions(), FakeProviders()
    emails = EmailAttempt(
        attachments=FakeAttachmentStore(),
        directory=TenantDirectory(tenants, vault),
        suppressions=suppressions,
        unsubscribes=unsubscribe_gate(),
        providers=providers,
        platform_sender=settings.platform_sender,
    )
    queue, dead_letters, alerts, clock = FakeQueue(), FakeDeadLetters(), FakeAlerts(), ManualClock()
    engine = DeliveryEngine(
        DeliveryPolicy(settings.max_attempts, settings.retry_base_delay_seconds),
        store=store,
        queue=queue,
        dead_letters=dead_letters,
        alerts=alerts,
        attempt=emails,
        clock=clock,
    )
    return Rig(store, suppressions, queue, dead_letters, alerts, providers, clock, engine)


def calls_per_attempt(rig: Rig, per_attempt: int) -> list[list[str]]:
    calls = rig.providers.calls
    return [calls[index : index + per_attempt] for index in range(0, len(calls), per_attempt)]


# ---------------------------------------------------------------- success and fallback


def test_given_healthy_providers_when_handled_then_first_provider_delivers_with_one_success_log(
    rig: Rig,
) -> None:
    handled = rig.engine.handle(rig.submit(EMAIL))

    assert handled == Handled("job-1", "completed", 1)
    state = rig.state()
    assert (state.status, state.used_provider, int(state.attempts)) == ("completed", "SENDGRID", 1)
    assert state.lease_until is None
    assert state.error_message is None
    [log] = state.delivery_logs
    assert (log.attempt, log.status, log.used_provider) == (1, "success", "SENDGRID")
    assert untimed(log.tried) == [{"provider": "SENDGRID", "outcome": "delivered", "messageId": "sendgrid-1"}]
    [(email, routing, credential)] = rig.providers.by_name[SENDGRID].sent
    assert (email.to, email.subject, email.body, routing.job_id) == (
        "ada@example.com",
        "Hello",
        "<p>Hi Ada</p>",
        "job-1",
    )
    assert credential.api_key == SENDGRID_KEY
    assert not rig.queue.sent
    assert not rig.dead_letters.records


def test_given_inline_payload_when_delivered_then_two_writes_and_no_job_read(rig: Rig) -> None:
    """The budget: a delivered message costs 2 writes and no job read (plus the suppression get)."""
    rig.engine.handle(rig.submit(EMAIL))

    assert rig.store.calls == ["claim", "finish"]
    assert rig.suppressions.calls == ["is_suppressed"]


def test_given_first_provider_answers_500_when_handled_then_second_delivers_and_both_are_logged(
    rig: Rig,
) -> None:
    rig.providers.script(SENDGRID, transient(SENDGRID, 500))

    handled = rig.engine.handle(rig.submit(EMAIL))

    assert handled.result == "completed"
    state = rig.state()
    assert (state.status, state.used_provider) == ("completed", "RESEND")
    [log] = state.delivery_logs
    assert log.used_provider == "RESEND"
    assert [(entry["provider"], entry["outcome"]) for entry in log.tried] == [
        ("SENDGRID", "transient"),
        ("RESEND", "delivered"),
    ]
    assert log.tried[0]["status"] == 500
    assert rig.providers.calls == ["SENDGRID", "RESEND"]


# ---------------------------------------------------------------- retries and exhaustion


def test_given_every_provider_transient_when_redelivered_then_three_attempts_with_growing_delays_then_dead_letter(
    rig: Rig,
) -> None:
    for name in (SENDGRID, RESEND, POSTMARK):
        rig.providers.script(name, transient(name, 503))

    results = rig.run_until_settled(rig.submit(EMAIL))

    assert [(result.result, result.attempt) for result in results] == [
        ("retrying", 1),
        ("retrying", 2),
        ("failed", 3),
    ]
    first_delay, second_delay = (result.delay_seconds or 0 for result in results[:2])
    assert 24 <= first_delay <= 36  # base 30 +-20 %
    assert 48 <= second_delay <= 72  # 2 x base +-20 %
    assert calls_per_attempt(rig, 3) == [["SENDGRID", "RESEND", "POSTMARK"]] * 3
    state = rig.state()
    assert (state.status, int(state.attempts)) == ("failed", 3)
    assert state.error_message == "POSTMARK transient: the provider is having trouble (HTTP 503)"
    assert [(log.attempt, log.status) for log in state.delivery_logs] == [
        (1, "failed"),
        (2, "failed"),
        (3, "failed"),
    ]
    [copy] = rig.dead_letters.records
    assert copy["jobId"] == "job-1"
    assert copy["tenantId"] == TENANT
    assert copy["type"] == "email"
    assert copy["error"] == state.error_message
    assert (copy["attempts"], copy["maxAttempts"]) == (3, 3)
    assert copy["failedAt"].endswith("Z")
    assert copy["createdAt"] == state.created_at
    assert copy["payload"] == EMAIL
    # One alert for the operators, naming the job, its tenant and the last error.
    [alert] = rig.alerts.sent
    assert (alert.job_id, alert.tenant_id, alert.channel, alert.attempts) == ("job-1", TENANT, "email", 3)
    assert alert.error == state.error_message


def test_given_a_retry_when_re_sent_then_the_message_carries_the_attempt_seen_and_the_job_band(
    rig: Rig,
) -> None:
    for name in (SENDGRID, RESEND, POSTMARK):
        rig.providers.script(name, transient(name))

    rig.engine.handle(rig.submit(EMAIL, priority=1))

    [resent] = rig.queue.sent
    assert resent.priority is QueuePriority.CRITICAL
    assert resent.message.seen_attempts == 1
    assert resent.message.request == request_from_document(Channel.EMAIL, EMAIL)
    state = rig.state()
    assert (state.status, int(state.attempts)) == ("pending", 1)
    assert state.lease_until is None
    assert state.error_message == "POSTMARK transient: the provider is having trouble (HTTP 500)"


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [(600.0, 600), (5000.0, 900)],
    ids=["longer-than-backoff", "capped-at-sqs-maximum"],
)
def test_given_retry_after_longer_than_backoff_when_retried_then_it_is_honoured_up_to_900s(
    rig: Rig, retry_after: float, expected: int
) -> None:
    rig.providers.script(SENDGRID, transient(SENDGRID, 429, retry_after_seconds=retry_after))
    rig.providers.script(RESEND, transient(RESEND))
    rig.providers.script(POSTMARK, transient(POSTMARK))

    handled = rig.engine.handle(rig.submit(EMAIL))

    assert handled.delay_seconds == expected
    assert rig.queue.sent[0].delay_seconds == expected


def test_given_retry_after_shorter_than_backoff_when_retried_then_backoff_applies(rig: Rig) -> None:
    rig.providers.script(SENDGRID, transient(SENDGRID, 429, retry_after_seconds=2))
    rig.providers.script(RESEND, transient(RESEND))
    rig.providers.script(POSTMARK, transient(POSTMARK))

    handled = rig.engine.handle(rig.submit(EMAIL))

    assert 24 <= (handled.delay_seconds or 0) <= 36


# ---------------------------------------------------------------- classification


def test_given_only_provider_rejects_the_key_when_handled_then_the_job_fails_after_one_attempt(
    rig: Rig,
) -> None:
    rig.providers.script(SENDGRID, provider_permanent(SENDGRID))

    results = rig.run_until_settled(rig.submit(EMAIL, tenant=SOLO))

    assert [(result.result, result.attempt) for result in results] == [("failed", 1)]
    state = rig.state(SOLO)
    assert (state.status, int(state.attempts)) == ("failed", 1)
    assert state.error_message == "SENDGRID provider_permanent: the API key is invalid (HTTP 401)"
    assert len(rig.dead_letters.records) == 1


def test_given_first_provider_permanent_and_second_transient_when_retried_then_first_is_not_tried_again(
    rig: Rig,
) -> None:
    rig.providers.script(SENDGRID, provider_permanent(SENDGRID))
    rig.providers.script(RESEND, transient(RESEND), None)

    results = rig.run_until_settled(rig.submit(EMAIL, tenant=DUO))

    assert [result.result for result in results] == ["retrying", "completed"]
    assert rig.providers.calls == ["SENDGRID", "RESEND", "RESEND"]
    state = rig.state(DUO)
    assert list(state.skip_providers) == ["SENDGRID"]
    assert (state.status, state.used_provider, int(state.attempts)) == ("completed", "RESEND", 2)
    assert [entry["provider"] for entry in state.delivery_logs[1].tried] == ["RESEND"]


def test_given_remaining_provider_turns_permanent_on_retry_when_handled_then_the_job_ends(rig: Rig) -> None:
    rig.providers.script(SENDGRID, provider_permanent(SENDGRID))
    rig.providers.script(RESEND, transient(RESEND), provider_permanent(RESEND))

    results = rig.run_until_settled(rig.submit(EMAIL, tenant=DUO))

    assert [(result.result, result.attempt) for result in results] == [("retrying", 1), ("failed", 2)]
    assert rig.providers.calls == ["SENDGRID", "RESEND", "RESEND"]
    assert len(rig.dead_letters.records) == 1


def test_given_invalid_recipient_when_handled_then_the_job_fails_at_once_without_later_providers(
    rig: Rig,
) -> None:
    rig.providers.script(SENDGRID, message_permanent(SENDGRID))

    results = rig.run_until_settled(rig.submit(EMAIL))

    assert [(result.result, result.attempt) for result in results] == [("failed", 1)]
    assert rig.providers.calls == ["SENDGRID"]
    state = rig.state()
    assert state.error_message == "SENDGRID message_permanent: the recipient address is invalid (HTTP 422)"
    assert state.used_provider == "SENDGRID"
    # The tenant's recipient, not an operator's problem: no dead-letter copy, no alert.
    assert not rig.dead_letters.records
    assert not rig.alerts.sent
    assert not rig.suppressions.entries_by_tenant


def test_given_postmark_reports_an_inactive_recipient_when_handled_then_the_recipient_is_suppressed(
    rig: Rig,
) -> None:
    rig.providers.script(POSTMARK, message_permanent(POSTMARK, suppress_recipient=True, code="406"))
    payload = {**EMAIL, "to": "Gone@Example.com", "provider": "POSTMARK"}

    handled = rig.engine.handle(rig.submit(payload))

    assert handled.result == "failed"
    suppression = rig.suppressions.entries_by_tenant[TENANT]["gone@example.com"]
    assert (suppression.source, suppression.reason) == ("POSTMARK", "provider reported inactive recipient")


def test_given_suppressed_recipient_when_handled_then_it_fails_permanently_without_any_provider_call(
    rig: Rig,
) -> None:
    rig.suppressions.suppress(
        TENANT, Suppression("ada@example.com", "hard bounce", "2025-01-01T00:00:00.000Z", "SENDGRID")
    )

    results = rig.run_until_settled(rig.submit(EMAIL))

    assert [(result.result, result.attempt) for result in results] == [("failed", 1)]
    assert rig.providers.calls == []
    assert rig.state().error_message == SUPPRESSED == "recipient suppressed"
    assert not rig.dead_letters.records
    assert not rig.alerts.sent


# ---------------------------------------------------------------- routing


def test_given_forced_provider_and_fallback_when_every_attempt_fails_then_only_those_two_are_contacted(
    rig: Rig,
) -> None:
    rig.providers.script(RESEND, transient(RESEND))
    rig.providers.script(POSTMARK, transient(POSTMARK))
    payload = {**EMAIL, "provider": "RESEND", "fallback": "POSTMARK"}

    results = rig.run_until_settled(rig.submit(payload))

    assert [result.result for result in results] == ["retrying", "retrying", "failed"]
    assert calls_per_attempt(rig, 2) == [["RESEND", "POSTMARK"]] * 3
    assert not rig.providers.by_name[SENDGRID].sent


def test_given_free_plan_when_handled_then_only_the_platform_provider_sends(rig: Rig) -> None:
    handled = rig.engine.handle(rig.submit(EMAIL, tenant=FREE, plan=Plan.FREE))

    assert handled.result == "completed"
    assert rig.providers.calls == ["SES"]
    [(_, routing, credential)] = rig.providers.by_name[SES].sent
    assert credential.api_key == ""  # the platform's IAM role, never a tenant key
    assert routing.from_address == settings_for_tests().platform_sender
    assert rig.state(FREE).used_provider == "SES"


# ---------------------------------------------------------------- at-least-once in, at-most-once out


def test_given_the_same_message_twice_when_handled_then_the_second_is_a_no_op(rig: Rig) -> None:
    message = rig.submit(EMAIL)

    first, second = rig.engine.handle(message), rig.engine.handle(message)

    assert (first.result, second.result) == ("completed", "duplicate")
    assert rig.providers.calls == ["SENDGRID"]
    assert len(rig.state().delivery_logs) == 1


def test_given_a_live_claim_when_a_duplicate_arrives_then_it_does_not_send(rig: Rig) -> None:
    message = rig.submit(EMAIL)
    lease = int(rig.clock()) + LEASE_SECONDS
    rig.store.set_state(TENANT, "job-1", status=JobStatus.PROCESSING, attempts=1, lease_until=lease)

    handled = rig.engine.handle(message)

    assert handled.result == "duplicate"
    assert rig.providers.calls == []
    state = rig.state()
    assert (state.status, int(state.attempts), state.lease_until) == ("processing", 1, lease)


def test_given_a_stale_seen_attempts_when_handled_then_the_message_is_ignored(rig: Rig) -> None:
    message = rig.submit(EMAIL)
    rig.store.set_state(TENANT, "job-1", attempts=1)  # a retry already moved the job on

    handled = rig.engine.handle(message)

    assert handled.result == "duplicate"
    assert rig.providers.calls == []
    assert (rig.state().status, int(rig.state().attempts)) == ("pending", 1)


def test_given_an_unknown_job_when_handled_then_the_message_is_ignored(rig: Rig) -> None:
    message = JobMessage(
        "no-such-job", TENANT, Channel.EMAIL, Plan.STARTUP, 0, request_from_document(Channel.EMAIL, EMAIL)
    )

    assert rig.engine.handle(message).result == "duplicate"
    assert rig.providers.calls == []


# ---------------------------------------------------------------- crash recovery


def test_given_a_fault_of_herald_in_every_attempt_then_the_job_fails_with_that_reason_and_is_dead_lettered(
    rig: Rig,
) -> None:
    """Once the record crashed the batch instead: it came back as a lease run out, three times
    over 18 minutes, and failed as "the worker stopped during the last attempt"."""

    def crash() -> None:
        raise UnicodeEncodeError("ascii", "/hooks/\u2028", 7, 8, "ordinal not in range(128)")

    rig.providers.by_name[SENDGRID].during_send = crash
    reason = "Herald failed during the attempt (UnicodeEncodeError)"

    results = rig.run_until_settled(rig.submit(EMAIL, tenant=SOLO))

    assert [handled.result for handled in results] == ["retrying", "retrying", "failed"]
    state = rig.state(SOLO)
    assert (state.status, state.error_message) == ("failed", reason)
    assert [log.error_message for log in state.delivery_logs] == [reason] * 3
    [copy] = rig.dead_letters.records
    assert copy["error"] == reason


def test_given_an_expired_lease_when_the_message_comes_back_then_the_job_is_re_claimed(rig: Rig) -> None:
    message = rig.submit(EMAIL)
    rig.store.set_state(
        TENANT, "job-1", status=JobStatus.PROCESSING, attempts=1, lease_until=int(rig.clock()) - 1
    )

    handled = rig.engine.handle(message)

    assert handled == Handled("job-1", "completed", 2)
    assert int(rig.state().attempts) == 2
    assert [log.attempt for log in rig.state().delivery_logs] == [2]


def test_given_a_worker_crash_mid_attempt_when_redelivered_after_the_lease_then_the_next_attempt_delivers(
    rig: Rig,
) -> None:
    message = rig.submit(EMAIL)
    rig.suppressions.unavailable = {"is_suppressed"}
    with pytest.raises(DependencyError):
        rig.engine.handle(message)
    assert (rig.state().status, int(rig.state().attempts)) == ("processing", 1)

    rig.suppressions.unavailable = set()
    assert rig.engine.handle(message).result == "duplicate"  # the lease still holds
    rig.clock.advance(LEASE_SECONDS + 1)
    handled = rig.engine.handle(message)

    assert handled == Handled("job-1", "completed", 2)


def test_given_the_last_attempt_crashed_when_redelivered_then_the_job_fails_and_is_dead_lettered(
    rig: Rig,
) -> None:
    message = rig.submit(EMAIL)
    rig.store.set_state(
        TENANT, "job-1", status=JobStatus.PROCESSING, attempts=3, lease_until=int(rig.clock()) - 1
    )

    handled = rig.engine.handle(message)

    assert handled == Handled("job-1", "failed", 3)
    assert rig.providers.calls == []
    state = rig.state()
    assert (state.status, int(state.attempts)) == ("failed", 3)
    assert state.error_message == "the worker stopped during the last attempt"
    [log] = state.delivery_logs
    assert (log.attempt, log.status) == (3, "failed")
    [copy] = rig.dead_letters.records
    assert (copy["attempts"], copy["error"], copy["payload"]) == (
        3,
        "the worker stopped during the last attempt",
        EMAIL,
    )


def test_given_an_attempt_outlives_its_lease_when_another_worker_took_over_then_the_late_outcome_is_dropped(
    rig: Rig,
) -> None:
    message = rig.submit(EMAIL)
    takeover: list[Handled] = []
    sendgrid = rig.providers.by_name[SENDGRID]

    def another_worker_takes_over() -> None:
        if len(sendgrid.sent) == 1:  # the first send outlives its lease; a redelivery re-claims meanwhile
            rig.clock.advance(LEASE_SECONDS + 1)
            takeover.append(rig.engine.handle(message))

    sendgrid.during_send = another_worker_takes_over

    late = rig.engine.handle(message)

    assert takeover == [Handled("job-1", "completed", 2)]
    assert late == Handled("job-1", "lost-lease", 1)
    assert len(sendgrid.sent) == 2  # the price of a lease that ran out: at-least-once, not exactly-once
    state = rig.state()
    assert (state.status, int(state.attempts)) == ("completed", 2)
    assert [log.attempt for log in state.delivery_logs] == [2]


# ---------------------------------------------------------------- dependency failures


def test_given_the_re_send_fails_when_retrying_then_the_error_propagates_and_the_job_stays_claimed(
    rig: Rig,
) -> None:
    for name in (SENDGRID, RESEND, POSTMARK):
        rig.providers.script(name, transient(name), transient(name), None)
    message = rig.submit(EMAIL)
    rig.queue.failure = DependencyError("queue email-normal unavailable")

    with pytest.raises(DependencyError):
        rig.engine.handle(message)

    state = rig.state()
    assert (state.status, int(state.attempts)) == ("processing", 1)
    assert state.lease_until is not None
    assert not state.delivery_logs
    # SQS redelivers the original message after its visibility timeout, past the lease.
    rig.queue.failure = None
    rig.clock.advance(LEASE_SECONDS + 1)
    assert rig.engine.handle(message).attempt == 2


def test_given_the_dead_letter_send_fails_when_failing_then_the_error_propagates_and_the_job_is_not_failed(
    rig: Rig,
) -> None:
    rig.providers.script(SENDGRID, provider_permanent(SENDGRID))  # no usable provider: an operator's case
    message = rig.submit(EMAIL, tenant=SOLO)
    rig.dead_letters.failure = DependencyError("dead-letter queue unavailable")

    with pytest.raises(DependencyError):
        rig.engine.handle(message)

    state = rig.state(SOLO)
    assert (state.status, int(state.attempts)) == ("processing", 1)
    assert not state.delivery_logs
    assert not rig.dead_letters.records
    rig.dead_letters.failure = None
    rig.clock.advance(LEASE_SECONDS + 1)
    assert rig.engine.handle(message) == Handled("job-1", "failed", 2)
    assert len(rig.dead_letters.records) == 1


def test_given_a_payload_over_the_inline_limit_when_the_message_crosses_the_queue_then_the_engine_reads_it_from_the_store(
    rig: Rig,
) -> None:
    long_email = {**EMAIL, "body": "<p>" + "x" * INLINE_PAYLOAD_LIMIT + "</p>"}
    wire = encode_message(rig.submit(long_email))
    assert len(wire) < 1024  # the body stayed in the table

    handled = rig.engine.handle(decode_message(wire))

    assert handled.result == "completed"
    assert rig.store.calls == ["claim", "request", "finish"]
    assert rig.providers.by_name[SENDGRID].sent[0][0].body == long_email["body"]


def test_given_a_re_send_that_overtakes_the_release_of_its_attempt_when_handled_then_it_is_kept_for_redelivery(
    rig: Rig,
) -> None:
    """The re-send goes out before the job is released; if it arrives first (a short delay, a slow
    table write) it must come back later instead of being dropped as a duplicate."""
    rig.providers.script(SENDGRID, transient(SENDGRID), None)
    rig.providers.script(RESEND, transient(RESEND))
    rig.providers.script(POSTMARK, transient(POSTMARK))
    early: list[Handled | Exception] = []

    def deliver_at_once(enqueued: Enqueued) -> None:
        rig.queue.after_enqueue = None
        try:
            early.append(rig.engine.handle(enqueued.message))
        except AttemptNotReleased as exc:
            early.append(exc)

    rig.queue.after_enqueue = deliver_at_once

    first = rig.engine.handle(rig.submit(EMAIL))

    assert first.result == "retrying"
    assert [type(result) for result in early] == [AttemptNotReleased]
    # SQS makes the unacknowledged re-send visible again; by then the job is released.
    assert rig.engine.handle(rig.queue.take().message) == Handled("job-1", "completed", 2)
