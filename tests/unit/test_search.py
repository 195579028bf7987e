"""Finding any message: what a job is found by, how the list's parameters become a search, and the
export's file shapes (no AWS)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.job_records import JobState
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import EmailNotification, WebhookNotification
from herald.domain.search import SUBJECT_KEPT, JobSearch, Listed
from herald.http.answers import ListedJob
from herald.http.export import exported
from herald.http.requests import job_search


def _state(
    channel: Channel = Channel.EMAIL, status: JobStatus = JobStatus.COMPLETED, **more: object
) -> JobState:
    return JobState(
        job_id="0b5f0c1e-0000-4000-8000-000000000001",
        tenant_id="t",
        channel=channel,
        status=status,
        priority=5,
        attempts=1,
        max_attempts=3,
        created_at="2026-12-04T19:05:00.000Z",
        **more,  # type: ignore[arg-type]
    )


def test_an_email_is_found_by_its_lowercased_recipient_and_shows_it_as_sent() -> None:
    listed = Listed.of(EmailNotification(to="Ana@Example.com", subject="x" * 200, body="<p>Hi</p>"))

    assert (listed.target, listed.term) == ("Ana@Example.com", "ana@example.com")
    assert listed.subject == "x" * SUBJECT_KEPT


def test_a_webhook_is_found_by_its_lowercased_host_whatever_its_port_path_or_query() -> None:
    listed = Listed.of(WebhookNotification(url="https://Hooks.Example.COM:8443/in?a=1", payload={}))

    assert (listed.target, listed.term, listed.subject) == (
        "https://Hooks.Example.COM:8443/in?a=1",
        "hooks.example.com",
        None,
    )


def test_a_search_keeps_what_its_type_status_and_subject_fragment_allow() -> None:
    invoice = _state(subject="Your INVOICE for May")

    assert JobSearch(subject="invoice").keeps(invoice)
    assert not JobSearch(subject="receipt").keeps(invoice)
    assert not JobSearch(channel=Channel.WEBHOOK).keeps(invoice)
    assert not JobSearch(status=JobStatus.FAILED).keeps(invoice)
    assert not JobSearch(subject="invoice").keeps(_state(Channel.WEBHOOK))


def _search(**given: object) -> JobSearch:
    parameters: dict[str, object] = {
        "recipient": None,
        "host": None,
        "subject": None,
        "window": (None, None),
        "day": None,
        "channel": None,
        "status": None,
    }
    return job_search(**(parameters | given))  # type: ignore[arg-type]


def test_the_list_parameters_become_one_search_with_utc_edges_and_lowercased_terms() -> None:
    since = datetime(2026, 12, 1, 9, 30, tzinfo=timezone(timedelta(hours=1)))

    search = _search(recipient="Ana@Example.com", subject="Order", window=(since, None), status="failed")

    assert search == JobSearch(
        term="ana@example.com",
        subject="order",
        since="2026-12-01T08:30:00.000Z",
        until=None,
        status=JobStatus.FAILED,
    )
    assert _search(host="Hooks.Example.com", channel="webhook").term == "hooks.example.com"


def test_day_is_the_window_of_one_utc_day_narrowed_by_since_and_until() -> None:
    assert (_search(day=date(2026, 11, 30)).since, _search(day=date(2026, 11, 30)).until) == (
        "2026-11-30T00:00:00.000Z",
        "2026-12-01T00:00:00.000Z",
    )
    late = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
    narrowed = _search(day=date(2026, 11, 30), window=(late, None))
    assert (narrowed.since, narrowed.until) == ("2026-11-30T18:00:00.000Z", "2026-12-01T00:00:00.000Z")


def test_a_recipient_and_a_host_together_are_refused_naming_host() -> None:
    with pytest.raises(HeraldError) as refused:
        _search(recipient="a@example.com", host="example.com")

    assert refused.value.code is ErrorCode.VALIDATION_ERROR
    assert "host" in str(refused.value)


@pytest.mark.parametrize("lead", ["=", "+", "-", "@"])
def test_a_csv_cell_a_spreadsheet_would_run_starts_with_an_apostrophe(lead: str) -> None:
    job = ListedJob.listed(_state(target="ana@example.com", subject=f"{lead}SUM(A1:A9)"))

    rows = list(csv.DictReader(io.StringIO(exported([job], "csv"))))

    assert rows[0]["subject"] == f"'{lead}SUM(A1:A9)"
    assert rows[0]["recipient"] == "ana@example.com"
    assert rows[0]["url"] == ""
    # JSON lines are data, not a sheet: the text stays as sent.
    assert json.loads(exported([job], "jsonl"))["subject"] == f"{lead}SUM(A1:A9)"


def test_the_csv_header_is_the_lists_field_names() -> None:
    header = exported([], "csv").splitlines()[0]

    assert header.split(",")[:3] == ["id", "type", "status"]
    assert {"recipient", "url", "subject", "createdAt"} <= set(header.split(","))
