"""Reading jobs for their tenant (GET job, list jobs) and restarting failed ones (retry)."""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from herald.adapters.queueing import JobQueue
from herald.adapters.store.job_store import JobStore, JobView
from herald.adapters.store.models import DeliveryLogAttribute, JobState
from herald.domain.clock import now_iso
from herald.domain.errors import bad_request, not_found
from herald.domain.jobs import JobMessage, JobStatus, queue_priority
from herald.services.accept import enqueue_or_fail
from herald.services.auth import TenantContext
from herald.settings import Channel, Settings

MAX_PAGE_SIZE = 100


def job_summary(state: JobState) -> dict[str, Any]:
    return {
        "id": state.job_id,
        "type": state.type,
        "status": state.status,
        "priority": int(state.priority),
        "attempts": int(state.attempts),
        "maxAttempts": int(state.max_attempts),
        "errorMessage": state.error_message,
        "createdAt": state.created_at,
        "startedAt": state.started_at,
        "completedAt": state.completed_at,
    }


def _delivery_log(entry: DeliveryLogAttribute) -> dict[str, Any]:
    return {
        "id": entry.id,
        "attempt": int(entry.attempt),
        "status": entry.status,
        "usedProvider": entry.used_provider,
        "errorMessage": entry.error_message,
        "createdAt": entry.created_at,
        # Every provider this attempt tried, in order (a fallback shows the failure before it).
        "providers": [dict(tried) for tried in entry.tried or []],
    }


def job_document(view: JobView) -> dict[str, Any]:
    document = job_summary(view.state)
    document["payload"] = view.payload
    document["deliveryLogs"] = [_delivery_log(entry) for entry in view.state.delivery_logs or []]
    document["events"] = [
        {"type": event.type, "occurredAt": event.occurred_at, "provider": event.provider}
        for event in view.events
    ]
    return document


class JobQueries:
    def __init__(
        self, settings: Settings, store: JobStore, queue: JobQueue, clock: Callable[[], str] = now_iso
    ):
        self._settings = settings
        self._store = store
        self._queue = queue
        self._clock = clock

    def get(self, tenant: TenantContext, job_id: str) -> dict[str, Any]:
        view = self._store.get(tenant.tenant_id, job_id)
        if view is None:
            raise not_found("No job with this id.", "job_not_found")
        return job_document(view)

    def list(
        self,
        tenant: TenantContext,
        *,
        page: int,
        limit: int,
        type_: str | None,
        status: str | None,
        cursor: str | None,
    ) -> dict[str, Any]:
        try:
            result = self._store.list(
                tenant.tenant_id, page=page, limit=limit, type_=type_, status=status, cursor=cursor
            )
        except (ValueError, binascii.Error) as exc:
            raise bad_request("The cursor is not valid.", "invalid_cursor") from exc
        total_pages = (result.total + limit - 1) // limit
        return {
            "data": [job_summary(state) for state in result.items],
            "pagination": {
                "total": result.total,
                "page": page,
                "limit": limit,
                "totalPages": total_pages,
                "nextCursor": result.next_cursor,
            },
        }

    def retry(self, tenant: TenantContext, job_id: str) -> dict[str, Any]:
        state = self._store.reopen_failed(tenant.tenant_id, job_id, self._settings.max_attempts)
        if state is None:
            raise not_found(
                "No failed job with this id; only failed jobs can be retried.", "job_not_retryable"
            )
        message = JobMessage(
            job_id, tenant.tenant_id, Channel(state.type), tenant.plan, int(state.attempts), None
        )
        enqueue_or_fail(self._queue, self._store, message, queue_priority(int(state.priority)), self._clock())
        return {
            "jobId": job_id,
            "status": JobStatus.PENDING.value,
            "message": "Job has been re-queued for processing",
        }
