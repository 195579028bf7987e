"""Time in the formats of the API contract: ISO-8601 UTC with milliseconds, epoch seconds, and the
RFC 3339 date-times clients send (one strict parser for every route that takes one)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone


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


class InvalidTime(ValueError):
    """A client's date-time that is not RFC 3339's ``date-time`` with an offset; says why."""


class TimeOutOfRange(InvalidTime):
    """A well-formed date-time whose UTC reading falls outside the years 1-9999."""


# RFC 3339's date-time (section 5.6): ASCII digits only, "T" and "Z" in either letter case (its ABNF
# is case-insensitive), a fraction of any length, an offset of hours and minutes. Nothing else
# that ISO 8601 or Python's parser takes: week dates, basic format, hours alone, comma fractions,
# offsets with seconds, or anything after the offset.
_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
NOT_RFC3339 = "must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:30:00Z"


def parse_timestamp(value: str) -> datetime:
    """A client's RFC 3339 date-time, with the offset it was given; one that UTC can hold too, so
    every later conversion and comparison is safe."""
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        raise InvalidTime(NOT_RFC3339)
    year, month, day, hour, minute, second, fraction, sign, offset_hours, offset_minutes = match.groups()
    if second == "60":
        raise InvalidTime("must not be a leap second (second 60)")
    try:
        offset = _offset(sign, offset_hours, offset_minutes)
        micros = int((fraction or "")[:6].ljust(6, "0"))
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), micros, timezone(offset)
        )
    except ValueError as exc:
        raise InvalidTime("names no such date, time or offset") from exc
    try:
        moment.astimezone(UTC)
    except OverflowError as exc:
        raise TimeOutOfRange("lies outside the years 0001-9999 in UTC") from exc
    return moment


def _offset(sign: str | None, hours: str | None, minutes: str | None) -> timedelta:
    if sign is None or hours is None or minutes is None:
        return timedelta(0)
    if int(minutes) > 59:
        raise ValueError(minutes)
    size = timedelta(hours=int(hours), minutes=int(minutes))
    return -size if sign == "-" else size
