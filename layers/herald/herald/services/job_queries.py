"""Reading jobs for their tenant (GET job, list jobs) and restarting failed ones (retry)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from herald.domain.clock import now_iso
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus, queue_priority
from herald.domain.records import DeliveryLog, JobState, JobView, TenantContext
from herald.observability import correlation_id
from herald.services.accept import enqueue_or_fail
from herald.services.activity import ActivityService
from herald.services.ports import JobQueue, JobStore, TenantStore


def job_summary(state: JobState) -> dict[str, Any]:
    return {
        "id": state.job_id,
        "type": state.channel.value,
        "status": state.status.value,
        "priority": state.priority,
        "attempts": state.attempts,
        "maxAttempts": state.max_attempts,
        "errorMessage": state.error_message,
        "createdAt": state.created_at,
        "startedAt": state.started_at,
        "completedAt": state.completed_at,
    }


def _delivery_log(entry: DeliveryLog) -> dict[str, Any]:
    return {
        "id": entry.log_id,
        "attempt": entry.attempt,
        "status": entry.status,
        "usedProvider": entry.used_provider,
        "errorMessage": entry.error_message,
        "createdAt": entry.created_at,
        # Every provider this attempt tried, in order (a fallback shows the failure before it).
        "providers": [dict(tried) for tried in entry.tried],
    }


def job_document(view: JobView) -> dict[str, Any]:
    document = job_summary(view.state)
    document["payload"] = view.payload
    document["deliveryLogs"] = [_delivery_log(entry) for entry in view.state.delivery_logs]
    document["events"] = [
        {
            "type": event.type,
            "occurredAt": event.occurred_at,
            "provider": event.provider,
            "reason": event.reason,
        }
        for event in view.events
    ]
    return document


def operator_job(jobs: JobStore, tenants: TenantStore, job_id: str, tenant_id: str | None) -> dict[str, Any]:
    """The job document of any tenant's job (the operator's view), with its tenant id; without
    ``tenant_id`` the job is looked up among every tenant's."""
    owner = tenant_id or jobs.owner(job_id, tenants.tenant_ids())
    view = None if owner is None else jobs.get(owner, job_id)
    if owner is None or view is None:
        raise HeraldError(f"No job {job_id}.", ErrorCode.JOB_NOT_FOUND)
    return {"tenantId": owner, **job_document(view)}


class JobQueries:
    def __init__(
        self,
        store: JobStore,
        queue: JobQueue,
        activity: ActivityService,
        *,
        max_attempts: int,
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self._store = store
        self._queue = queue
        self._activity = activity
        self._max_attempts = max_attempts
        self._clock = clock

    def get(self, tenant: TenantContext, job_id: str) -> dict[str, Any]:
        view = self._store.get(tenant.tenant_id, job_id)
        if view is None:
            raise HeraldError("No job with this id.", ErrorCode.JOB_NOT_FOUND)
        return job_document(view)

    def list(
        self,
        tenant: TenantContext,
        *,
        page: int,
        limit: int,
        channel: Channel | None,
        status: JobStatus | None,
        cursor: str | None,
        day: date | None = None,
    ) -> dict[str, Any]:
        try:
            result = self._store.listing(
                tenant.tenant_id,
                page=page,
                limit=limit,
                channel=channel,
                status=status,
                cursor=cursor,
                day=day,
            )
        except ValueError as exc:
            raise HeraldError("The cursor is not valid.", ErrorCode.INVALID_CURSOR) from exc
        # The day counters hold the totals, so no listing reads a tenant's whole history.
        total = result.total
        if total is None:
            total = self._activity.total(tenant, channel, status, day)
        pagination: dict[str, Any] = {
            "total": total,
            "page": page,
            "limit": limit,
            "totalPages": (total + limit - 1) // limit,
            "nextCursor": result.next_cursor,
        }
        if not result.total_exact:
            pagination["totalIsLowerBound"] = True
        return {"data": [job_summary(state) for state in result.items], "pagination": pagination}

    def retry(self, tenant: TenantContext, job_id: str) -> dict[str, Any]:
        state = requeue_failed(
            self._store,
            self._queue,
            tenant_id=tenant.tenant_id,
            plan=tenant.plan,
            job_id=job_id,
            max_attempts=self._max_attempts,
            now=self._clock(),
            activity=self._activity,
        )
        if state is None:
            raise HeraldError(
                "No failed job with this id; only failed jobs can be retried.", ErrorCode.JOB_NOT_RETRYABLE
            )
        return {
            "jobId": job_id,
            "status": JobStatus.PENDING.value,
            "message": "Job has been re-queued for processing",
        }


def requeue_failed(
    store: JobStore,
    queue: JobQueue,
    *,
    tenant_id: str,
    plan: str,
    job_id: str,
    max_attempts: int,
    now: str,
    activity: ActivityService,
) -> JobState | None:
    """A failed job back to PENDING with a fresh budget of ``max_attempts`` (attempt numbers go on
    growing) and queued again, as POST .../retry and the operator's redrive do; None when the job is
    not failed. A queue that refuses it leaves the job FAILED again (``HeraldError`` 503)."""
    state = store.reopen_failed(tenant_id, job_id, max_attempts, now)
    if state is None:
        return None
    activity.reopened(tenant_id, state.created_at, state.channel)
    message = state.next_message(plan, correlation_id())
    enqueue_or_fail(queue, store, message, queue_priority(state.priority), now, activity=activity)
    return state
