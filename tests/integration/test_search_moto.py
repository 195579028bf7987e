"""Finding any message (GET /notifications/jobs with recipient, host, subject, since, until; its
export) through the real ApiFunction against moto tables built from template.yaml."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from botocore.client import BaseClient

from herald.adapters.store.job_store import SEARCH_SCAN_BUDGET
from herald.domain.clock import iso
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto

JOBS = "/api/v1/notifications/jobs"


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        resolve_publicly(monkeypatch)  # no DNS here: the webhook hosts resolve publicly
        with herald_in_moto(monkeypatch) as stack:
            yield stack


def _email(herald: HeraldInMoto, key: str, to: str, subject: str = "Hello") -> str:
    body = {"to": to, "subject": subject, "body": "<p>Hi</p>"}
    answer = herald.api("POST", "/api/v1/notifications/email", body, key=key)
    assert answer.status == 202, answer.text
    job_id: str = answer.data["jobId"]
    return job_id


def _webhook(herald: HeraldInMoto, key: str, url: str) -> str:
    body = {"url": url, "payload": {"event": "order.paid"}}
    answer = herald.api("POST", "/api/v1/notifications/webhook", body, key=key)
    assert answer.status == 202, answer.text
    job_id: str = answer.data["jobId"]
    return job_id


def _found(herald: HeraldInMoto, key: str, query: str) -> list[dict[str, Any]]:
    answer = herald.api("GET", f"{JOBS}?{query}", key=key)
    assert answer.status == 200, answer.text
    rows: list[dict[str, Any]] = answer.data["data"]
    return rows


def test_a_recipient_is_found_case_insensitively_with_its_column_and_never_another_tenants(
    herald: HeraldInMoto,
) -> None:
    key, intruder = herald.new_key(), herald.new_key()
    mine = [_email(herald, key, "Ana@Example.com", f"Order {n}") for n in range(3)]
    _email(herald, key, "bob@example.com")
    theirs = _email(herald, intruder, "ana@example.com", "Their order")

    rows = _found(herald, key, f"recipient={quote('ANA@example.COM')}")

    assert [row["id"] for row in rows] == mine[::-1]
    assert {(row["recipient"], row["url"], row["type"]) for row in rows} == {
        ("Ana@Example.com", None, "email")
    }
    assert [row["subject"] for row in rows] == ["Order 2", "Order 1", "Order 0"]
    # The other tenant's job to the same address is never found, by any filter.
    assert theirs not in {row["id"] for row in _found(herald, key, "subject=order&limit=100")}
    assert [row["id"] for row in _found(herald, intruder, "recipient=ana%40example.com")] == [theirs]


def test_a_host_finds_its_webhooks_and_the_plain_list_shows_urls_and_recipients(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    first = _webhook(herald, key, "https://Hooks.Shop.example.com/in?a=1")
    _webhook(herald, key, "https://other.example.com/in")
    second = _webhook(herald, key, "https://hooks.shop.example.com/again")
    email = _email(herald, key, "carl@example.com", "Receipt")

    rows = _found(herald, key, "host=HOOKS.shop.example.com")

    assert [(row["id"], row["url"]) for row in rows] == [
        (second, "https://hooks.shop.example.com/again"),
        (first, "https://Hooks.Shop.example.com/in?a=1"),
    ]
    listed = {row["id"]: row for row in _found(herald, key, "")}
    assert (listed[email]["recipient"], listed[email]["subject"], listed[email]["url"]) == (
        "carl@example.com",
        "Receipt",
        None,
    )
    assert listed[first]["url"] == "https://Hooks.Shop.example.com/in?a=1"


def test_subject_contains_type_and_status_narrow_a_search(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    invoice = _email(herald, key, "dee@example.com", "Your INVOICE for May")
    _email(herald, key, "dee@example.com", "Welcome")
    _webhook(herald, key, "https://hooks.example.com/x")

    assert [row["id"] for row in _found(herald, key, "subject=invoice")] == [invoice]
    assert [row["id"] for row in _found(herald, key, "recipient=dee%40example.com&subject=VOICE")] == [
        invoice
    ]
    assert _found(herald, key, "subject=invoice&type=webhook") == []
    assert {row["status"] for row in _found(herald, key, "recipient=dee%40example.com&status=pending")} == {
        "pending"
    }
    assert _found(herald, key, "recipient=dee%40example.com&status=failed") == []


def test_since_and_until_bound_the_window_and_a_cursor_goes_on(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    ids = [_email(herald, key, "eve@example.com", f"n{n}") for n in range(5)]
    now = datetime.now(UTC)
    since = quote(iso(now - timedelta(hours=1)))
    until = quote(iso(now + timedelta(hours=1)))

    first = herald.api(
        "GET", f"{JOBS}?recipient=eve%40example.com&since={since}&until={until}&limit=2", key=key
    )
    pagination = first.data["pagination"]
    cursor = pagination["nextCursor"]
    second = _found(herald, key, f"recipient=eve%40example.com&since={since}&limit=10&cursor={cursor}")

    assert [row["id"] for row in first.data["data"] + second] == ids[::-1]
    assert (pagination["total"], pagination["totalIsLowerBound"]) == (2, True)
    assert _found(herald, key, f"recipient=eve%40example.com&until={since}") == []
    later = quote(iso(now + timedelta(minutes=30)))
    assert _found(herald, key, f"since={later}") == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("since=yesterday", "since"),
        ("until=2026-12-01T09:30:00", "until"),
        ("recipient=not-an-address", "recipient"),
        ("host=a%20b", "host"),
        ("status=bogus", "status"),
    ],
)
def test_bad_search_parameters_answer_400_naming_the_parameter(
    herald: HeraldInMoto, query: str, field: str
) -> None:
    answer = herald.api("GET", f"{JOBS}?{query}", key=herald.new_key())

    assert (answer.status, answer.body["code"]) == (400, "validation_error")
    assert [problem["field"] for problem in answer.body["details"]] == [field]
    assert "^" not in answer.body["error"], "a pattern must never reach the client"


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("recipient=not-an-address", "recipient: must be one whole email address, such as ada@example.com."),
        (
            "host=a%20b",
            "host: must be a host name as in the webhook's URL, such as hooks.example.com (punycode for"
            " international names).",
        ),
    ],
)
def test_a_malformed_recipient_or_host_is_told_in_a_sentence(
    herald: HeraldInMoto, query: str, sentence: str
) -> None:
    answer = herald.api("GET", f"{JOBS}?{query}", key=herald.new_key())

    assert answer.body["error"] == f"Invalid request: {sentence}"


def test_since_not_before_until_and_recipient_with_host_answer_400(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    at = quote("2026-12-01T10:00:00+01:00")
    same = herald.api("GET", f"{JOBS}?since={at}&until={at}", key=key)
    both = herald.api("GET", f"{JOBS}?recipient=a%40example.com&host=example.com", key=key)
    cursor = herald.api("GET", f"{JOBS}?subject=x&cursor=bm90LWEtY3Vyc29y", key=key)

    assert (same.status, same.body["code"], same.body["error"]) == (
        400,
        "validation_error",
        "Invalid request: since: must be before until.",
    )
    assert (both.status, both.body["code"]) == (400, "validation_error")
    assert (cursor.status, cursor.body["code"]) == (400, "invalid_cursor")


def test_the_export_is_the_filtered_list_as_csv_or_json_lines_safe_for_spreadsheets(
    herald: HeraldInMoto,
) -> None:
    key, intruder = herald.new_key(), herald.new_key()
    formula = _email(herald, key, "fay@example.com", '=HYPERLINK("http://evil")')
    plain = _email(herald, key, "fay@example.com", "Plain")
    _email(herald, key, "gus@example.com")
    _email(herald, intruder, "fay@example.com", "Theirs")

    sheet = herald.api("GET", f"{JOBS}/export?format=csv&recipient=fay%40example.com", key=key)
    lines = herald.api("GET", f"{JOBS}/export?format=jsonl&recipient=fay%40example.com", key=key)

    assert sheet.status == 200, sheet.text
    assert sheet.headers["Content-Type"].startswith("text/csv")
    assert sheet.headers["Content-Disposition"] == 'attachment; filename="herald-jobs.csv"'
    rows = list(csv.DictReader(io.StringIO(sheet.text)))
    assert [(row["id"], row["recipient"], row["subject"]) for row in rows] == [
        (plain, "fay@example.com", "Plain"),
        (formula, "fay@example.com", '\'=HYPERLINK("http://evil")'),
    ]
    assert lines.headers["Content-Type"].startswith("application/x-ndjson")
    jobs = [json.loads(line) for line in lines.text.splitlines()]
    assert [(job["id"], job["subject"]) for job in jobs] == [
        (plain, "Plain"),
        (formula, '=HYPERLINK("http://evil")'),
    ]
    assert "X-Next-Cursor" not in sheet.headers


def _seed(herald: HeraldInMoto, tenant_id: str, count: int, to: str) -> None:
    """``count`` emails to ``to`` accepted over the last days, written straight into the table."""
    table = herald.topology.outputs["TableName"]
    now = datetime.now(UTC)
    items = []
    for n in range(count):
        created, job_id = iso(now - timedelta(minutes=n + 1)), str(uuid.uuid4())
        key = {"pk": {"S": f"JOB#{tenant_id}#{job_id}"}, "sk": {"S": "JOB"}}
        item = key | {"kind": {"S": "job"}, "type": {"S": "email"}, "priority": {"N": "5"}}
        item |= {"maxAttempts": {"N": "3"}, "target": {"S": to}, "subject": {"S": f"Seeded {n}"}}
        item |= {"gsi1pk": {"S": f"JOBS#{tenant_id}"}, "gsi1sk": {"S": f"{created}#{job_id}"}}
        item |= {"gsi4pk": {"S": f"FIND#{tenant_id}#{to}"}}
        items.append({"PutRequest": {"Item": item}})
    writer = client("dynamodb")
    for start in range(0, len(items), 25):
        writer.batch_write_item(RequestItems={table: items[start : start + 25]})


def _index_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The items each index Query reads from now on (ScannedCount)."""
    scanned: list[int] = []
    real_call = BaseClient.__dict__["_make_api_call"]

    def recording(aws: BaseClient, operation: str, params: Any) -> Any:
        answer = real_call(aws, operation, params)
        if operation == "Query" and "IndexName" in params:
            scanned.append(answer["ScannedCount"])
        return answer

    monkeypatch.setattr(BaseClient, "_make_api_call", recording)
    return scanned


def test_a_search_reads_at_most_its_page_plus_the_filters_bound_whatever_the_history(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    _seed(herald, tenant_id, 600, "hal@example.com")
    scanned = _index_reads(monkeypatch)

    by_recipient = herald.api("GET", f"{JOBS}?recipient=hal%40example.com&limit=20", key=key)
    assert sum(scanned) == 20
    assert len(by_recipient.data["data"]) == 20

    scanned.clear()
    # No subject matches: the read stops at the bound and hands out a cursor to go on.
    missing = herald.api("GET", f"{JOBS}?recipient=hal%40example.com&subject=nowhere&limit=20", key=key)
    assert sum(scanned) == 20 + SEARCH_SCAN_BUDGET
    assert missing.data["data"] == []
    assert missing.data["pagination"]["nextCursor"] is not None
