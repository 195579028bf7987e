"""The table's stream records of status items, read as status changes (as TallyFunction gets them)."""

from __future__ import annotations

from typing import Any

import pytest

from herald.adapters.store.status_stream import UnreadableChange, status_change
from herald.domain.activity import StatusChange
from herald.domain.jobs import Channel, JobStatus

PK = "JOB#tenant-a#0b6c1f1e-5d3c-4f3e-9a59-6a1f0c3b2d11"


def image(status: str, **extra: Any) -> dict[str, Any]:
    return {
        "pk": {"S": PK},
        "sk": {"S": "STATUS"},
        "kind": {"S": "status"},
        "type": {"S": "webhook"},
        "status": {"S": status},
        "createdAt": {"S": "2026-11-30T23:59:59.999Z"},
        "attempts": {"N": "1"},
        **extra,
    }


def record(
    event: str, new: dict[str, Any] | None, old: dict[str, Any] | None, sk: str = "STATUS"
) -> dict[str, Any]:
    stream: dict[str, Any] = {
        "Keys": {"pk": {"S": PK}, "sk": {"S": sk}},
        "SequenceNumber": "1100000000017454423011",
        "ApproximateCreationDateTime": 1764633600.0,  # 2025-12-02
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        stream["NewImage"] = new
    if old is not None:
        stream["OldImage"] = old
    return {"eventName": event, "eventSource": "aws:dynamodb", "dynamodb": stream}


def test_a_modified_status_item_is_a_change_from_its_old_status_to_its_new() -> None:
    change = status_change(record("MODIFY", image("completed"), image("processing")))
    assert change == StatusChange(
        "1100000000017454423011",
        "tenant-a",
        "2026-11-30T23:59:59.999Z",
        Channel.WEBHOOK,
        JobStatus.PROCESSING,
        JobStatus.COMPLETED,
    )


def test_a_new_status_item_comes_from_no_status() -> None:
    change = status_change(record("INSERT", image("failed"), None))
    assert change is not None
    assert (change.old, change.new) == (None, JobStatus.FAILED)


def test_a_status_item_without_its_jobs_creation_time_counts_on_the_day_it_was_written() -> None:
    new = image("failed")
    del new["createdAt"]
    change = status_change(record("INSERT", new, None))
    assert change is not None
    assert change.created_at.startswith("2025-12-02T")


@pytest.mark.parametrize(
    ("event", "sk"), [("REMOVE", "STATUS"), ("MODIFY", "JOB"), ("INSERT", "EVENT#sendgrid#abc")]
)
def test_an_expiry_and_writes_of_other_items_are_no_change(event: str, sk: str) -> None:
    assert status_change(record(event, image("completed"), image("processing"), sk=sk)) is None


def test_a_status_item_that_does_not_read_as_a_job_status_names_its_record() -> None:
    with pytest.raises(
        UnreadableChange, match=r"stream record 1100000000017454423011: 'done' is not a valid JobStatus"
    ):
        status_change(record("MODIFY", image("done"), image("processing")))


def test_a_status_item_with_no_status_before_or_after_is_no_change() -> None:
    """moto writes a new item's key before the update's attributes: that first record counts nothing."""
    keys_only = {"pk": {"S": PK}, "sk": {"S": "STATUS"}}
    assert status_change(record("INSERT", keys_only, None)) is None
