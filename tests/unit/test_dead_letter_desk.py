"""The operator's dead-letter desk: what the queue holds, read without taking it away, and redrives
that restart failed jobs as a tenant's retry does and clear the copies."""

from __future__ import annotations

from typing import Any

import pytest

from herald.adapters.dead_letters import letter_document
from herald.adapters.store.conversions import request_from_document
from herald.domain.dead_letters import FailedJobCopy, LetterKind
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, JobStatus
from herald.domain.plans import Plan
from herald.services.dead_letter_desk import DeadLetterDesk, Outcome
from tests.fakes.events import FakeFanoutQueue
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.queues import FakeDeadLetterInbox, FakeQueue
from tests.fakes.tenants import FakeTenantTable

TENANT = "tenant-a"
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}


class Desk:
    def __init__(self) -> None:
        self.inbox, self.jobs, self.queue = FakeDeadLetterInbox(), FakeJobTable(), FakeQueue()
        self.tenants, self.counters = FakeTenantTable(), FakeCounters()
        self.fanout = FakeFanoutQueue()
        self.tenants.add_tenant(TENANT, Plan.INDIE)
        self.desk = DeadLetterDesk(
            self.inbox,
            jobs=self.jobs,
            tenants=self.tenants,
            queue=self.queue,
            fanout=self.fanout,
            max_attempts=3,
            clock=lambda: "T",
        )

    def failed_job(self, job_id: str, attempts: int = 3) -> None:
        """A job that failed for good, with the copy its worker wrote."""
        self.jobs.add_job(TENANT, job_id, EMAIL)
        self.jobs.set_state(
            TENANT, job_id, status=JobStatus.FAILED, attempts=attempts, error_message="HTTP 503"
        )
        message = JobMessage(
            job_id, TENANT, self.jobs.state(TENANT, job_id).channel, Plan.INDIE, attempts, None
        )
        request = request_from_document(Channel.EMAIL, EMAIL)
        copy = FailedJobCopy(message, request, "HTTP 503", attempts, 3, "2026-01-01T00:00:00.000Z")
        self.inbox.put(f"m-{job_id}", letter_document(copy))


@pytest.fixture
def desk() -> Desk:
    return Desk()


def test_listing_shows_every_kind_of_message_and_leaves_them_all_in_the_queue(desk: Desk) -> None:
    desk.failed_job("job-1")
    desk.inbox.put(
        "m-raw",
        {"v": 1, "jobId": "job-2", "tenantId": TENANT, "type": "webhook", "plan": "indie", "seenAttempts": 1},
    )
    desk.inbox.put("m-junk", "not json at all")

    letters = desk.desk.letters()

    kinds = {letter.message_id: (letter.kind, letter.job_id) for letter in letters}
    assert kinds == {
        "m-job-1": (LetterKind.COPY, "job-1"),
        "m-raw": (LetterKind.REDRIVEN, "job-2"),
        "m-junk": (LetterKind.UNREADABLE, None),
    }
    assert desk.inbox.held == set()
    assert desk.inbox.deleted == []


def test_show_finds_a_jobs_copies_by_job_id_or_message_id(desk: Desk) -> None:
    desk.failed_job("job-1")

    [letter] = desk.desk.letter("job-1")
    assert desk.desk.letter("m-job-1") == [letter]
    assert letter.document()["body"]["payload"] == EMAIL
    assert desk.desk.letter("job-404") == []


def test_a_redrive_restarts_the_failed_job_with_a_fresh_budget_and_deletes_its_copy(desk: Desk) -> None:
    desk.failed_job("job-1")
    desk.failed_job("job-2")

    [result] = desk.desk.redrive("job-1")

    assert (result.outcome, result.detail) == (Outcome.REDRIVEN, "queued again (attempt 4 next)")
    state = desk.jobs.state(TENANT, "job-1")
    assert (state.status, state.attempts, state.max_attempts, state.requeued_at) == (
        JobStatus.PENDING,
        3,
        6,
        "T",
    )
    [sent] = desk.queue.sent
    assert (sent.message.job_id, sent.message.seen_attempts, sent.message.plan) == ("job-1", 3, "indie")
    assert desk.inbox.deleted == ["m-job-1"]
    assert set(desk.inbox.waiting) == {"m-job-2"}
    assert desk.inbox.held == set()


def test_redrive_all_clears_what_it_can_and_keeps_what_an_operator_must_read(desk: Desk) -> None:
    desk.failed_job("job-1")
    desk.failed_job("job-2")
    desk.jobs.set_state(TENANT, "job-2", status=JobStatus.COMPLETED)  # the tenant retried it meanwhile
    desk.inbox.put("m-gone", {"jobId": "job-gone", "tenantId": TENANT, "failedAt": "T", "error": "x"})
    desk.inbox.put("m-junk", {"error": "malformed job message", "messageId": "x", "body": "{"})

    results = {
        result.letter.message_id: (result.outcome, result.detail) for result in desk.desk.redrive(None)
    }

    assert results == {
        "m-job-1": (Outcome.REDRIVEN, "queued again (attempt 4 next)"),
        "m-job-2": (Outcome.REMOVED, "the job is completed already; copy removed"),
        "m-gone": (Outcome.KEPT, "the job no longer exists (past its retention)"),
        "m-junk": (Outcome.KEPT, "not a job message; read it with herald dlq show"),
    }
    assert set(desk.inbox.waiting) == {"m-gone", "m-junk"}
    assert desk.inbox.held == set()


def test_a_queue_that_refuses_the_redrive_keeps_the_copy_and_the_job_failed(desk: Desk) -> None:
    desk.failed_job("job-1")
    desk.queue.failure = DependencyError("queue email-normal unavailable")

    [result] = desk.desk.redrive("job-1")

    assert result.outcome is Outcome.KEPT
    assert "could not be queued" in result.detail
    assert desk.jobs.state(TENANT, "job-1").status is JobStatus.FAILED
    assert set(desk.inbox.waiting) == {"m-job-1"}


def test_redrive_since_a_time_takes_only_the_copies_of_jobs_that_failed_since(desk: Desk) -> None:
    desk.failed_job("job-old")
    desk.jobs.add_job(TENANT, "job-new", EMAIL)
    desk.jobs.set_state(TENANT, "job-new", status=JobStatus.FAILED, attempts=3, error_message="HTTP 503")
    message = JobMessage("job-new", TENANT, Channel.EMAIL, Plan.INDIE, 3, None)
    request = request_from_document(Channel.EMAIL, EMAIL)
    desk.inbox.put(
        "m-job-new",
        letter_document(FailedJobCopy(message, request, "HTTP 503", 3, 3, "2026-12-01T09:30:00.000Z")),
    )

    results = desk.desk.redrive(None, since="2026-12-01T09:00:00.000Z")

    assert [(result.letter.job_id, result.outcome) for result in results] == [("job-new", Outcome.REDRIVEN)]
    assert desk.jobs.state(TENANT, "job-new").status is JobStatus.PENDING
    assert desk.jobs.state(TENANT, "job-old").status is JobStatus.FAILED
    assert desk.inbox.deleted == ["m-job-new"]


def test_a_fan_out_page_is_listed_by_its_event_and_redriven_to_the_fan_out_queue(desk: Desk) -> None:
    page = {"tenant_id": TENANT, "event_id": "evt_1", "last": "sub_00000000000000ff", "plan": "indie"}
    desk.inbox.put("m-page", page)

    [listed] = desk.desk.letter("evt_1")
    [result] = desk.desk.redrive("evt_1")

    assert (listed.kind, listed.tenant_id, listed.summary()["eventId"]) == (
        LetterKind.FANOUT,
        TENANT,
        "evt_1",
    )
    assert listed.error == "its fan-out page failed on every delivery of this message"
    assert (result.outcome, result.detail) == (
        Outcome.REDRIVEN,
        "fan-out page queued again (writes only what is missing)",
    )
    assert [(p.event_id, p.last, p.after) for p in desk.fanout.pages] == [
        ("evt_1", "sub_00000000000000ff", None)
    ]
    assert desk.desk.letters() == []
