"""When a job is stuck: the rules of the sweeper.

Something always moves a healthy job on: its first message (claimed within seconds), a retry's
delayed re-send (at most ``MAX_DELAY_SECONDS`` after the attempt), or, when a worker died, the same
message again after the queue's visibility timeout (the lease has run out by then). A job that nothing
has moved for ``stuck_after`` past the latest of those moments has lost its message: the API failed
between storing and queueing it (and could not mark it FAILED), or a message crashed its worker until
the queue dead-lettered it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from herald.domain.backoff import MAX_DELAY_SECONDS
from herald.domain.clock import parse_iso
from herald.domain.job_records import JobState
from herald.domain.jobs import JobStatus

# A job the sweeper re-queued this often without a worker finishing it is failed instead (with a
# dead-letter copy): something about it keeps it from being delivered, and an operator must look.
MAX_REQUEUES = 3


def quiet_since(state: JobState) -> datetime:
    """The last moment something was due to move the job on."""
    moments = [parse_iso(state.created_at)]
    if state.requeued_at:
        moments.append(parse_iso(state.requeued_at))
    if state.status is JobStatus.PROCESSING and state.lease_until is not None:
        moments.append(datetime.fromtimestamp(state.lease_until, tz=moments[0].tzinfo))
    if state.status is JobStatus.PENDING and state.delivery_logs:
        last_attempt = parse_iso(state.delivery_logs[-1].created_at)
        moments.append(last_attempt + timedelta(seconds=MAX_DELAY_SECONDS))
    return max(moments)


def is_stuck(state: JobState, now: datetime, stuck_after: timedelta) -> bool:
    if state.status not in (JobStatus.PENDING, JobStatus.PROCESSING):
        return False
    return now - quiet_since(state) >= stuck_after


def stuck_reason(requeues: int) -> str:
    return (
        f"Not delivered: the sweeper re-queued this job {requeues} times and no worker finished it; "
        "an operator has its dead-letter copy."
    )


def checkpoints(stuck_after: timedelta, window: timedelta) -> list[timedelta]:
    """The ages at which a job is looked at: when it could first be stuck, then twice as old each
    time, up to the window (a job that got stuck after a retry is caught at the next one)."""
    ages = [stuck_after]
    while ages[-1] * 2 < window:
        ages.append(ages[-1] * 2)
    return [*ages, window] if window > stuck_after else ages


def slices(
    since: datetime, now: datetime, stuck_after: timedelta, window: timedelta
) -> list[tuple[datetime, datetime]]:
    """[from, until) creation-time ranges a run at ``now`` reads when the last complete run was at
    ``since``: for each checkpoint age, the jobs that reached it in between. Consecutive runs read
    adjacent ranges whatever their cadence, so a job is read once per checkpoint, and a run after a
    missed one reads what the missed one would have (at most ``window`` back)."""
    start = max(since, now - window)
    return [(start - age, now - age) for age in checkpoints(stuck_after, window)]
