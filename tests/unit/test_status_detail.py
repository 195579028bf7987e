"""A job's statusDetail: the one sentence the job document and the console lead with, for every case."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from msgspec.structs import replace

from herald.domain.breakers import Breaker, BreakerKey, BreakerKind, BreakerState
from herald.domain.job_records import DeliveryLog, JobState, JobView
from herald.domain.jobs import Channel, JobStatus
from herald.http import answers
from herald.http.status_detail import status_detail

NOW = datetime(2026, 12, 4, 3, 16, tzinfo=UTC)
WEBHOOK = JobState(
    job_id="job-1",
    tenant_id="t-1",
    channel=Channel.WEBHOOK,
    status=JobStatus.PENDING,
    priority=5,
    attempts=0,
    max_attempts=3,
    created_at="2026-12-04T03:10:00.000Z",
)
EMAIL = replace(WEBHOOK, channel=Channel.EMAIL)


def failed_log(
    attempt: int, *, status: int | None = None, error: str = "", retryable: bool = True
) -> DeliveryLog:
    return DeliveryLog(
        log_id=f"log-{attempt}",
        attempt=attempt,
        succeeded=False,
        created_at="2026-12-04T03:12:00.000Z",
        error_message=error or f"the endpoint answered HTTP {status}",
        response_status=status,
        retryable=retryable,
    )


def open_breaker(**changes: object) -> Breaker:
    key = BreakerKey(BreakerKind.ENDPOINT, "t-1", "https://api.example.com")
    opened = int(datetime(2026, 12, 4, 3, 14, tzinfo=UTC).timestamp())
    breaker = Breaker(
        key, state=BreakerState.OPEN, consecutive=5, opened_at=opened, open_until=opened + 300, since=opened
    )
    return replace(breaker, **changes)


CASES = [
    pytest.param(
        JobView(WEBHOOK, None, breaker=open_breaker()),
        "Waiting: the endpoint's breaker for api.example.com is open since 03:14 UTC after 5 failures; next try "
        "about 03:19 UTC (every job to https://api.example.com waits with it, whatever its path).",
        id="held by an open breaker",
    ),
    pytest.param(
        JobView(WEBHOOK, None, breaker=open_breaker(state=BreakerState.DISABLED)),
        "Waiting: the endpoint api.example.com is disabled after a long outage; every job to it fails until "
        "it is re-enabled.",
        id="held by a disabled endpoint",
    ),
    pytest.param(
        JobView(WEBHOOK, None, breaker=open_breaker(open_until=int(NOW.timestamp()) - 1)),
        "Queued: a worker takes it up shortly.",
        id="a breaker whose probe is due holds nothing",
    ),
    pytest.param(
        JobView(replace(WEBHOOK, status=JobStatus.SCHEDULED, send_at="2026-12-05T09:00:00.000Z"), None),
        "Scheduled for 2026-12-05 09:00 UTC.",
        id="scheduled",
    ),
    pytest.param(
        JobView(replace(WEBHOOK, ordering_key="rk"), None),
        "Waiting for any earlier job with ordering key rk to finish.",
        id="keyed",
    ),
    pytest.param(
        JobView(
            replace(
                WEBHOOK,
                attempts=2,
                delivery_logs=(failed_log(2, status=503),),
                requeued_at="2026-12-04T03:19:30.000Z",
            ),
            None,
        ),
        "Retrying: attempt 2 of 3 failed (HTTP 503); next try about 03:19 UTC.",
        id="retrying",
    ),
    pytest.param(
        JobView(
            replace(
                EMAIL,
                attempts=1,
                delivery_logs=(failed_log(1, error="SENDGRID transient: timeout"),),
                requeued_at="2026-12-05T00:01:00.000Z",
            ),
            None,
        ),
        "Retrying: attempt 1 of 3 failed (SENDGRID transient: timeout); next try about 2026-12-05 00:01 UTC.",
        id="retrying tomorrow",
    ),
    pytest.param(
        JobView(
            replace(
                EMAIL,
                attempts=1,
                delivery_logs=(
                    replace(
                        failed_log(1, error="SENDGRID transient: the provider is having trouble (HTTP 502)"),
                        tried=(
                            {
                                "provider": "SENDGRID",
                                "outcome": "transient",
                                "status": 502,
                                "error": "the provider is having trouble",
                            },
                        ),
                    ),
                ),
                requeued_at="2026-12-04T03:17:00.000Z",
            ),
            None,
        ),
        "Retrying: attempt 1 of 3 failed (SendGrid: the provider is having trouble, HTTP 502); next try about 03:17 UTC.",
        id="an email's provider by its label",
    ),
    pytest.param(
        JobView(replace(WEBHOOK, status=JobStatus.PROCESSING, attempts=2), None),
        "Sending: attempt 2 of 3 is under way.",
        id="processing",
    ),
    pytest.param(
        JobView(
            replace(WEBHOOK, status=JobStatus.FAILED, attempts=1, delivery_logs=(failed_log(1, status=404),)),
            None,
        ),
        "Failed: permanent failure (HTTP 404), not retried.",
        id="permanent",
    ),
    pytest.param(
        JobView(
            replace(
                EMAIL,
                status=JobStatus.FAILED,
                attempts=1,
                delivery_logs=(failed_log(1, error="recipient suppressed", retryable=False),),
            ),
            None,
        ),
        "Failed: permanent failure (recipient suppressed), not retried.",
        id="suppressed",
    ),
    pytest.param(
        JobView(
            replace(WEBHOOK, status=JobStatus.FAILED, attempts=3, delivery_logs=(failed_log(3, status=503),)),
            None,
        ),
        "Failed: gave up after 3 attempts (HTTP 503).",
        id="gave up",
    ),
    pytest.param(
        JobView(replace(WEBHOOK, status=JobStatus.FAILED, error_message="the queue refused the job"), None),
        "Failed: the queue refused the job.",
        id="never queued",
    ),
    pytest.param(
        JobView(replace(EMAIL, status=JobStatus.COMPLETED, attempts=1, used_provider="RESEND"), None),
        "Delivered via Resend.",
        id="delivered email",
    ),
    pytest.param(
        JobView(
            replace(
                WEBHOOK,
                status=JobStatus.COMPLETED,
                attempts=1,
                delivery_logs=(replace(failed_log(1, status=204), succeeded=True, error_message=None),),
            ),
            None,
        ),
        "Delivered: the endpoint answered HTTP 204.",
        id="delivered webhook",
    ),
    pytest.param(
        JobView(replace(WEBHOOK, status=JobStatus.CANCELLED), None),
        "Cancelled before it was sent.",
        id="cancelled",
    ),
]


@pytest.mark.parametrize(("view", "sentence"), CASES)
def test_each_state_reads_as_its_sentence(view: JobView, sentence: str) -> None:
    assert status_detail(view, NOW) == sentence


def test_the_job_document_leads_with_the_sentence_and_says_whether_a_retry_can_help() -> None:
    suppressed = replace(
        EMAIL,
        status=JobStatus.FAILED,
        attempts=1,
        delivery_logs=(failed_log(1, error="recipient suppressed", retryable=False),),
    )
    refused = replace(
        WEBHOOK, status=JobStatus.FAILED, attempts=1, delivery_logs=(failed_log(1, status=404),)
    )

    documents = [answers.Job.of_view(JobView(state, None), NOW) for state in (suppressed, refused)]

    assert [(document.status_detail, document.retryable) for document in documents] == [
        ("Failed: permanent failure (recipient suppressed), not retried.", False),
        ("Failed: permanent failure (HTTP 404), not retried.", True),
    ]
