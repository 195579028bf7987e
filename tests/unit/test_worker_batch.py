"""The SQS side of the workers: real SQS batch events in, ``batchItemFailures`` out."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.adapters.providers.transport import (
    CONNECT_TIMEOUT_SECONDS,
    FULL_PASS_SECONDS,
    READ_TIMEOUT_SECONDS,
)
from herald.adapters.queueing import decode_message, encode_message
from herald.adapters.store.conversions import request_from_document
from herald.batch.sqs import Worker, process_batch
from herald.composition.workers import WRITES_SECONDS, email_record_budget_millis
from herald.domain.attempts import AttemptOutcome
from herald.domain.errors import DependencyError
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import Channel
from herald.domain.notifications import NotificationRequest
from herald.domain.plans import Plan
from herald.domain.vendors import TENANT_PROVIDERS
from herald.observability import logger, metrics
from herald.services.delivery import DeliveryEngine, DeliveryPolicy
from tests.fakes.common import ManualClock
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.queues import FakeAlerts, FakeDeadLetters, FakeQueue, FakeReturns

TENANT = "tenant-a"
QUEUE_ARN = "arn:aws:sqs:us-east-1:123456789012:herald-dev-email-normal"
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
EMAIL_REQUEST = request_from_document(Channel.EMAIL, EMAIL)
PLENTY = 90_000
RECORD_BUDGET_MILLIS = email_record_budget_millis()


@pytest.fixture(autouse=True)
def _clear_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


class FakeContext(LambdaContext):
    """A Lambda context whose remaining time follows a script, one value per question."""

    def __init__(self, *remaining_millis: int) -> None:
        self._function_name = "herald-dev-email-worker"
        self._aws_request_id = "req-1"
        self._remaining = list(remaining_millis)

    def get_remaining_time_in_millis(self) -> int:  # type: ignore[override]
        return self._remaining.pop(0) if len(self._remaining) > 1 else self._remaining[0]


def sqs_record(message_id: str, body: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": f"AQEB{message_id}==",
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "1700000000000",
            "SenderId": "AROAEXAMPLE:herald-dev-api",
            "ApproximateFirstReceiveTimestamp": "1700000000100",
            "MessageGroupId": TENANT,
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": QUEUE_ARN,
        "awsRegion": "us-east-1",
    }


def sqs_event(*records: dict[str, Any]) -> dict[str, Any]:
    return {"Records": list(records)}


@dataclass
class ScriptedAttempt:
    """A channel attempt that delivers, except for the jobs told to raise."""

    raises: dict[str, Exception] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
        self.calls.append(message.job_id)
        failure = self.raises.get(message.job_id)
        if failure is not None:
            raise failure
        return AttemptOutcome(delivered=True, used_provider="SENDGRID")


@dataclass
class BatchRig:
    store: FakeJobTable
    dead_letters: FakeDeadLetters
    attempt: ScriptedAttempt
    engine: DeliveryEngine
    returns: FakeReturns
    counters: FakeCounters

    def job(self, job_id: str) -> dict[str, Any]:
        """A stored job and the SQS record of its first message."""
        self.store.add_job(TENANT, job_id, EMAIL)
        body = encode_message(JobMessage(job_id, TENANT, Channel.EMAIL, Plan.STARTUP, 0, EMAIL_REQUEST))
        return sqs_record(f"msg-{job_id}", body)

    def status(self, job_id: str) -> str:
        return str(self.store.state(TENANT, job_id).status)


@pytest.fixture
def worker() -> BatchRig:
    store, dead_letters, attempt = FakeJobTable(), FakeDeadLetters(), ScriptedAttempt()
    engine = DeliveryEngine(
        DeliveryPolicy(max_attempts=3, retry_base_delay_seconds=30),
        store=store,
        queue=FakeQueue(),
        dead_letters=dead_letters,
        alerts=FakeAlerts(),
        attempt=attempt,
        clock=ManualClock(),
    )
    return BatchRig(store, dead_letters, attempt, engine, FakeReturns(), FakeCounters())


def run(worker: BatchRig, event: dict[str, Any], context: LambdaContext | None = None) -> dict[str, Any]:
    return process_batch(
        event,
        context or FakeContext(PLENTY),
        Worker(worker.engine, worker.dead_letters, worker.returns, decode_message, RECORD_BUDGET_MILLIS),
    )


# ---------------------------------------------------------------- partial failures


def test_given_three_records_when_one_raises_then_only_that_message_is_reported(worker: BatchRig) -> None:
    event = sqs_event(worker.job("job-1"), worker.job("job-2"), worker.job("job-3"))
    worker.attempt.raises["job-2"] = DependencyError("key service unavailable")

    response = run(worker, event)

    assert response == {"batchItemFailures": [{"itemIdentifier": "msg-job-2"}]}
    assert [worker.status(job) for job in ("job-1", "job-2", "job-3")] == [
        "completed",
        "processing",  # claimed; the redelivery re-claims it once the lease ends
        "completed",
    ]


def test_given_every_record_raises_when_processed_then_all_are_reported_instead_of_failing_the_invocation(
    worker: BatchRig,
) -> None:
    event = sqs_event(worker.job("job-1"), worker.job("job-2"))
    outage = DependencyError("table unavailable")
    worker.attempt.raises.update({"job-1": outage, "job-2": outage})

    response = run(worker, event)

    assert response == {
        "batchItemFailures": [{"itemIdentifier": "msg-job-1"}, {"itemIdentifier": "msg-job-2"}]
    }


def test_given_a_fault_of_herald_in_one_record_then_its_attempt_fails_with_that_reason_and_is_retried(
    worker: BatchRig,
) -> None:
    """The replayed crash: a webhook URL http.client could not encode crashed the record, which came
    back as a lease run out, attempt after attempt, and failed as "the worker stopped"."""
    event = sqs_event(worker.job("job-1"), worker.job("job-2"))
    worker.attempt.raises["job-1"] = UnicodeEncodeError("ascii", "/hooks/café", 10, 11, "not ASCII")

    response = run(worker, event)

    assert response == {"batchItemFailures": []}
    job = worker.store.state(TENANT, "job-1")
    assert (job.status, job.error_message) == (
        "pending",
        "Herald failed during the attempt (UnicodeEncodeError)",
    )
    assert [log.error_message for log in job.delivery_logs] == [
        "Herald failed during the attempt (UnicodeEncodeError)"
    ]
    assert worker.status("job-2") == "completed"


def test_given_the_same_message_twice_in_a_batch_when_processed_then_it_is_delivered_once(
    worker: BatchRig,
) -> None:
    record = worker.job("job-1")
    duplicate = {**record, "messageId": "msg-job-1-again"}

    response = run(worker, sqs_event(record, duplicate))

    assert response == {"batchItemFailures": []}
    assert worker.attempt.calls == ["job-1"]


# ---------------------------------------------------------------- malformed messages


@pytest.mark.parametrize(
    "body",
    [
        "not json at all",
        '{"v":9,"jobId":"job-x","tenantId":"t","type":"email","plan":"free","seenAttempts":0}',
        '{"v":1,"jobId":"job-x","tenantId":"t","type":"pigeon","plan":"free","seenAttempts":0}',
        "[1, 2, 3]",
    ],
    ids=["not-json", "unknown-version", "unknown-type", "json-array"],
)
def test_given_a_malformed_body_when_processed_then_it_is_dead_lettered_and_not_retried(
    worker: BatchRig, body: str
) -> None:
    event = sqs_event(worker.job("job-1"), sqs_record("msg-bad", body))

    response = run(worker, event)

    assert response == {"batchItemFailures": []}
    assert worker.status("job-1") == "completed"
    [copy] = worker.dead_letters.records
    assert (copy["messageId"], copy["body"]) == ("msg-bad", body)
    assert copy["error"].startswith("malformed job message: ")


def test_given_a_malformed_body_and_the_dead_letter_queue_down_when_processed_then_it_is_retried(
    worker: BatchRig,
) -> None:
    worker.dead_letters.failure = DependencyError("dead-letter queue unavailable")
    event = sqs_event(worker.job("job-1"), sqs_record("msg-bad", "{oops"))

    response = run(worker, event)

    assert response == {"batchItemFailures": [{"itemIdentifier": "msg-bad"}]}


def test_given_a_huge_malformed_body_when_dead_lettered_then_only_its_start_is_copied(
    worker: BatchRig,
) -> None:
    body = "x" * 100_000

    run(worker, sqs_event(sqs_record("msg-bad", body)))

    assert worker.dead_letters.records[0]["body"] == body[:4096]


# ---------------------------------------------------------------- time budget


def test_a_full_pass_over_every_vendor_timing_out_ends_within_the_record_budget() -> None:
    """However many vendors the provider table has, a tenant with all of them is passed over in
    time, each keeping the 10 s read timeout it always had."""
    one_call = CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS

    assert READ_TIMEOUT_SECONDS == 10.0
    assert len(TENANT_PROVIDERS) * one_call == pytest.approx(FULL_PASS_SECONDS)
    assert FULL_PASS_SECONDS + WRITES_SECONDS <= RECORD_BUDGET_MILLIS / 1000


def test_given_too_little_time_left_when_a_batch_arrives_then_every_record_is_reported_untouched(
    worker: BatchRig,
) -> None:
    event = sqs_event(worker.job("job-1"), worker.job("job-2"), worker.job("job-3"))

    response = run(worker, event, FakeContext(RECORD_BUDGET_MILLIS - 1))

    assert response == {
        "batchItemFailures": [
            {"itemIdentifier": "msg-job-1"},
            {"itemIdentifier": "msg-job-2"},
            {"itemIdentifier": "msg-job-3"},
        ]
    }
    assert worker.attempt.calls == []
    assert worker.store.calls == []  # not even claimed: nothing waits for a lease to run out
    # Back on the queue at once, not after the visibility timeout.
    assert worker.returns.returned == [("herald-dev-email-normal", f"AQEBmsg-job-{n}==") for n in (1, 2, 3)]


def test_given_time_runs_short_mid_batch_when_processed_then_the_rest_is_reported_untouched(
    worker: BatchRig,
) -> None:
    event = sqs_event(worker.job("job-1"), worker.job("job-2"), worker.job("job-3"))

    response = run(worker, event, FakeContext(PLENTY, RECORD_BUDGET_MILLIS, RECORD_BUDGET_MILLIS - 1))

    assert response == {"batchItemFailures": [{"itemIdentifier": "msg-job-3"}]}
    assert worker.attempt.calls == ["job-1", "job-2"]
    assert worker.status("job-3") == "pending"
    assert worker.returns.returned == [("herald-dev-email-normal", "AQEBmsg-job-3==")]


# ---------------------------------------------------------------- observability


def test_given_a_data_key_cache_when_a_batch_runs_then_its_hits_and_misses_become_metrics(
    worker: BatchRig,
) -> None:
    from herald.adapters.data_key_cache import DataKeyCache

    cache = DataKeyCache()
    cache.get(b"wrapped", TENANT, "provider-key")  # a miss before the batch: not this batch's

    class CountingAttempt:
        def run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
            cache.put(b"wrapped", TENANT, "provider-key", b"k" * 32)
            cache.get(b"wrapped", TENANT, "provider-key")
            return AttemptOutcome(delivered=True, used_provider="SENDGRID")

    worker.engine._attempt = CountingAttempt()
    event = sqs_event(worker.job("job-1"), worker.job("job-2"))

    process_batch(
        event,
        FakeContext(PLENTY),
        Worker(
            worker.engine, worker.dead_letters, worker.returns, decode_message, RECORD_BUDGET_MILLIS, cache
        ),
    )

    emitted = metrics.metric_set
    assert emitted["DataKeyCacheHits"]["Value"] == [2.0]
    assert emitted["DataKeyCacheMisses"]["Value"] == [0.0]


# ---------------------------------------------------------------- log lines


@pytest.fixture
def log_lines(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[dict[str, Any]]]:
    """The JSON lines the functions' logger writes from now on."""
    stream = io.StringIO()
    monkeypatch.setattr(logger.registered_handler, "stream", stream)
    return lambda: [json.loads(line) for line in stream.getvalue().splitlines()]


def test_every_line_about_a_record_names_its_job_tenant_and_the_request_that_queued_it(
    worker: BatchRig, log_lines: Callable[[], list[dict[str, Any]]]
) -> None:
    worker.store.add_job(TENANT, "job-1", EMAIL)
    queued_by_request = JobMessage(
        "job-1", TENANT, Channel.EMAIL, Plan.STARTUP, 0, EMAIL_REQUEST, correlation_id="api-request-7"
    )
    worker.store.add_job(TENANT, "job-2", EMAIL)
    worker.attempt.raises["job-2"] = DependencyError("key service unavailable")
    from_elsewhere = JobMessage("job-2", TENANT, Channel.EMAIL, Plan.STARTUP, 0, EMAIL_REQUEST)

    run(
        worker,
        sqs_event(
            sqs_record("msg-1", encode_message(queued_by_request)),
            sqs_record("msg-2", encode_message(from_elsewhere)),
        ),
    )

    lines = log_lines()
    handled = next(line for line in lines if line["message"] == "job handled")
    failed = next(line for line in lines if line["message"] == "job message failed")
    assert (handled["job_id"], handled["tenant_id"], handled["correlation_id"]) == (
        "job-1",
        TENANT,
        "api-request-7",
    )
    # A message without the id (from before it existed) is known by its SQS message id.
    assert (failed["job_id"], failed["tenant_id"], failed["correlation_id"]) == ("job-2", TENANT, "msg-2")


def test_a_retried_job_is_logged_with_the_delay_before_its_next_attempt(
    worker: BatchRig, log_lines: Callable[[], list[dict[str, Any]]]
) -> None:
    """Given one job delivered and one whose pass fails transiently (base delay 30 s), Then the
    retried job's line says in how many seconds it comes back, within the ±20 % jitter, and the
    delivered job's line says no delay."""
    delivered, retried = worker.job("job-1"), worker.job("job-2")

    class FailsJob2(ScriptedAttempt):
        def run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
            if message.job_id == "job-2":
                return AttemptOutcome(delivered=False, used_provider="SENDGRID", error_message="HTTP 500")
            return super().run(message, request, claim)

    worker.engine._attempt = FailsJob2()
    run(worker, sqs_event(delivered, retried))

    handled = {line["job_id"]: line for line in log_lines() if line["message"] == "job handled"}
    assert (handled["job-1"]["result"], "delay_seconds" in handled["job-1"]) == ("completed", False)
    assert (handled["job-2"]["result"], handled["job-2"]["attempt"]) == ("retrying", 1)
    assert 24 <= handled["job-2"]["delay_seconds"] <= 36
