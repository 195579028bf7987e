"""Time in the formats of the API contract: ISO-8601 UTC with milliseconds, and epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso(utc_now())


def parse_iso(value: str) -> datetime:
    """An ISO-8601 time as Herald writes it (``Z`` suffix) or with an offset, as an aware datetime."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def epoch_seconds(moment: datetime) -> int:
    return int(moment.timestamp())
