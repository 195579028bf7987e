"""The sweeper on in-memory ports: which jobs are stuck, what it does with them, and that running it
again changes nothing until the threshold has passed once more."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from herald.domain.backoff import MAX_DELAY_SECONDS
from herald.domain.clock import iso
from herald.domain.job_records import DeliveryLog, JobState
from herald.domain.jobs import Channel, JobStatus, QueuePriority
from herald.domain.plans import Plan
from herald.domain.sweeping import MAX_REQUEUES, checkpoints, is_stuck, quiet_since, slices
from herald.services.sweeper import RESERVE_MILLIS, Sweeper, SweepPolicy
from tests.fakes.common import settings_for_tests
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.queues import FakeAlerts, FakeDeadLetters, FakeQueue
from tests.fakes.tenants import FakeTenantTable

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STUCK_AFTER = timedelta(minutes=15)
WINDOW = timedelta(hours=2)
TENANT = "tenant-a"
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
PLENTY = 300_000


def ago(**delta: float) -> str:
    return iso(NOW - timedelta(**delta))


class Depths:
    """Waiting messages per queue URL (none unless a test says so)."""

    def __init__(self) -> None:
        self.waiting: dict[str, int] = {}

    def visible(self, queue_url: str) -> int:
        return self.waiting.get(queue_url, 0)


@dataclass
class Rig:
    jobs: FakeJobTable = field(default_factory=FakeJobTable)
    tenants: FakeTenantTable = field(default_factory=FakeTenantTable)
    queue: FakeQueue = field(default_factory=FakeQueue)
    dead_letters: FakeDeadLetters = field(default_factory=FakeDeadLetters)
    alerts: FakeAlerts = field(default_factory=FakeAlerts)
    depths: Depths = field(default_factory=Depths)
    counters: FakeCounters = field(default_factory=FakeCounters)
    now: datetime = NOW

    def sweeper(self) -> Sweeper:
        settings = settings_for_tests()
        return Sweeper(
            SweepPolicy(stuck_after=STUCK_AFTER, window=WINDOW),
            store=self.jobs,
            tenants=self.tenants,
            queue=self.queue,
            depths=self.depths,
            queue_urls=settings.queue_urls,
            ordered_queue_urls=settings.ordered_queue_urls,
            dead_letters=self.dead_letters,
            alerts=self.alerts,
            clock=lambda: self.now,
        )

    def sweep(self, millis_left: int = PLENTY) -> Any:
        return self.sweeper().sweep(lambda: millis_left)

    def state(self, job_id: str = "job-1") -> JobState:
        return self.jobs.state(TENANT, job_id)


@pytest.fixture
def rig() -> Rig:
    rig = Rig()
    rig.tenants.add_tenant(TENANT, Plan.STARTUP)
    return rig


# ---------------------------------------------------------------- the rules


def pending(created: str, **changes: Any) -> JobState:
    state = JobState("job-1", TENANT, Channel.EMAIL, JobStatus.PENDING, 5, 0, 3, created)
    return replace(state, **changes)


def test_a_job_never_claimed_is_quiet_since_it_was_accepted_or_last_re_queued() -> None:
    assert quiet_since(pending(ago(minutes=20))) == NOW - timedelta(minutes=20)
    assert quiet_since(pending(ago(minutes=20), requeued_at=ago(minutes=5))) == NOW - timedelta(minutes=5)
    assert is_stuck(pending(ago(minutes=15)), NOW, STUCK_AFTER)
    assert not is_stuck(pending(ago(minutes=14)), NOW, STUCK_AFTER)


def test_a_job_waiting_for_its_retry_is_left_for_the_longest_delay_sqs_allows() -> None:
    log = DeliveryLog("log-1", 1, False, ago(minutes=20))
    state = pending(ago(minutes=21), attempts=1, delivery_logs=(log,))

    assert quiet_since(state) == NOW - timedelta(minutes=20) + timedelta(seconds=MAX_DELAY_SECONDS)
    assert not is_stuck(state, NOW, STUCK_AFTER)
    assert is_stuck(state, NOW + timedelta(minutes=15), STUCK_AFTER)


def test_a_processing_job_is_quiet_from_the_end_of_its_lease_and_finished_jobs_never_are() -> None:
    lease_end = NOW - timedelta(minutes=16)
    processing = pending(
        ago(hours=1), status=JobStatus.PROCESSING, attempts=1, lease_until=int(lease_end.timestamp())
    )

    assert quiet_since(processing) == lease_end
    assert is_stuck(processing, NOW, STUCK_AFTER)
    assert not is_stuck(replace(processing, status=JobStatus.COMPLETED), NOW, STUCK_AFTER)
    assert not is_stuck(replace(processing, status=JobStatus.FAILED), NOW, STUCK_AFTER)


# ---------------------------------------------------------------- the sweep


def test_a_job_that_lost_its_first_message_is_queued_again_once(rig: Rig) -> None:
    """Given a job the API stored but never queued, When the sweeper runs twice, Then it is queued
    once, as the API would have (no payload inline: the worker reads it), and marked re-queued."""
    rig.jobs.add_job(TENANT, "job-1", EMAIL, priority=1, created_at=ago(minutes=20))

    first, second = rig.sweep(), rig.sweep()

    [sent] = rig.queue.sent
    assert sent.priority is QueuePriority.CRITICAL
    message = sent.message
    assert (message.job_id, message.tenant_id, message.plan, message.seen_attempts) == (
        "job-1",
        TENANT,
        "startup",
        0,
    )
    assert message.request is None
    assert (first.requeued, second.requeued) == (1, 0)
    state = rig.state()
    assert (state.status, state.sweeps, state.requeued_at) == (JobStatus.PENDING, 1, iso(NOW))


def test_a_job_whose_worker_died_after_the_queue_gave_up_is_queued_for_its_next_attempt(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(hours=1, minutes=2))
    lease_end = NOW - timedelta(minutes=30)
    rig.jobs.set_state(
        TENANT, "job-1", status=JobStatus.PROCESSING, attempts=2, lease_until=int(lease_end.timestamp())
    )

    report = rig.sweep()

    assert report.requeued == 1
    [sent] = rig.queue.sent
    assert sent.message.seen_attempts == 2


def test_young_finished_and_out_of_window_jobs_are_left_alone(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "young", EMAIL, created_at=ago(minutes=5))
    rig.jobs.add_job(TENANT, "old", EMAIL, created_at=ago(hours=3))
    rig.jobs.add_job(TENANT, "done", EMAIL, created_at=ago(minutes=30))
    rig.jobs.set_state(TENANT, "done", status=JobStatus.COMPLETED, attempts=1)

    report = rig.sweep()

    assert not rig.queue.sent
    assert (report.examined, report.requeued) == (0, 0)


def test_a_queue_with_messages_waiting_may_still_hold_the_job_so_it_is_left_for_later(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(minutes=20))
    rig.depths.waiting[settings_for_tests().queue_urls[(Channel.EMAIL, QueuePriority.NORMAL)]] = 40

    report = rig.sweep()

    assert (report.deferred, report.requeued, len(rig.queue.sent)) == (1, 0, 0)
    assert rig.state().sweeps == 0


def test_a_keyed_job_never_claimed_goes_back_to_its_keys_fifo_group_not_a_priority_queue(rig: Rig) -> None:
    """Given a keyed job that no worker claimed, When the sweeper re-queues it, Then its message
    carries the key (the queue puts it in the key's group) and the key's queue was the one checked
    for a backlog: a priority queue would let it overtake the key's earlier jobs."""
    rig.jobs.add_job(TENANT, "job-1", {**EMAIL, "orderingKey": "order-7"}, created_at=ago(minutes=20))
    rig.depths.waiting[settings_for_tests().queue_urls[(Channel.EMAIL, QueuePriority.NORMAL)]] = 40

    report = rig.sweep()

    assert report.requeued == 1
    [sent] = rig.queue.sent
    assert sent.message.ordering_key == "order-7"
    assert rig.jobs.calls.count("request") == 1
    assert rig.state().ordering_key == "order-7"


def test_a_keyed_job_is_left_while_its_keys_queue_has_messages_waiting(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", {**EMAIL, "orderingKey": "order-7"}, created_at=ago(minutes=20))
    rig.depths.waiting[settings_for_tests().ordered_queue_urls[Channel.EMAIL]] = 3

    report = rig.sweep()

    assert (report.deferred, report.requeued, len(rig.queue.sent)) == (1, 0, 0)


def test_a_claimed_keyed_job_keeps_its_key_from_its_status_without_reading_its_request(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", {**EMAIL, "orderingKey": "order-7"}, created_at=ago(hours=1, minutes=2))
    lease_end = NOW - timedelta(minutes=30)
    rig.jobs.set_state(
        TENANT,
        "job-1",
        status=JobStatus.PROCESSING,
        attempts=1,
        lease_until=int(lease_end.timestamp()),
        ordering_key="order-7",
    )

    rig.sweep()

    [sent] = rig.queue.sent
    assert (sent.message.ordering_key, sent.message.seen_attempts) == ("order-7", 1)
    assert "request" not in rig.jobs.calls


def test_a_job_re_queued_again_and_again_is_failed_with_a_reason_a_copy_and_an_alert(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(minutes=17))

    # It is looked at when 15, 30, 60 and 120 minutes old (the checkpoints), re-queued the first
    # three times, failed the fourth.
    reports = []
    for age in checkpoints(STUCK_AFTER, WINDOW):
        rig.now = NOW + age - STUCK_AFTER
        reports.append(rig.sweep())
    report = reports[-1]

    assert len(rig.queue.sent) == MAX_REQUEUES
    assert report.failed == 1
    state = rig.state()
    assert state.status is JobStatus.FAILED
    assert state.error_message == (
        "Not delivered: the sweeper re-queued this job 3 times and no worker finished it; "
        "an operator has its dead-letter copy."
    )
    [copy] = rig.dead_letters.records
    assert (copy["jobId"], copy["tenantId"], copy["error"], copy["payload"]) == (
        "job-1",
        TENANT,
        state.error_message,
        EMAIL,
    )
    [alert] = rig.alerts.sent
    assert (alert.job_id, alert.error) == ("job-1", state.error_message)


def test_a_job_that_moved_between_read_and_write_is_not_touched(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(minutes=20))
    [state] = rig.jobs.unfinished(TENANT, ago(hours=2), ago(minutes=15))
    rig.jobs.set_state(TENANT, "job-1", status=JobStatus.PROCESSING, attempts=1)

    assert not rig.jobs.mark_requeued(state, iso(NOW), 0)
    assert not rig.jobs.fail(state, "stuck", iso(NOW))


def test_a_sweep_short_of_time_stops_between_tenants_and_says_so(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(minutes=20))

    report = rig.sweep(millis_left=RESERVE_MILLIS - 1)

    assert (report.complete, report.tenants, len(rig.queue.sent)) == (False, 0, 0)


def test_a_table_that_fails_for_one_tenant_is_counted_and_the_others_are_swept(rig: Rig) -> None:
    rig.tenants.add_tenant("tenant-b", Plan.INDIE)
    rig.jobs.add_job(TENANT, "job-a", EMAIL, created_at=ago(minutes=20))
    rig.jobs.add_job("tenant-b", "job-b", EMAIL, created_at=ago(minutes=20))
    rig.jobs.unavailable.add("unfinished")

    report = rig.sweep()

    assert (report.tenants, report.errors) == (2, 2)
    rig.jobs.unavailable.clear()
    assert rig.sweep().requeued == 2


def test_a_tenant_without_recent_jobs_costs_the_sweeper_nothing(rig: Rig) -> None:
    rig.tenants.add_tenant("tenant-quiet", Plan.INDIE)
    rig.jobs.add_job("tenant-quiet", "job-old", EMAIL, created_at=ago(hours=5))

    report = rig.sweep()

    assert (report.tenants, report.examined) == (0, 0)
    assert "unfinished" not in rig.jobs.calls


@given(
    st.integers(min_value=0, max_value=3600 * 1000),
    st.lists(st.integers(min_value=1, max_value=30 * 60), min_size=60, max_size=120),
)
def test_runs_at_any_cadence_look_at_a_job_once_per_checkpoint(offset_ms: int, gaps: list[int]) -> None:
    """Whatever the time between runs (a schedule sped up, a missed run), each run reads what reached
    a checkpoint age since the last one: a job is read once per checkpoint, never on every run."""
    created = NOW + timedelta(milliseconds=offset_ms)
    since, now, looks = NOW, NOW, []
    for gap in gaps:
        now += timedelta(seconds=gap)
        looks += [
            (now, start)
            for start, until in slices(since, now, STUCK_AFTER, WINDOW)
            if start <= created < until
        ]
        since = now
    if now - created > WINDOW + timedelta(minutes=30):
        assert len(looks) == len(checkpoints(STUCK_AFTER, WINDOW)) == 4
    assert len(looks) <= 4
    assert all(run - created >= STUCK_AFTER for run, _ in looks)


def test_a_sweep_that_failed_somewhere_reads_the_same_ranges_again(rig: Rig) -> None:
    rig.jobs.add_job(TENANT, "job-1", EMAIL, created_at=ago(minutes=20))
    rig.jobs.unavailable.add("unfinished")
    assert rig.sweep().errors == 1
    rig.jobs.unavailable.clear()
    rig.now += timedelta(seconds=3)

    assert rig.sweep().requeued == 1
    assert rig.jobs.sweep_mark == rig.now
