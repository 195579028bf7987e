"""1 000 notifications through the local stack, the same code as ``make load`` (10 000): nothing lost,
nothing sent twice, no 5xx, every job ending as its recipient says (a failing one failed, a fallback
or a timeout completed by the next provider), every repeated idempotency key answered 409 with the
first job's id."""

from __future__ import annotations

import pytest

from bench.load import run_load
from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

JOBS = 1000


def test_a_thousand_mixed_notifications_end_completed_or_failed_and_none_twice(
    local_stack: RunningStack,
) -> None:
    report = run_load(local_stack, jobs=JOBS, clients=8, tenants=3)

    assert report.statuses[202] == JOBS
    assert not [status for status in report.statuses if status >= 500]
    assert report.lost == []
    assert report.sent_twice == []
    assert report.unexplained_failures == []
    assert report.unexpected_outcomes == []
    assert report.duplicate_answers_wrong == 0
    assert report.read_errors == {}, report.read_error_samples
    assert sum(report.outcomes.values()) == JOBS
    assert report.statuses[409] == int(JOBS * 0.05)
