"""Recover: a tenant's failed jobs of a time window re-queued in one call, at most 1 000, with a
cursor for the rest; attempts go on, nothing is charged again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.services.job_queries import RECOVER_LIMIT, recover_failed
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.queues import FakeQueue

TENANT = "t-1"
EMAIL = {"to": "ada@example.com", "subject": "Hi", "body": "<p>Hi</p>"}
HOOK = {"url": "https://hooks.example/in", "payload": {"n": 1}}
SINCE, UNTIL = datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC)


def failed_job(jobs: FakeJobTable, job_id: str, created_at: str, channel: Channel = Channel.EMAIL) -> None:
    jobs.add_job(
        TENANT, job_id, EMAIL if channel is Channel.EMAIL else HOOK, channel=channel, created_at=created_at
    )
    jobs.set_state(TENANT, job_id, status=JobStatus.FAILED, attempts=3, error_message="HTTP 503")


def recover(
    jobs: FakeJobTable, queue: FakeQueue, counters: FakeCounters, **overrides: object
) -> tuple[int, str | None]:
    arguments: dict[str, object] = {
        "tenant_id": TENANT,
        "plan": "startup",
        "window": (SINCE, UNTIL),
        "channel": None,
        "cursor": None,
        "max_attempts": 3,
        "now": "2026-12-01T10:00:00.000Z",
    } | overrides
    result = recover_failed(jobs, queue, **arguments)  # type: ignore[arg-type]
    return result.requeued, result.next_cursor


def test_given_failed_jobs_inside_and_outside_the_window_when_recovering_then_only_those_inside_are_requeued() -> (
    None
):
    jobs, queue, counters = FakeJobTable(), FakeQueue(), FakeCounters()
    failed_job(jobs, "before", "2026-11-29T23:59:59.999Z")
    failed_job(jobs, "first", "2026-11-30T00:00:00.000Z")
    failed_job(jobs, "hook", "2026-11-30T12:00:00.000Z", Channel.WEBHOOK)
    failed_job(jobs, "at-until", "2026-12-01T00:00:00.000Z")
    jobs.add_job(TENANT, "done", EMAIL, created_at="2026-11-30T06:00:00.000Z")
    jobs.set_state(TENANT, "done", status=JobStatus.COMPLETED)

    assert recover(jobs, queue, counters) == (2, None)

    assert sorted(sent.message.job_id for sent in queue.sent) == ["first", "hook"]
    first = jobs.state(TENANT, "first")
    # Attempt numbers go on: 3 spent, 3 more allowed; the message says 3 were seen.
    assert (first.status, first.attempts, first.max_attempts) == (JobStatus.PENDING, 3, 6)
    assert [sent.message.seen_attempts for sent in queue.sent] == [3, 3]
    assert jobs.state(TENANT, "before").status is JobStatus.FAILED
    assert jobs.state(TENANT, "at-until").status is JobStatus.FAILED
    assert counters.calls.count("charge") == 0  # no quota charged again


def test_given_a_type_when_recovering_then_only_that_type_is_requeued() -> None:
    jobs, queue, counters = FakeJobTable(), FakeQueue(), FakeCounters()
    failed_job(jobs, "mail", "2026-11-30T01:00:00.000Z")
    failed_job(jobs, "hook", "2026-11-30T02:00:00.000Z", Channel.WEBHOOK)

    assert recover(jobs, queue, counters, channel=Channel.WEBHOOK) == (1, None)
    assert [sent.message.job_id for sent in queue.sent] == ["hook"]


def test_given_more_failed_jobs_than_one_call_takes_when_recovering_then_the_cursor_carries_on() -> None:
    jobs, queue, counters = FakeJobTable(), FakeQueue(), FakeCounters()
    for index in range(RECOVER_LIMIT + 5):
        failed_job(jobs, f"job-{index:05d}", f"2026-11-30T10:{index // 60 % 60:02d}:{index % 60:02d}.000Z")

    requeued, cursor = recover(jobs, queue, counters)
    assert requeued == RECOVER_LIMIT
    assert cursor is not None
    assert recover(jobs, queue, counters, cursor=cursor) == (5, None)
    assert len({sent.message.job_id for sent in queue.sent}) == RECOVER_LIMIT + 5


@pytest.mark.parametrize(
    ("overrides", "code", "message"),
    [
        (
            {"window": (UNTIL, SINCE)},
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: since: must be before until.",
        ),
        ({"cursor": "not-a-cursor"}, ErrorCode.INVALID_CURSOR, "The cursor is not valid."),
    ],
    ids=["reversed-window", "foreign-cursor"],
)
def test_given_a_bad_window_or_cursor_when_recovering_then_it_is_refused(
    overrides: dict[str, object], code: ErrorCode, message: str
) -> None:
    jobs = FakeJobTable()
    failed_job(jobs, "first", "2026-11-30T00:00:00.000Z")

    with pytest.raises(HeraldError) as raised:
        recover(jobs, FakeQueue(), FakeCounters(), **overrides)

    assert (raised.value.code, raised.value.message) == (code, message)
    assert jobs.state(TENANT, "first").status is JobStatus.FAILED
