"""Reading jobs for their tenant (GET job, list jobs), restarting failed ones (retry) and cancelling
scheduled ones (cancel)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

import msgspec
from msgspec.structs import replace

from herald.domain.account import TenantContext
from herald.domain.audit import AuditAction, entry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind, endpoint_origin
from herald.domain.clock import iso, now_iso, parse_iso
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.job_records import JobPage, JobState, JobView
from herald.domain.jobs import Channel, JobStatus, queue_priority
from herald.domain.notifications import NotificationRequest, WebhookNotification
from herald.domain.search import JobSearch
from herald.domain.secrets import SecretTampered
from herald.observability import correlation_id, count, logger
from herald.services.accept import enqueue_or_fail
from herald.services.activity import ActivityService
from herald.services.ports.audit import AuditLog
from herald.services.ports.jobs import JobQueue, JobStore, Schedules
from herald.services.ports.platform import SecretBox
from herald.services.ports.providers import Breakers
from herald.services.ports.tenants import Counters, TenantStore
from herald.services.webhook_headers import opened


def operator_job(
    jobs: JobStore, tenants: TenantStore, job_id: str, tenant_id: str | None
) -> tuple[str, JobView]:
    """Any tenant's job (the operator's view) and the tenant it belongs to; without ``tenant_id``
    the job is looked up among every tenant's."""
    owner = tenant_id or jobs.owner(job_id, tenants.tenant_ids())
    view = None if owner is None else jobs.get(owner, job_id)
    if owner is None or view is None:
        raise HeraldError(f"No job {job_id}.", ErrorCode.JOB_NOT_FOUND)
    return owner, view


class JobQueries:
    def __init__(
        self,
        store: JobStore,
        queue: JobQueue,
        activity: ActivityService,
        *,
        schedules: Schedules,
        counters: Counters,
        secrets: SecretBox,
        breakers: Breakers,
        audit: AuditLog,
        max_attempts: int,
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self._store = store
        self._audit = audit
        self._breakers = breakers
        self._schedules = schedules
        self._counters = counters
        self._queue = queue
        self._activity = activity
        self._secrets = secrets
        self._max_attempts = max_attempts
        self._clock = clock

    def get(self, tenant: TenantContext, job_id: str) -> JobView:
        view = self._store.get(tenant.tenant_id, job_id)
        if view is None:
            raise HeraldError("No job with this id.", ErrorCode.JOB_NOT_FOUND)
        if view.request is None or not isinstance(view.request.notification, WebhookNotification):
            return view
        return replace(
            view,
            request=self._shown(tenant.tenant_id, view.request),
            breaker=self._breaker(view, view.request.notification.url),
        )

    def _breaker(self, view: JobView, url: str) -> Breaker | None:
        """The breaker of a waiting webhook's endpoint origin (one read, for waiting jobs only): it
        holds every job to that origin, whatever the path."""
        if view.state.status is not JobStatus.PENDING:
            return None
        key = BreakerKey(BreakerKind.ENDPOINT, view.state.tenant_id, endpoint_origin(url))
        return self._breakers.read([key]).get(key)

    def _shown(self, tenant_id: str, request: NotificationRequest) -> NotificationRequest:
        """The request with its webhook headers opened for the tenant's own view (the view masks the
        credentials among them); a record that does not open shows the names only."""
        assert isinstance(request.notification, WebhookNotification)
        try:
            return replace(request, notification=opened(self._secrets, tenant_id, request.notification))
        except SecretTampered:
            logger.error("webhook headers do not open", extra={"tenant_id": tenant_id})
            return request

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
    ) -> JobPage:
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
        if result.total is not None:
            return result
        # The day counters hold the totals, so no listing reads a tenant's whole history.
        return replace(result, total=self._activity.total(tenant, channel, status, day))

    def search(self, tenant_id: str, search: JobSearch, *, limit: int, cursor: str | None) -> JobPage:
        """A page of the tenant's jobs that ``search`` finds (no total: counters count days, not
        recipients or subjects)."""
        if search.since is not None and search.until is not None and search.since >= search.until:
            raise HeraldError("Invalid request: since: must be before until.", ErrorCode.VALIDATION_ERROR)
        try:
            return self._store.search(tenant_id, search, limit=limit, cursor=cursor)
        except ValueError as exc:
            raise HeraldError("The cursor is not valid.", ErrorCode.INVALID_CURSOR) from exc

    def retry(self, tenant: TenantContext, job_id: str) -> JobState:
        view = self._store.get(tenant.tenant_id, job_id)
        if view is not None and view.state.status is JobStatus.FAILED and not view.state.retryable:
            # The same answer as the document's retryable: false (recipient suppressed or rejected).
            raise HeraldError(
                f"This job failed in a way a retry cannot change ({view.state.error_message}); "
                "it is not retried.",
                ErrorCode.JOB_NOT_RETRYABLE,
            )
        state = requeue_failed(
            self._store,
            self._queue,
            tenant_id=tenant.tenant_id,
            plan=tenant.plan,
            job_id=job_id,
            max_attempts=self._max_attempts,
            now=self._clock(),
        )
        if state is None:
            raise HeraldError(
                "No failed job with this id; only failed jobs can be retried.", ErrorCode.JOB_NOT_RETRYABLE
            )
        # Written once the job is queued again: a retry touches the job's items and a queue, which no
        # one transaction holds, and the log says only what did happen.
        self._audit.record(
            entry(tenant.tenant_id, self._clock(), tenant.actor, AuditAction.JOB_RETRIED, job_id)
        )
        return state

    def cancel(self, tenant: TenantContext, job_id: str) -> JobView:
        """A scheduled job ends cancelled, and leaves its period's usage; once the dispatcher has
        taken it (or it never was scheduled), 409. The conditional write alone decides: a read
        could be a moment behind the dispatcher."""
        view = self.get(tenant, job_id)
        state = view.state
        cancelled = self._schedules.cancel(tenant.tenant_id, job_id, state.created_at, self._clock())
        if cancelled is None:
            current = self._store.get(tenant.tenant_id, job_id)
            status = (current or view).state.status.value
            raise HeraldError(
                f"Only a scheduled job can be cancelled before it is sent; this one is {status}.",
                ErrorCode.JOB_NOT_CANCELLABLE,
            )
        self._refund(tenant, cancelled)
        count("Cancelled", {"channel": cancelled.channel.value})
        return replace(view, state=cancelled)

    def _refund(self, tenant: TenantContext, state: JobState) -> None:
        """The job leaves the quota of the period it was accepted in."""
        accepted = parse_iso(state.created_at)
        try:
            self._counters.refund(tenant.tenant_id, tenant.period(accepted).key, state.channel, None)
        except DependencyError as exc:
            logger.error(
                "usage refund of a cancelled job failed",
                extra={"tenant_id": tenant.tenant_id, "job_id": state.job_id, "reason": str(exc)},
            )
            count("CancelRefundLost")

    def recover(
        self,
        tenant: TenantContext,
        window: tuple[datetime, datetime],
        channel: Channel | None,
        cursor: str | None,
        *,
        term: str | None = None,
    ) -> Recovery:
        """One audit entry per call, with the window, the channel (or the search ``term``: a
        subscription's deliveries) and how many jobs went back (a call that re-queued none changed
        nothing and records nothing)."""
        recovery = recover_failed(
            self._store,
            self._queue,
            tenant_id=tenant.tenant_id,
            plan=tenant.plan,
            window=window,
            channel=channel,
            cursor=cursor,
            max_attempts=self._max_attempts,
            now=self._clock(),
            term=term,
        )
        if recovery.requeued:
            since, until = window
            details = {"since": iso(since), "until": iso(until), "requeued": str(recovery.requeued)}
            if channel is not None:
                details["type"] = channel.value
            if term is not None:
                details["term"] = term
            audit = entry(
                tenant.tenant_id, self._clock(), tenant.actor, AuditAction.JOBS_RECOVERED, "jobs", **details
            )
            self._audit.record(audit)
        return recovery


# Re-queued per recover call: 1 000 re-queues (a conditional write and an enqueue each) fit well
# inside the API's 29-second limit; the cursor carries on from there.
RECOVER_LIMIT = 1000


class Recovery(msgspec.Struct, frozen=True):
    requeued: int
    next_cursor: str | None


def recover_failed(
    store: JobStore,
    queue: JobQueue,
    *,
    tenant_id: str,
    plan: str,
    window: tuple[datetime, datetime],
    channel: Channel | None,
    cursor: str | None,
    max_attempts: int,
    now: str,
    term: str | None = None,
) -> Recovery:
    """Re-queue the tenant's failed jobs accepted in ``window`` ([since, until)), newest first, at
    most ``RECOVER_LIMIT``; each as ``requeue_failed`` does (attempts go on, no quota charged).
    With ``term``, only the failed jobs the job search finds by it (a subscription's deliveries)."""
    since, until = window
    if since >= until:
        raise HeraldError("Invalid request: since: must be before until.", ErrorCode.VALIDATION_ERROR)
    try:
        if term is None:
            page = store.failed_between(
                tenant_id, iso(since), iso(until), channel=channel, cursor=cursor, limit=RECOVER_LIMIT
            )
        else:
            found = JobSearch(
                term, since=iso(since), until=iso(until), channel=channel, status=JobStatus.FAILED
            )
            page = store.search(tenant_id, found, limit=RECOVER_LIMIT, cursor=cursor)
    except ValueError as exc:
        raise HeraldError("The cursor is not valid.", ErrorCode.INVALID_CURSOR) from exc
    requeued = 0
    for state in page.items:
        if not state.retryable:
            continue  # as POST …/retry: a failure no retry changes stays failed
        reopened = requeue_failed(
            store,
            queue,
            tenant_id=tenant_id,
            plan=plan,
            job_id=state.job_id,
            max_attempts=max_attempts,
            now=now,
        )
        requeued += reopened is not None
    return Recovery(requeued, page.next_cursor)


def requeue_failed(
    store: JobStore,
    queue: JobQueue,
    *,
    tenant_id: str,
    plan: str,
    job_id: str,
    max_attempts: int,
    now: str,
) -> JobState | None:
    """A failed job back to PENDING with a fresh budget of ``max_attempts`` (attempt numbers go on
    growing) and queued again, as POST .../retry and the operator's redrive do; None when the job is
    not failed. A queue that refuses it leaves the job FAILED again (``HeraldError`` 503)."""
    state = store.reopen_failed(tenant_id, job_id, max_attempts, now)
    if state is None:
        return None
    message = state.next_message(plan, correlation_id())
    enqueue_or_fail(queue, store, message, queue_priority(state.priority), now)
    return state
