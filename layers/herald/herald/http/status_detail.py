"""A job's ``statusDetail``: one plain sentence saying why it waits, why it failed or how it ended,
derived at read time from its state, its last attempt and its endpoint's breaker (docs/api.md).

Nothing here is stored: the sentence follows the job as it changes, in the API's words.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from herald.domain.breakers import Breaker, BreakerState
from herald.domain.clock import parse_iso
from herald.domain.job_records import DeliveryLog, JobState, JobView
from herald.domain.jobs import JobStatus
from herald.domain.vendors import ProviderName, vendor_of


def status_detail(view: JobView, now: datetime) -> str:
    state = view.state
    status = state.status
    if status is JobStatus.SCHEDULED:
        send_at = state.send_at or (view.request.send_at if view.request else None)
        return f"Scheduled for {_moment(send_at, None)}." if send_at else "Scheduled."
    if status is JobStatus.CANCELLED:
        return "Cancelled before it was sent."
    if status is JobStatus.COMPLETED:
        return _delivered(state)
    if status is JobStatus.FAILED:
        return _failed(state)
    if status is JobStatus.PROCESSING:
        return f"Sending: attempt {state.attempts} of {state.max_attempts} is under way."
    return _waiting(view, now)


def _delivered(state: JobState) -> str:
    last = _last(state)
    if state.used_provider:
        return f"Delivered via {_label(state.used_provider)}."
    if last is not None and last.response_status is not None:
        return f"Delivered: the endpoint answered HTTP {last.response_status}."
    return "Delivered."


def _failed(state: JobState) -> str:
    last = _last(state)
    if last is None:
        return f"Failed: {state.error_message or 'it could not be queued'}."
    if last.attempt >= state.max_attempts:
        return f"Failed: gave up after {_attempts(last.attempt)} ({_why(last)})."
    return f"Failed: permanent failure ({_why(last)}), not retried."


def _waiting(view: JobView, now: datetime) -> str:
    state = view.state
    breaker = view.breaker
    if breaker is not None and breaker.holds_back(int(now.timestamp())):
        return _held(breaker, now)
    last = _last(state)
    if last is not None and not last.succeeded:
        due = f"; next try about {_moment(state.requeued_at, now)}" if state.requeued_at else ""
        return f"Retrying: attempt {last.attempt} of {state.max_attempts} failed ({_why(last)}){due}."
    key = state.ordering_key or (view.request.ordering_key if view.request else None)
    if key is not None:
        return f"Waiting for any earlier job with ordering key {key} to finish."
    return "Queued: a worker takes it up shortly."


def _held(breaker: Breaker, now: datetime) -> str:
    """A webhook its endpoint's breaker holds: the breaker is per origin, so say which and till when."""
    host = urlsplit(breaker.key.name).netloc
    if breaker.state is BreakerState.DISABLED:
        return (
            f"Waiting: the endpoint {host} is disabled after a long outage; every job to it fails "
            "until it is re-enabled."
        )
    every_path = f"every job to {breaker.key.name} waits with it, whatever its path"
    since = _moment(_iso(breaker.opened_at or breaker.since), now)
    failures = f" after {_attempts(breaker.consecutive, 'failure')}" if breaker.consecutive else ""
    next_try = _moment(_iso(max(breaker.open_until or 0, breaker.probe_until or 0)), now)
    return (
        f"Waiting: the endpoint's breaker for {host} is open since {since}{failures}; next try about "
        f"{next_try} ({every_path})."
    )


def _last(state: JobState) -> DeliveryLog | None:
    return state.delivery_logs[-1] if state.delivery_logs else None


def _why(log: DeliveryLog) -> str:
    """An attempt's failure in a few words: the endpoint's HTTP status; an email's last provider by
    its label, with its reason and status; else the reason recorded."""
    if log.response_status is not None:
        return f"HTTP {log.response_status}"
    last = log.tried[-1] if log.tried else None
    if last is not None and last.get("error"):
        status = f", HTTP {last['status']}" if last.get("status") else ""
        return f"{_label(str(last['provider']))}: {last['error']}{status}"
    return log.error_message or "no reason recorded"


def _attempts(count: int, noun: str = "attempt") -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _label(provider: str) -> str:
    """A provider as people know it (the vendor table's label), whatever the stored spelling."""
    try:
        return vendor_of(ProviderName(provider)).label
    except ValueError:
        return provider


def _iso(epoch: int | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def _moment(value: str | None, now: datetime | None) -> str:
    """A time as a sentence says it: the clock time alone on ``now``'s day, with the date otherwise
    (``now`` None: always with the date)."""
    if value is None:
        return "an unknown time"
    moment = parse_iso(value).astimezone(UTC)
    if now is not None and moment.date() == now.astimezone(UTC).date():
        return moment.strftime("%H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M UTC")
