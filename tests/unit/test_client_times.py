"""The one parser of the date-times clients send: exactly RFC 3339's ``date-time`` with an offset,
and only times UTC can hold, so no later conversion or comparison of one can raise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herald.domain.clock import NOT_RFC3339, InvalidTime, TimeOutOfRange, iso, parse_timestamp


@pytest.mark.parametrize(
    ("value", "meant"),
    [
        ("2026-12-24T08:00:00Z", datetime(2026, 12, 24, 8, tzinfo=UTC)),
        ("2026-12-24t08:00:00z", datetime(2026, 12, 24, 8, tzinfo=UTC)),
        ("2026-12-24T08:00:00-00:00", datetime(2026, 12, 24, 8, tzinfo=UTC)),
        (
            "2026-12-24T08:00:00.250+01:00",
            datetime(2026, 12, 24, 8, 0, 0, 250_000, timezone(timedelta(hours=1))),
        ),
        # Any number of fraction digits; microseconds are kept.
        (
            "2026-12-24T08:00:00.9070259-05:00",
            datetime(2026, 12, 24, 8, 0, 0, 907_025, timezone(timedelta(hours=-5))),
        ),
        ("0001-01-01T00:00:00Z", datetime(1, 1, 1, tzinfo=UTC)),
        ("9999-12-31T23:59:59.999999Z", datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)),
    ],
)
def test_rfc_3339_date_times_are_read_with_their_offset(value: str, meant: datetime) -> None:
    moment = parse_timestamp(value)
    assert (moment, moment.utcoffset()) == (meant, meant.utcoffset())


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("2026-12-24T08:00:00Z\u0000junk", NOT_RFC3339),
        ("2026-12-24T08:00:00Z ", NOT_RFC3339),
        ("2026-W52-1T00:00:00Z", NOT_RFC3339),
        ("2026-12-24T08Z", NOT_RFC3339),
        ("2026-12-24T08:00Z", NOT_RFC3339),
        ("2026-12-24T08:00:00+01:00:30", NOT_RFC3339),
        ("2026-12-24T08:00:00+0100", NOT_RFC3339),
        ("2026-12-24T08:00:00,5Z", NOT_RFC3339),
        ("20261224T080000Z", NOT_RFC3339),
        ("2026-12-24 08:00:00Z", NOT_RFC3339),
        ("2026-12-24T08:00:00", NOT_RFC3339),
        ("2026-12-24", NOT_RFC3339),
        ("\u0662\u0660\u0662\u0666-12-24T08:00:00Z", NOT_RFC3339),  # Arabic-Indic digits
        ("+2026-12-24T08:00:00Z", NOT_RFC3339),
        ("2026-02-29T00:00:00Z", "names no such date, time or offset"),
        ("2026-12-24T24:00:00Z", "names no such date, time or offset"),
        ("2026-12-24T08:00:00+24:00", "names no such date, time or offset"),
        ("2026-12-24T08:00:00+01:60", "names no such date, time or offset"),
        ("0000-01-01T00:00:00Z", "names no such date, time or offset"),
        ("2026-12-31T23:59:60Z", "must not be a leap second (second 60)"),
    ],
)
def test_anything_else_is_refused_saying_why(value: str, reason: str) -> None:
    with pytest.raises(InvalidTime) as refused:
        parse_timestamp(value)
    assert str(refused.value) == reason
    assert not isinstance(refused.value, TimeOutOfRange)


@pytest.mark.parametrize(
    "value", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:30:00+00:31"]
)
def test_a_time_utc_cannot_hold_is_out_of_range(value: str) -> None:
    with pytest.raises(TimeOutOfRange, match=r"^lies outside the years 0001-9999 in UTC$"):
        parse_timestamp(value)


@given(st.datetimes(timezones=st.timezones()))
def test_every_time_herald_writes_reads_back_as_the_same_moment(moment: datetime) -> None:
    try:
        written = iso(moment)
    except OverflowError:
        return  # no UTC reading: nothing Herald could have written
    assert abs(parse_timestamp(written) - moment) < timedelta(milliseconds=1)
