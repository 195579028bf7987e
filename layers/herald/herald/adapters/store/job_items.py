"""Job items to domain values: a job's state is its request item joined with its status item (which
exists from the first claim on), read in one Query of the job's partition or one BatchGet."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from msgspec.structs import replace

from herald.adapters.store.conversions import request_from_document
from herald.adapters.store.models import DeliveryLogAttribute, JobEventItem, JobItem, JobStatusItem, job_ids
from herald.domain.job_records import DeliveryLog, JobEvent, JobState, JobView
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import NotificationRequest, WebhookNotification


def log_attribute(log: DeliveryLog) -> DeliveryLogAttribute:
    return DeliveryLogAttribute(
        id=log.log_id,
        attempt=log.attempt,
        status=log.status,
        used_provider=log.used_provider,
        error_message=log.error_message,
        created_at=log.created_at,
        tried=[dict(entry) for entry in log.tried],
        response_status=log.response_status,
        response_body=log.response_body,
    )


def _log_from(entry: DeliveryLogAttribute) -> DeliveryLog:
    return DeliveryLog(
        log_id=entry.id,
        attempt=int(entry.attempt),
        succeeded=entry.status == "success",
        created_at=entry.created_at,
        used_provider=entry.used_provider,
        error_message=entry.error_message,
        tried=tuple(dict(tried) for tried in entry.tried or []),
        response_status=int(entry.response_status) if entry.response_status is not None else None,
        response_body=entry.response_body,
    )


def state_of(job: JobItem | None, status: JobStatusItem | None) -> JobState | None:
    """The job's state from its items; None when neither exists."""
    if status is None:
        return None if job is None else _from_request(job)
    state = _from_status(status)
    if job is None:
        return state
    # A status item created by a message that did not carry the acceptance time has none.
    return replace(
        state, created_at=state.created_at or job.created_at, target=target_of(job), subject=job.subject
    )


def _from_request(job: JobItem) -> JobState:
    """A job no worker has claimed yet: pending, as accepted."""
    tenant_id, job_id = job_ids(job.pk)
    return JobState(
        job_id=job_id,
        tenant_id=tenant_id,
        channel=Channel(job.type),
        status=JobStatus.PENDING,
        priority=int(job.priority),
        attempts=0,
        max_attempts=int(job.max_attempts),
        created_at=job.created_at,
        target=target_of(job),
        subject=job.subject,
    )


def _from_status(status: JobStatusItem) -> JobState:
    tenant_id, job_id = job_ids(status.pk)
    return JobState(
        job_id=job_id,
        tenant_id=tenant_id,
        channel=Channel(status.type),
        status=JobStatus(status.status),
        priority=int(status.priority),
        attempts=int(status.attempts or 0),
        max_attempts=int(status.max_attempts),
        created_at=status.created_at,
        error_message=status.error_message,
        started_at=status.started_at,
        completed_at=status.completed_at,
        used_provider=status.used_provider,
        lease_until=int(status.lease_until) if status.lease_until is not None else None,
        skip_providers=tuple(status.skip_providers or ()),
        delivery_logs=tuple(_log_from(entry) for entry in status.delivery_logs or []),
        requeued_at=status.requeued_at,
        sweeps=int(status.sweeps or 0),
        send_at=status.send_at,
        ordering_key=status.ordering_key,
    )


def target_of(job: JobItem) -> str | None:
    """An email's recipient (on the item and its index entries), or, where the whole request item
    was read, a webhook's URL (no index holds it) or the recipient of an email stored before items
    kept it."""
    if job.target is not None or job.request is None:
        return job.target
    notification = request_of(job).notification
    return notification.url if isinstance(notification, WebhookNotification) else notification.to


def request_of(job: JobItem) -> NotificationRequest:
    return request_from_document(Channel(job.type), job.request)


def view_of(items: Iterable[Any]) -> JobView | None:
    """A job's partition (request, status, events) as one view; None without a request item."""
    job: JobItem | None = None
    status: JobStatusItem | None = None
    events: list[JobEvent] = []
    for item in items:
        if isinstance(item, JobItem):
            job = item
        elif isinstance(item, JobStatusItem):
            status = item
        elif isinstance(item, JobEventItem):
            events.append(JobEvent(item.type, item.occurred_at, item.provider, item.reason))
    if job is None:
        return None
    state = state_of(job, status)
    assert state is not None
    return JobView(state, request_of(job), tuple(sorted(events, key=lambda event: event.occurred_at)))
