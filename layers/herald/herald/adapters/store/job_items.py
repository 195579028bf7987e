"""Job items to domain values: a job's state is its request item joined with its status item (which
exists from the first claim on), read in one Query of the job's partition or one BatchGet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
from msgspec.structs import replace

from herald.adapters.store.conversions import request_from_document
from herald.adapters.store.models import (
    DeliveryLogAttribute,
    JobAttemptItem,
    JobEventItem,
    JobItem,
    JobStatusItem,
    attempt_sk,
    job_ids,
)
from herald.domain.job_records import DeliveryLog, JobEvent, JobState, JobView
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import NotificationRequest, WebhookNotification
from herald.domain.webhooks import WebhookExchange


def exchange_text(exchange: WebhookExchange) -> str:
    """The stored form of an attempt's exchange: compact JSON, empty parts left out."""
    return msgspec.json.encode(exchange).decode()


def log_attribute(log: DeliveryLog, *, with_exchange: bool) -> DeliveryLogAttribute:
    """The log entry of the status item; ``with_exchange``: the exchange inline (the job's last
    write), else it lives in the attempt's own item."""
    inline = with_exchange and log.exchange is not None
    return DeliveryLogAttribute(
        id=log.log_id,
        attempt=log.attempt,
        status=log.status,
        used_provider=log.used_provider,
        error_message=log.error_message,
        created_at=log.created_at,
        tried=[dict(entry) for entry in log.tried],
        response_status=log.response_status,
        latency_ms=log.latency_ms,
        exchange=exchange_text(log.exchange) if inline and log.exchange else None,
        retryable=None if log.retryable else False,
    )


def _log_from(entry: DeliveryLogAttribute, kept: Mapping[str, str]) -> DeliveryLog:
    """A log entry, its exchange inline or from its attempt item (``kept``: by attempt sort key)."""
    exchange = entry.exchange or kept.get(attempt_sk(entry.id))
    return DeliveryLog(
        log_id=entry.id,
        attempt=int(entry.attempt),
        succeeded=entry.status == "success",
        created_at=entry.created_at,
        used_provider=entry.used_provider,
        error_message=entry.error_message,
        tried=tuple(dict(tried) for tried in entry.tried or []),
        response_status=_number(entry.response_status),
        latency_ms=_number(entry.latency_ms),
        exchange=msgspec.json.decode(exchange, type=WebhookExchange) if exchange else None,
        retryable=entry.retryable is not False,
    )


def _number(value: float | None) -> int | None:
    return None if value is None else int(value)


def state_of(
    job: JobItem | None, status: JobStatusItem | None, kept: Mapping[str, str] | None = None
) -> JobState | None:
    """The job's state from its items; None when neither exists. ``kept``: the exchanges of its
    attempt items by sort key, where the job's partition was read (listings do without)."""
    if status is None:
        return None if job is None else _from_request(job)
    state = _from_status(status, kept or {})
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


def _from_status(status: JobStatusItem, kept: Mapping[str, str]) -> JobState:
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
        delivery_logs=tuple(_log_from(entry, kept) for entry in status.delivery_logs or []),
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
    kept: dict[str, str] = {}
    for item in items:
        if isinstance(item, JobItem):
            job = item
        elif isinstance(item, JobStatusItem):
            status = item
        elif isinstance(item, JobAttemptItem):
            kept[item.sk] = item.exchange
        elif isinstance(item, JobEventItem):
            events.append(JobEvent(item.type, item.occurred_at, item.provider, item.reason, item.received_at))
    if job is None:
        return None
    state = state_of(job, status, kept)
    assert state is not None
    # In the order Herald received them (a provider's own time may be any time); ties by the
    # provider's time, then by type, so the order never changes from one read to the next.
    events.sort(key=lambda event: (event.order_key, event.occurred_at, event.type))
    return JobView(state, request_of(job), tuple(events))
