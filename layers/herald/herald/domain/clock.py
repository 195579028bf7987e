"""Time in the formats of the API contract: ISO-8601 UTC with milliseconds, and epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(utc_now())


def epoch_seconds(moment: datetime) -> int:
    return int(moment.timestamp())
