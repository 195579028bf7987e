"""The table's stream records of job status items, read as status changes (``StatusChange``).

TallyFunction's event source passes only status items written or changed (its filter); a record of
anything else, or one that does not read as a job's status, is not a change (``None``) and is left
to the caller to report.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from herald.adapters.store.models import STATUS_SK, JobStatusItem, job_ids
from herald.domain.activity import StatusChange
from herald.domain.clock import iso
from herald.domain.jobs import Channel, JobStatus

_CHANGES = frozenset({"INSERT", "MODIFY"})
_STATUS = JobStatusItem.status.attr_name
_CHANNEL = JobStatusItem.type.attr_name
_CREATED_AT = JobStatusItem.created_at.attr_name


class UnreadableChange(ValueError):
    """A status item's stream record without the status, channel or key a change needs."""


def _text(image: Mapping[str, Any], name: str) -> str:
    """A string attribute of a stream image ("" when absent or not a string)."""
    value = image.get(name)
    return str(value.get("S", "")) if isinstance(value, Mapping) else ""


def status_change(record: Mapping[str, Any]) -> StatusChange | None:
    """The change a stream record reports; None for records that are not a status item's write, or
    whose item has no status before or after (moto's update of a new item writes its key first)."""
    stream = record.get("dynamodb") or {}
    keys = stream.get("Keys") or {}
    if record.get("eventName") not in _CHANGES or _text(keys, "sk") != STATUS_SK:
        return None
    new, old = stream.get("NewImage") or {}, stream.get("OldImage") or {}
    try:
        before, after = _status(old), _status(new)
        if before is None and after is None:
            return None
        tenant_id, _ = job_ids(_text(keys, "pk"))
        channel = Channel(_text(new, _CHANNEL) or _text(old, _CHANNEL))
    except ValueError as exc:
        raise UnreadableChange(f"stream record {stream.get('SequenceNumber')}: {exc}") from exc
    return StatusChange(
        sequence=str(stream.get("SequenceNumber", "")),
        tenant_id=tenant_id,
        created_at=_text(new, _CREATED_AT) or _text(old, _CREATED_AT) or _written_at(stream),
        channel=channel,
        old=before,
        new=after,
    )


def _status(image: Mapping[str, Any]) -> JobStatus | None:
    text = _text(image, _STATUS)
    return JobStatus(text) if text else None


def _written_at(stream: Mapping[str, Any]) -> str:
    """When the change was written: the day of a status item that lacks its job's createdAt."""
    seconds = float(stream.get("ApproximateCreationDateTime") or 0)
    return iso(datetime.fromtimestamp(seconds, UTC))
