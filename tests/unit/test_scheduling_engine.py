"""Scheduled sends on in-memory ports: acceptance with a sendAt, the dispatcher, cancel and its race
with the dispatch, and the worker's refusal to start a job early."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from msgspec import to_builtins

from herald.adapters.queueing import decode_message, encode_message
from herald.adapters.store.conversions import request_from_document
from herald.domain.clock import iso
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, JobStatus, QueuePriority
from herald.domain.plans import Plan
from herald.domain.scheduling import DueJob, SendAtOutOfRange, delay_seconds, due_time
from herald.http import answers
from herald.http.requests import EmailRequest, WebhookRequest
from herald.services.accept import AcceptedJob
from herald.services.activity import ActivityService
from herald.services.auth import Credentials
from herald.services.delivery import DeliveryEngine, DeliveryPolicy
from herald.services.dispatcher import Dispatcher
from herald.services.job_queries import JobQueries
from tests.fakes.audit import FakeAuditLog
from tests.fakes.breakers import FakeBreakers
from tests.fakes.common import NOW
from tests.fakes.queues import FakeAlerts, FakeDeadLetters
from tests.fakes.tenants import FakeTenantTable
from tests.unit.test_accept import API_KEY, PERIOD, Rig, email, tenant
from tests.unit.test_notification_requests import EMAIL, WEBHOOK
from tests.unit.test_notification_requests import _errors as refusal


def at(seconds: float) -> str:
    return iso(NOW + timedelta(seconds=seconds))


class Clock:
    """A datetime clock the test moves."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Stack:
    """The accept path, the job queries and the dispatcher over one in-memory table and queue."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.rig = Rig()
        self.jobs, self.queue, self.counters = self.rig.jobs, self.rig.queue, self.rig.counters
        self.rig.service._clock = self.clock  # the accept path's clock moves with the test's
        self.tenants = FakeTenantTable()
        self.tenants.add_tenant("t-1", Plan.STARTUP)
        self.queries = JobQueries(
            self.jobs,
            self.queue,
            ActivityService(self.counters, clock=self.clock),
            schedules=self.jobs,
            counters=self.counters,
            secrets=self.rig.vault,
            breakers=FakeBreakers(),
            audit=FakeAuditLog(self.tenants),
            max_attempts=3,
            clock=lambda: iso(self.clock()),
        )
        self.dispatcher = Dispatcher(self.jobs, self.queue, self.tenants, clock=self.clock)

    def accept(self, **fields: object) -> AcceptedJob:
        self.rig.caller = tenant()
        request = request_from_document(Channel.EMAIL, email(**fields))
        return self.rig.service.accept(Credentials(api_key=API_KEY), request)

    def dispatch(self) -> Any:
        return self.dispatcher.dispatch(lambda: 60_000)

    def usage(self) -> int:
        return self.counters.jobs.get(("t-1", PERIOD, "total"), 0)


@pytest.fixture
def stack() -> Stack:
    return Stack()


# ---------------------------------------------------------------- the rules of sendAt


def test_a_send_at_ahead_is_due_then_and_one_just_past_means_now() -> None:
    assert due_time(at(3600), NOW) == NOW + timedelta(hours=1)
    assert due_time(at(-59), NOW) is None
    assert due_time(None, NOW) is None
    assert due_time(iso(NOW + timedelta(days=30)), NOW) == NOW + timedelta(days=30)


@pytest.mark.parametrize("offset", [-61, 30 * 86400 + 1])
def test_a_send_at_over_a_minute_past_or_beyond_30_days_is_out_of_range(offset: int) -> None:
    with pytest.raises(SendAtOutOfRange):
        due_time(at(offset), NOW)


def test_the_delay_left_is_rounded_up_so_the_queue_never_hands_a_job_out_early() -> None:
    assert delay_seconds(iso(NOW + timedelta(seconds=10, milliseconds=1)), NOW) == 11
    assert delay_seconds(at(-5), NOW) == 0


# ---------------------------------------------------------------- acceptance


def test_a_scheduled_email_is_stored_scheduled_charged_and_not_queued(stack: Stack) -> None:
    accepted = stack.accept(sendAt=at(3600))
    state = stack.jobs.state("t-1", accepted.job_id)
    assert (state.status, state.send_at) == (JobStatus.SCHEDULED, at(3600))
    assert not stack.queue.sent
    assert stack.usage() == 1
    assert to_builtins(answers.AcceptedJob.of(accepted)) == {
        "jobId": accepted.job_id,
        "status": "scheduled",
        "type": "email",
        "createdAt": at(0),
        "sendAt": at(3600),
    }
    assert answers.Job.of_view(stack.queries.get(tenant(), accepted.job_id)).send_at == at(3600)


def test_a_send_at_given_with_another_offset_is_kept_in_utc(stack: Stack) -> None:
    accepted = stack.accept(sendAt="2026-11-30T15:00:30.000+02:00")
    assert stack.jobs.state("t-1", accepted.job_id).send_at == "2026-11-30T13:00:30.000Z"


def test_a_send_at_just_past_is_sent_now(stack: Stack) -> None:
    accepted = stack.accept(sendAt=at(-30))
    assert answers.AcceptedJob.of(accepted).status == "pending"
    assert stack.queue.take().delay_seconds == 0


@pytest.mark.parametrize("offset", [-120, 31 * 86400])
def test_a_send_at_out_of_range_is_refused_before_anything_is_charged(stack: Stack, offset: int) -> None:
    with pytest.raises(HeraldError) as refused:
        stack.accept(sendAt=at(offset))
    assert refused.value.code is ErrorCode.SEND_AT_OUT_OF_RANGE
    assert "between now and 30 days ahead" in refused.value.message
    assert stack.usage() == 0
    assert stack.jobs.jobs == {}


def test_a_schedule_that_cannot_be_recorded_fails_the_job_with_503_and_its_id(stack: Stack) -> None:
    stack.jobs.unavailable.add("schedule")
    with pytest.raises(HeraldError) as refused:
        stack.accept(sendAt=at(3600))
    assert refused.value.code is ErrorCode.QUEUE_UNAVAILABLE
    job_id = refused.value.extra["jobId"]
    state = stack.jobs.state("t-1", job_id)
    assert state.status is JobStatus.FAILED
    assert (state.error_message or "").startswith("Could not be scheduled")


# ---------------------------------------------------------------- the dispatcher


def test_the_dispatcher_queues_what_falls_due_within_its_horizon_with_the_delay_left(stack: Stack) -> None:
    soon = stack.accept(sendAt=at(90)).job_id
    later = stack.accept(sendAt=at(600)).job_id
    report = stack.dispatch()
    assert (report.dispatched, report.errors) == (1, 0)
    sent = stack.queue.take()
    assert (sent.message.job_id, sent.delay_seconds, sent.priority) == (soon, 90, QueuePriority.NORMAL)
    assert (sent.message.plan, sent.message.send_at, sent.message.seen_attempts) == ("startup", at(90), 0)
    assert stack.jobs.state("t-1", soon).status is JobStatus.PENDING
    assert stack.jobs.state("t-1", later).status is JobStatus.SCHEDULED
    # Quiet for the sweeper from its due time on.
    assert stack.jobs.state("t-1", soon).requeued_at == at(90)


def test_the_dispatcher_sends_the_plan_the_tenant_has_at_send_time(stack: Stack) -> None:
    stack.accept(sendAt=at(30))
    stack.tenants.add_tenant("t-1", Plan.FREE)
    stack.dispatch()
    assert stack.queue.take().message.plan == "free"


def test_a_dispatch_whose_send_fails_leaves_the_job_scheduled_for_the_next_run(stack: Stack) -> None:
    job_id = stack.accept(sendAt=at(30)).job_id
    stack.queue.failure = DependencyError("queue email-normal unavailable")
    assert stack.dispatch().errors == 1
    assert stack.jobs.state("t-1", job_id).status is JobStatus.SCHEDULED
    stack.queue.failure = None
    assert stack.dispatch().dispatched == 1
    assert stack.queue.take().message.job_id == job_id


def test_a_second_run_does_not_dispatch_a_job_twice(stack: Stack) -> None:
    stack.accept(sendAt=at(30))
    stack.dispatch()
    assert stack.dispatch().dispatched == 0
    assert len(stack.queue.sent) == 1


# ---------------------------------------------------------------- cancel


def test_cancel_ends_a_scheduled_job_and_takes_it_off_the_usage(stack: Stack) -> None:
    job_id = stack.accept(sendAt=at(3600)).job_id
    view = stack.queries.cancel(tenant(), job_id)
    document = to_builtins(answers.Job.of_view(view))
    assert (document["status"], document["completedAt"], document["sendAt"]) == ("cancelled", at(0), at(3600))
    assert stack.usage() == 0
    # Still one of its day's jobs, counted as cancelled once its status change is tallied.
    stack.jobs.tally(stack.counters)
    listing = stack.queries.list(
        tenant(), page=1, limit=20, channel=None, status=JobStatus.CANCELLED, cursor=None
    )
    assert (len(listing.items), listing.total) == (1, 1)
    stack.clock.now += timedelta(hours=2)
    assert stack.dispatch().dispatched == 0
    assert not stack.queue.sent


def test_cancel_after_the_dispatch_began_answers_409(stack: Stack) -> None:
    job_id = stack.accept(sendAt=at(30)).job_id
    stack.dispatch()
    with pytest.raises(HeraldError) as refused:
        stack.queries.cancel(tenant(), job_id)
    assert refused.value.code is ErrorCode.JOB_NOT_CANCELLABLE
    assert refused.value.message.endswith("this one is pending.")
    assert stack.usage() == 1


def test_cancel_of_a_job_sent_at_once_answers_409_and_of_an_unknown_job_404(stack: Stack) -> None:
    job_id = stack.accept().job_id
    with pytest.raises(HeraldError) as refused:
        stack.queries.cancel(tenant(), job_id)
    assert refused.value.code is ErrorCode.JOB_NOT_CANCELLABLE
    with pytest.raises(HeraldError) as unknown:
        stack.queries.cancel(tenant(), "no-such-job")
    assert unknown.value.code is ErrorCode.JOB_NOT_FOUND


class ReadThenCancel:
    """The dispatcher's schedules, with the tenant's cancel landing between its index read and its
    claim: the moment the two race for."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack

    def due(self, until: str) -> Iterator[DueJob]:
        read = list(self._stack.jobs.due(until))
        for job in read:
            self._stack.queries.cancel(tenant(), job.job_id)
        return iter(read)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stack.jobs, name)


def test_a_cancel_between_the_index_read_and_the_claim_wins_and_nothing_is_sent(stack: Stack) -> None:
    job_id = stack.accept(sendAt=at(30)).job_id
    racing = Dispatcher(ReadThenCancel(stack), stack.queue, stack.tenants, clock=stack.clock)
    report = racing.dispatch(lambda: 60_000)
    assert (report.dispatched, report.taken_meanwhile) == (0, 1)
    assert stack.jobs.state("t-1", job_id).status is JobStatus.CANCELLED
    assert not stack.queue.sent


# ---------------------------------------------------------------- the worker


def test_a_worker_sends_an_early_message_back_for_the_rest_of_its_wait_without_claiming(stack: Stack) -> None:
    job_id = stack.accept(sendAt=at(30)).job_id
    stack.dispatch()
    message = stack.queue.take().message
    clock_seconds = NOW.timestamp() + 10  # 20 s before its sendAt
    engine = DeliveryEngine(
        DeliveryPolicy(3, 30),
        store=stack.jobs,
        queue=stack.queue,
        dead_letters=FakeDeadLetters(),
        alerts=FakeAlerts(),
        attempt=None,  # type: ignore[arg-type]  # never reached: the job is not started
        clock=lambda: clock_seconds,
    )
    handled = engine.handle(message)
    assert (handled.result, handled.delay_seconds) == ("early", 20)
    assert stack.queue.take().delay_seconds == 20
    assert stack.jobs.state("t-1", job_id).attempts == 0


def test_the_message_carries_its_send_at_through_the_wire_format() -> None:
    message = JobMessage("j", "t", Channel.WEBHOOK, "indie", 0, None, send_at=at(60))
    assert decode_message(encode_message(message)).send_at == at(60)
    assert "sendAt" not in encode_message(JobMessage("j", "t", Channel.WEBHOOK, "indie", 0, None))


@pytest.mark.parametrize("model", [EmailRequest, WebhookRequest])
def test_both_routes_take_a_send_at_with_an_offset_and_refuse_one_without(
    model: type[EmailRequest] | type[WebhookRequest],
) -> None:
    body = EMAIL if model is EmailRequest else WEBHOOK
    assert model.model_validate({**body, "sendAt": "2026-12-01T10:00:00+01:00"}).to_request().send_at == (
        "2026-12-01T09:00:00.000Z"
    )
    for value in ("2026-12-01T10:00:00", "tomorrow", "2026-12-01"):
        errors = refusal(model, {**body, "sendAt": value})
        assert [(error["type"], error["loc"]) for error in errors] == [("invalid_send_at", ("sendAt",))]
        assert "with an offset" in errors[0]["msg"]


def test_a_keyed_scheduled_job_is_queued_only_once_due_since_a_fifo_queue_delays_no_message(
    stack: Stack,
) -> None:
    job_id = stack.accept(sendAt=at(30), orderingKey="order-7").job_id
    assert stack.dispatch().dispatched == 0
    assert stack.jobs.state("t-1", job_id).status is JobStatus.SCHEDULED
    stack.clock.now += timedelta(seconds=30)
    assert stack.dispatch().dispatched == 1
    sent = stack.queue.take()
    assert (sent.message.ordering_key, sent.delay_seconds) == ("order-7", 0)
