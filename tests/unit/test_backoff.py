"""Retry delays: base x 2^(attempt-1) with +-20 % jitter, Retry-After honoured, capped at 15 minutes."""

from __future__ import annotations

import random

import pytest

from herald.domain.backoff import JITTER, MAX_DELAY_SECONDS, retry_delay

BASE = 30


class ExtremeJitter(random.Random):
    """Always draws the lowest (or highest) jitter, to pin the exact edges of the range."""

    def __init__(self, highest: bool) -> None:
        super().__init__(0)
        self.highest = highest

    def uniform(self, a: float, b: float) -> float:
        return b if self.highest else a


def bounds(attempt: int) -> tuple[int, int]:
    nominal = BASE * 2 ** (attempt - 1)
    return round(nominal * (1 - JITTER)), min(round(nominal * (1 + JITTER)), MAX_DELAY_SECONDS)


@pytest.mark.parametrize(
    ("attempt", "lowest", "highest"),
    [(1, 24, 36), (2, 48, 72), (3, 96, 144), (4, 192, 288), (5, 384, 576)],
)
def test_given_the_jitter_extremes_when_computing_then_delays_span_exactly_plus_minus_20_percent(
    attempt: int, lowest: int, highest: int
) -> None:
    assert retry_delay(attempt, BASE, rand=ExtremeJitter(highest=False)) == lowest
    assert retry_delay(attempt, BASE, rand=ExtremeJitter(highest=True)) == highest


@pytest.mark.parametrize("attempt", [1, 2, 3, 4, 5])
def test_given_random_jitter_when_computing_many_delays_then_all_stay_in_bounds_and_vary(
    attempt: int,
) -> None:
    source = random.Random(attempt)
    low, high = bounds(attempt)

    delays = [retry_delay(attempt, BASE, rand=source) for _ in range(500)]

    assert all(low <= delay <= high for delay in delays)
    assert len(set(delays)) > 5  # jittered, so retries of many jobs spread out


def test_given_a_late_attempt_when_computing_then_the_delay_is_capped_at_the_sqs_maximum() -> None:
    assert retry_delay(7, BASE, rand=ExtremeJitter(highest=False)) == MAX_DELAY_SECONDS == 900
    assert retry_delay(20, BASE, rand=random.Random(1)) == MAX_DELAY_SECONDS


def test_given_a_retry_after_longer_than_the_backoff_when_computing_then_it_wins() -> None:
    assert retry_delay(1, BASE, retry_after=120.0, rand=ExtremeJitter(highest=True)) == 120


def test_given_a_retry_after_shorter_than_the_backoff_when_computing_then_the_backoff_wins() -> None:
    assert retry_delay(2, BASE, retry_after=5.0, rand=ExtremeJitter(highest=False)) == 48


def test_given_a_retry_after_beyond_15_minutes_when_computing_then_it_is_capped() -> None:
    assert retry_delay(1, BASE, retry_after=3600.0, rand=random.Random(2)) == MAX_DELAY_SECONDS


def test_given_a_fractional_retry_after_when_computing_then_it_rounds_to_whole_seconds() -> None:
    assert retry_delay(1, 1, retry_after=30.6, rand=ExtremeJitter(highest=True)) == 31


def test_given_a_tiny_base_when_computing_then_the_delay_is_never_zero() -> None:
    assert retry_delay(1, 0, rand=random.Random(3)) == 1
