"""EventBridge schedule expressions: ``rate(value unit)`` and six-field ``cron(...)``.

Supported in cron fields: numbers, names (JAN-DEC, SUN-SAT), ``*``, ``?``, ranges, lists and
``/`` steps. The ``L``, ``W`` and ``#`` wildcards and one-time ``at(...)`` schedules are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_RATE = re.compile(r"^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$")
_CRON = re.compile(r"^cron\((.+)\)$")
_UNITS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1)}
_MONTHS = {
    name: number
    for number, name in enumerate(
        ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1
    )
}
_WEEKDAYS = {name: number for number, name in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"), 1)}
_SEARCH_DAYS = 366 * 5


class UnsupportedExpression(ValueError):
    pass


@dataclass(frozen=True)
class Rate:
    period: timedelta
    anchor: datetime

    def next_after(self, moment: datetime) -> datetime:
        elapsed = max(moment - self.anchor, timedelta(0))
        periods = elapsed // self.period + 1
        return self.anchor + periods * self.period


def _value(text: str, names: dict[str, int]) -> int:
    token = text.upper()
    if token in names:
        return names[token]
    if not token.isdigit():  # also where the L, W and # wildcards end up
        raise UnsupportedExpression(f"{text!r} is not a cron value played locally")
    return int(token)


def _field(text: str, low: int, high: int, names: dict[str, int] | None = None) -> frozenset[int] | None:
    """The values a cron field allows, or None for ``?`` (no constraint from this field)."""
    if text == "?":
        return None
    values: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, last = base.split("-", 1)
            start, end = _value(first, names or {}), _value(last, names or {})
        else:
            start = _value(base, names or {})
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return frozenset(value for value in values if low <= value <= high)


def _required(text: str, low: int, high: int, names: dict[str, int] | None = None) -> frozenset[int]:
    values = _field(text, low, high, names)
    if values is None:
        raise UnsupportedExpression("only the day-of-month and day-of-week fields may be '?'")
    return values


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int] | None
    months: frozenset[int]
    weekdays: frozenset[int] | None
    years: frozenset[int]

    @classmethod
    def parse(cls, fields: str) -> Cron:
        parts = fields.split()
        if len(parts) != 6:
            raise UnsupportedExpression("a cron expression has six fields")
        minutes, hours, days, months, weekdays, years = parts
        return cls(
            minutes=_required(minutes, 0, 59),
            hours=_required(hours, 0, 23),
            days=_field(days, 1, 31),
            months=_required(months, 1, 12, _MONTHS),
            weekdays=_field(weekdays, 1, 7, _WEEKDAYS),
            years=_required(years, 1970, 2199),
        )

    def _day_matches(self, moment: datetime) -> bool:
        if moment.month not in self.months or moment.year not in self.years:
            return False
        weekday = (moment.weekday() + 1) % 7 + 1  # EventBridge: SUN=1 ... SAT=7
        day_ok = self.days is None or moment.day in self.days
        weekday_ok = self.weekdays is None or weekday in self.weekdays
        return day_ok and weekday_ok

    def next_after(self, moment: datetime) -> datetime | None:
        start = moment.replace(second=0, microsecond=0)
        for offset in range(_SEARCH_DAYS):
            day = (start + timedelta(days=offset)).replace(hour=0, minute=0)
            if not self._day_matches(day):
                continue
            for hour in sorted(self.hours):
                for minute in sorted(self.minutes):
                    candidate = day.replace(hour=hour, minute=minute)
                    if candidate > moment:
                        return candidate
        return None


def parse_expression(expression: str, anchor: datetime) -> Rate | Cron:
    rate = _RATE.match(expression.strip())
    if rate:
        return Rate(int(rate.group(1)) * _UNITS[rate.group(2).rstrip("s")], anchor)
    cron = _CRON.match(expression.strip())
    if cron:
        return Cron.parse(cron.group(1))
    raise UnsupportedExpression(f"{expression!r} is not a rate or cron expression played locally")
