"""Ordering keys on in-memory ports: a keyed job's retry holds its one message in flight (so its key's
later jobs wait behind it) instead of re-sending it to the back of its group, its redelivery claims
the next attempt, and an early keyed message is held rather than re-sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.queueing import decode_message, encode_message
from herald.adapters.store.conversions import request_from_document
from herald.batch.sqs import Worker, process_batch
from herald.composition.workers import WEBHOOK_RECORD_BUDGET_MILLIS
from herald.domain.attempts import AttemptOutcome
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import NotificationRequest
from herald.domain.ordering import head_of_line_bound, ordering_group
from herald.domain.plans import Plan
from herald.http.requests import EmailRequest, WebhookRequest
from herald.observability import metrics
from herald.services.delivery import HOLDING, DeliveryEngine, DeliveryPolicy
from herald.services.job_queries import requeue_failed
from tests.fakes.common import ManualClock
from tests.fakes.jobs import FakeJobTable
from tests.fakes.queues import FakeAlerts, FakeDeadLetters, FakeQueue, FakeReturns
from tests.unit.test_notification_requests import EMAIL, WEBHOOK
from tests.unit.test_notification_requests import _errors as refusal
from tests.unit.test_worker_batch import PLENTY, FakeContext, sqs_record

TENANT = "tenant-a"
DOCUMENT: dict[str, Any] = {
    "to": "ada@example.com",
    "subject": "Hello",
    "body": "<p>Hi</p>",
    "orderingKey": "order-7",
}
REQUEST = request_from_document(Channel.EMAIL, DOCUMENT)


@pytest.fixture(autouse=True)
def _clear_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


class Outcomes:
    """A channel attempt that answers from a script: False = a transient failure, True = delivered."""

    def __init__(self, *delivered: bool) -> None:
        self._script = list(delivered)

    def run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
        if self._script.pop(0):
            return AttemptOutcome(delivered=True, used_provider="SENDGRID")
        return AttemptOutcome(delivered=False, error_message="provider answered 503")


class Rig:
    def __init__(self, *delivered: bool) -> None:
        self.store, self.queue, self.clock, self.returns = (
            FakeJobTable(),
            FakeQueue(),
            ManualClock(),
            FakeReturns(),
        )
        self.engine = DeliveryEngine(
            DeliveryPolicy(max_attempts=3, retry_base_delay_seconds=30),
            store=self.store,
            queue=self.queue,
            dead_letters=FakeDeadLetters(),
            alerts=FakeAlerts(),
            attempt=Outcomes(*delivered),
            clock=self.clock,
        )

    def keyed(self, job_id: str = "job-1", **fields: Any) -> JobMessage:
        self.store.add_job(TENANT, job_id, DOCUMENT)
        return JobMessage(
            job_id, TENANT, Channel.EMAIL, Plan.STARTUP, 0, REQUEST, ordering_key="order-7", **fields
        )

    def batch(self, message: JobMessage) -> dict[str, Any]:
        record = sqs_record("msg-1", encode_message(message))
        record["eventSourceARN"] = "arn:aws:sqs:us-east-1:123456789012:herald-dev-email-ordered.fifo"
        worker = Worker(
            self.engine, FakeDeadLetters(), self.returns, decode_message, WEBHOOK_RECORD_BUDGET_MILLIS
        )
        return process_batch({"Records": [record]}, FakeContext(PLENTY), worker)


def test_a_keyed_jobs_retry_holds_its_message_instead_of_sending_a_new_one() -> None:
    rig = Rig(False, True)
    message = rig.keyed()
    handled = rig.engine.handle(message)
    assert handled.result == HOLDING
    assert 24 <= (handled.delay_seconds or 0) <= 36  # 30 s +- 20 %
    assert not rig.queue.sent
    state = rig.store.state(TENANT, "job-1")
    assert (state.status, state.attempts) == (JobStatus.PENDING, 1)
    # The same message, delivered again after the delay, takes the second attempt.
    assert rig.engine.handle(message).result == "completed"
    assert rig.store.state(TENANT, "job-1").attempts == 2


def test_the_worker_reports_a_held_message_as_failed_with_its_visibility_set_to_the_delay() -> None:
    rig = Rig(False)
    answer = rig.batch(rig.keyed())
    assert answer == {"batchItemFailures": [{"itemIdentifier": "msg-1"}]}
    [(queue, receipt, seconds)] = rig.returns.held
    assert (queue, receipt) == ("herald-dev-email-ordered.fifo", "AQEBmsg-1==")
    assert 24 <= seconds <= 36


def test_a_keyed_job_out_of_attempts_fails_and_its_message_is_deleted() -> None:
    rig = Rig(False, False, False)
    message = rig.keyed()
    assert [rig.engine.handle(message).result for _ in range(3)] == [HOLDING, HOLDING, "failed"]
    assert rig.batch(message) == {"batchItemFailures": []}  # a duplicate now: deleted


def test_an_early_keyed_message_is_held_for_the_rest_of_its_wait_not_re_sent() -> None:
    rig = Rig(True)
    send_at = "2023-11-14T22:15:00.000Z"  # 100 s after the manual clock's now (22:13:20)
    handled = rig.engine.handle(rig.keyed(send_at=send_at))
    assert (handled.result, handled.delay_seconds) == (HOLDING, 100)
    assert not rig.queue.sent
    assert rig.store.state(TENANT, "job-1").attempts == 0


def test_an_unkeyed_retry_is_still_a_delayed_re_send() -> None:
    rig = Rig(False)
    rig.store.add_job(TENANT, "job-2", DOCUMENT)
    handled = rig.engine.handle(JobMessage("job-2", TENANT, Channel.EMAIL, Plan.STARTUP, 0, REQUEST))
    assert handled.result == "retrying"
    assert rig.queue.take().message.seen_attempts == 1


def test_a_keys_message_group_is_its_tenants_alone_and_fits_sqs() -> None:
    group = ordering_group("tenant-a", "order-7")
    assert group != ordering_group("tenant-b", "order-7")
    assert group == ordering_group("tenant-a", "order-7")
    assert len(group) <= 128
    assert group.isalnum()


def test_the_head_of_line_bound_adds_every_attempt_and_the_longest_retry_delays() -> None:
    # 3 attempts of up to 60 s, retries after 30 s and 60 s at +20 %: 180 + 36 + 72.
    assert head_of_line_bound(3, 30, 60) == 288
    assert head_of_line_bound(1, 30, 60) == 60


@pytest.mark.parametrize("model", [EmailRequest, WebhookRequest])
def test_both_routes_take_an_ordering_key_of_1_to_128_printable_characters(
    model: type[EmailRequest] | type[WebhookRequest],
) -> None:
    body = EMAIL if model is EmailRequest else WEBHOOK
    assert model.model_validate({**body, "orderingKey": "order 7/a"}).to_request().ordering_key == "order 7/a"
    for value in ("", "k" * 129, "caf\u00e9", "line\nbreak"):
        errors = refusal(model, {**body, "orderingKey": value})
        assert [(error["type"], error["loc"]) for error in errors] == [
            ("invalid_ordering_key", ("orderingKey",))
        ]


def test_a_keyed_job_that_failed_is_retried_by_hand_into_its_keys_group() -> None:
    """Given a keyed job whose attempts ran out, When it is retried (POST .../retry, a redrive, a
    recovery), Then its new message carries its key: it joins the key's FIFO group instead of a
    priority queue, where it would race the key's later jobs."""
    rig = Rig(False, False, False)
    message = rig.keyed()
    for _ in range(3):
        rig.engine.handle(message)
    assert rig.store.state(TENANT, "job-1").status is JobStatus.FAILED

    state = requeue_failed(
        rig.store,
        rig.queue,
        tenant_id=TENANT,
        plan=Plan.STARTUP,
        job_id="job-1",
        max_attempts=3,
        now="2023-11-14T22:14:00.000Z",
    )

    assert state is not None
    assert state.ordering_key == "order-7"
    sent = rig.queue.take().message
    assert (sent.ordering_key, sent.seen_attempts) == ("order-7", 3)
