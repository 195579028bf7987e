"""Accepting a notification: the API's write path ("durable first").

Per accepted request, 3 AWS calls after warm-up:
1. one conditional UpdateItem of the tenant's counter item: a request in this minute (rate limit)
   and a job in this billing period (quota), both refused together, and the job in today's count
   (the console's activity and the listing's totals; the item stays under 1 KB, so this costs no
   write unit);
2. one conditional PutItem of the job (the request, its routing and its initial state), whose id
   derives from the idempotency key, so the put itself is the idempotency guard;
3. one SQS SendMessage to the queue of the channel and priority; a job with a ``sendAt`` ahead puts
   its status item (status scheduled, with its due-time index entry) instead, and the dispatcher
   queues it at its time (``herald.services.dispatcher``).
An email with attachments first stores each file in the attachments bucket (one S3 PutObject each,
after the charge, so a refused request stores nothing; ``herald.services.attachment_intake``).
A templated email reads its template's version first (1 GetItem: ``herald.services.templates``) and
is rendered here, once, so the job stores the mail as sent and the workers, their retries and the
provider fallback never render.
Only then is the request accepted. If the send fails, the job is marked FAILED with the reason and
the client gets 503 with the job id, so nothing is lost between the table and the queue. A duplicate
costs one more UpdateItem to take its job back off the usage count.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from herald.domain.account import TenantContext
from herald.domain.clock import epoch_seconds, iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.job_records import JobMessage, NewJob
from herald.domain.jobs import DEFAULT_PRIORITY, LOWEST_PRIORITY, Channel, QueuePriority, queue_priority
from herald.domain.notifications import IDEMPOTENCY_KEY, EmailNotification, NotificationRequest
from herald.domain.plans import Plan, limits_for, retention_end
from herald.domain.scheduling import SendAtOutOfRange, due_time
from herald.domain.webhooks import UrlNotAllowed
from herald.observability import correlation_id, count, logger
from herald.services.outcomes import DuplicateRequest, QuotaExhausted, RateLimited
from herald.services.webhook_headers import sealed

if TYPE_CHECKING:
    from herald.services.attachment_intake import AttachmentIntake, Upload
    from herald.services.auth import Credentials
    from herald.services.ports.jobs import JobQueue, JobStore, Schedules
    from herald.services.ports.platform import SecretBox, UrlGuard
    from herald.services.ports.tenants import Counters

# Job ids of requests with an idempotency key derive from tenant and key (UUID v5 in this namespace).
JOB_ID_NAMESPACE = uuid.UUID("1b0e8f8a-5a0f-4f4e-9a6c-3f0f6b1d2c7e")


class AcceptedJob(msgspec.Struct, frozen=True):
    job_id: str
    channel: Channel
    created_at: str
    priority: int
    # The sendAt the request asked for, and whether the job waits for it (False: it was just past).
    send_at: str | None = None
    scheduled: bool = False


def job_id_for(tenant_id: str, idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return str(uuid.uuid4())
    return str(uuid.uuid5(JOB_ID_NAMESPACE, f"{tenant_id}\n{idempotency_key}"))


class AcceptService:
    def __init__(
        self,
        *,
        authenticate: Callable[[Credentials], TenantContext],
        jobs: JobStore,
        counters: Counters,
        queue: JobQueue,
        schedules: Schedules,
        url_guard: UrlGuard,
        secrets: SecretBox,
        attachments: Callable[[], AttachmentIntake],
        max_attempts: int,
        render_template: Callable[[str, EmailNotification], EmailNotification],
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """``render_template``: an email with the subject and parts its template renders (the
        template engine is imported on a templated send's first need); ``attachments``: built by
        the first email with attachments, so the S3 client stays out of the others' path."""
        self._attachments = attachments
        self._authenticate = authenticate
        self._schedules = schedules
        self._secrets = secrets
        self._jobs = jobs
        self._counters = counters
        self._queue = queue
        self._url_guard = url_guard
        self._max_attempts = max_attempts
        self._render_template = render_template
        self._clock = clock

    def accept(
        self, caller: Credentials, request: NotificationRequest, header_key: str | None = None
    ) -> AcceptedJob:
        """Accept ``request`` for the tenant ``caller`` authenticates as; ``header_key`` is the
        Idempotency-Key header's value, if the request had one."""
        tenant = self._authenticate(caller)
        key = idempotency_key_of(request.idempotency_key, header_key)
        sent = request
        notification = request.notification
        uploads: list[Upload] = []
        if isinstance(notification, EmailNotification):
            _check_email_routing(tenant, notification)
            if notification.template is not None:
                rendered = self._render_template(tenant.tenant_id, notification)
                request = msgspec.structs.replace(request, notification=rendered)
            if notification.attachments:
                uploads = self._attachments().read(tenant, notification)
        else:
            self._check_url(notification.url)
        now = self._clock()
        due = _due(request, now)
        channel = request.channel
        charged = charge_or_refuse(self._counters, tenant, channel, now)
        period_key, minute = charged.period, charged.minute
        if uploads:
            request = self._store_attachments(tenant, request, uploads, period_key, minute)
            sent = _with_stored_files(sent, request)
        job = self._new_job(tenant, request, key, now, sent)
        self._insert(tenant, job, period_key, minute)
        message = JobMessage(
            job.job_id,
            tenant.tenant_id,
            channel,
            tenant.plan,
            0,
            job.request,
            job.priority,
            job.created_at,
            correlation_id(),
            ordering_key=request.ordering_key,
        )
        queue = queue_priority(job.priority)
        self._hand_over(job, message, queue, due)
        logger.append_keys(job_id=job.job_id)
        count("Accepted", {"channel": channel.value, "priority": queue.value})
        return AcceptedJob(
            job.job_id, channel, job.created_at, job.priority, request.send_at, scheduled=due is not None
        )

    def _store_attachments(
        self,
        tenant: TenantContext,
        request: NotificationRequest,
        uploads: list[Upload],
        period: str,
        minute: str,
    ) -> NotificationRequest:
        try:
            return self._attachments().store(tenant, request, uploads)
        except DependencyError as exc:
            logger.error("attachment store failed", extra={"tenant_id": tenant.tenant_id, "reason": str(exc)})
            self._refund(tenant, request.channel, period, minute)
            raise storage_unavailable() from exc

    def _hand_over(
        self, job: NewJob, message: JobMessage, queue: QueuePriority, due: datetime | None
    ) -> None:
        """To its queue now, or to the schedule for its ``due`` time."""
        if due is None:
            enqueue_or_fail(self._queue, self._jobs, message, queue, iso(self._clock()))
            return
        send_at = iso(due)
        hand_over_or_fail(
            lambda: self._schedules.schedule(job, send_at),
            self._jobs,
            message,
            iso(self._clock()),
            failure="Could not be scheduled",
        )

    def _check_url(self, url: str) -> None:
        try:
            self._url_guard(url)
        except UrlNotAllowed as exc:
            raise HeraldError(
                f"The webhook URL is not allowed: {exc.reason}", ErrorCode.URL_NOT_ALLOWED
            ) from exc

    def _new_job(
        self,
        tenant: TenantContext,
        request: NotificationRequest,
        key: str | None,
        now: datetime,
        sent: NotificationRequest,
    ) -> NewJob:
        """``sent``: the request as the client sent it (a template's data, not what it rendered),
        which a retry under the same idempotency key is compared with."""
        requested = request.priority
        priority = LOWEST_PRIORITY if tenant.plan == Plan.FREE else (requested or DEFAULT_PRIORITY)
        return NewJob(
            job_id=job_id_for(tenant.tenant_id, key),
            tenant_id=tenant.tenant_id,
            # Only a webhook's custom headers are sealed; most requests have none to seal.
            request=sealed(self._secrets, tenant.tenant_id, request) if request.clear_headers else request,
            priority=priority,
            max_attempts=self._max_attempts,
            created_at=iso(now),
            expires_at=epoch_seconds(retention_end(tenant.plan, now)),
            keyed_request=sent if key else None,
        )

    def _insert(self, tenant: TenantContext, job: NewJob, period: str, minute: str) -> None:
        try:
            self._jobs.insert(job)
        except DuplicateRequest as dup:
            self._refund(tenant, job.request.channel, period, minute)
            if not dup.same_body:
                raise HeraldError(
                    "This idempotency key was already used with a different request body.",
                    ErrorCode.IDEMPOTENCY_KEY_REUSED,
                ) from dup
            raise HeraldError(
                "A request with this idempotency key was already accepted.",
                ErrorCode.DUPLICATE_REQUEST,
                extra={"jobId": dup.job_id},
            ) from dup
        except DependencyError as exc:
            logger.error("job table write failed", extra={"tenant_id": job.tenant_id, "reason": str(exc)})
            # Undercount rather than overcharge when the write's fate is unknown (a timeout).
            self._refund(tenant, job.request.channel, period, minute)
            raise storage_unavailable() from exc

    def _refund(self, tenant: TenantContext, channel: Channel, period: str, minute: str) -> None:
        refund_quietly(self._counters, tenant, channel, Charged(period, minute))


class Charged(msgspec.Struct, frozen=True):
    """Where an accepted request was counted: its billing period and its minute."""

    period: str
    minute: str


def charge_or_refuse(
    counters: Counters, tenant: TenantContext, channel: Channel, now: datetime, *, jobs: int = 1
) -> Charged:
    """Count the request (rate limit) and its ``jobs`` (quota), or refuse it with the sentence and
    fields a client needs (when to retry, what is used up)."""
    period = tenant.period(now)
    charged = Charged(period.key, now.strftime("%Y%m%d%H%M"))
    quota = tenant.quota(channel)
    try:
        counters.charge(
            tenant.tenant_id,
            charged.period,
            charged.minute,
            channel,
            rate_limit=tenant.requests_per_minute,
            quota=quota,
            jobs=jobs,
        )
    except RateLimited as exc:
        retry_after = 60 - now.second
        raise HeraldError(
            f"Rate limit of {tenant.requests_per_minute} requests per minute exceeded; retry in {retry_after} s.",
            ErrorCode.RATE_LIMIT_EXCEEDED,
            extra={"retryAfter": retry_after},
        ) from exc
    except QuotaExhausted as exc:
        limit = quota.limit if quota else 0
        needs = "" if jobs == 1 else f"; this request needs {jobs}"
        raise HeraldError(
            f"The monthly quota of your plan is used up ({exc.used} of {limit}{needs}); it resets at"
            f" {iso(period.end)}.",
            ErrorCode.QUOTA_EXCEEDED,
            extra={"usage": exc.used, "limit": limit, "resetsAt": iso(period.end)},
        ) from exc
    except DependencyError as exc:
        logger.error("counter write failed", extra={"tenant_id": tenant.tenant_id, "reason": str(exc)})
        raise storage_unavailable() from exc
    return charged


def refund_quietly(
    counters: Counters, tenant: TenantContext, channel: Channel, charged: Charged, jobs: int = 1
) -> None:
    """Take back what a request that was not accepted was charged (a failed refund is logged: it
    undercounts nothing, it leaves the count one too high)."""
    try:
        counters.refund(tenant.tenant_id, charged.period, channel, charged.minute, jobs)
    except DependencyError as exc:
        logger.error("usage refund failed", extra={"tenant_id": tenant.tenant_id, "reason": str(exc)})


def storage_unavailable() -> HeraldError:
    return HeraldError(
        "Herald could not store the request right now; it was not accepted. Retry it.",
        ErrorCode.STORAGE_UNAVAILABLE,
    )


def enqueue_or_fail(
    queue: JobQueue,
    store: JobStore,
    message: JobMessage,
    priority: QueuePriority,
    now: str,
) -> None:
    """Queue a stored PENDING job; if the queue refuses, the job becomes FAILED with the reason
    (so a retry can restart it) and the client gets 503 with the job id."""
    hand_over_or_fail(
        lambda: queue.enqueue(message, priority),
        store,
        message,
        now,
        failure="Could not be queued for delivery",
    )


def hand_over_or_fail(
    hand_over: Callable[[], None],
    store: JobStore,
    message: JobMessage,
    now: str,
    *,
    failure: str,
) -> None:
    """Pass a stored job on (to its queue, or to the schedule); if that fails, the job becomes FAILED
    with ``failure`` and the reason, and the client gets 503 with the job id."""
    try:
        hand_over()
    except DependencyError as exc:
        logger.error("enqueue failed", extra={"job_id": message.job_id, "reason": str(exc)})
        try:
            store.mark_enqueue_failed(message, f"{failure}: {exc}", now)
        except DependencyError as store_exc:
            # The job stays PENDING without a message; the sweeper finds and re-queues it.
            logger.error(
                "could not mark job failed", extra={"job_id": message.job_id, "reason": str(store_exc)}
            )
        raise HeraldError(
            "The notification was stored but could not be queued.",
            ErrorCode.QUEUE_UNAVAILABLE,
            extra={"jobId": message.job_id},
        ) from exc


def _check_email_routing(tenant: TenantContext, email: EmailNotification) -> None:
    chosen = email.forced_providers()
    own_providers = limits_for(tenant.plan).own_providers
    if chosen and not own_providers:
        raise HeraldError("Choosing a provider needs a paid plan.", ErrorCode.PLAN_REQUIRED)
    if own_providers and not tenant.providers:
        raise HeraldError(
            "Configure an email provider first; paid plans send through your own provider keys.",
            ErrorCode.PROVIDER_REQUIRED,
        )
    for choice in chosen:
        if choice not in tenant.providers:
            raise HeraldError(
                f"Provider {choice} is not configured for this account.", ErrorCode.PROVIDER_NOT_CONFIGURED
            )
    allowed = tenant.grant.key_domains
    if allowed is not None and email.sender is None:
        raise HeraldError(
            f"This API key may send only from {', '.join(sorted(allowed))}; name a from address there.",
            ErrorCode.INSUFFICIENT_SCOPE,
        )
    if email.sender is not None:
        domain = email.sender.rsplit("@", 1)[1].lower()
        if allowed is not None and domain not in allowed:
            raise HeraldError(
                f"This API key may not send from {domain}; it may send only from {', '.join(sorted(allowed))}.",
                ErrorCode.INSUFFICIENT_SCOPE,
            )
        if domain not in tenant.verified_domains:
            raise HeraldError(
                f"The from address must be on a verified sending domain of this account ({domain} is not).",
                ErrorCode.FROM_NOT_ALLOWED,
            )


def _with_stored_files(sent: NotificationRequest, stored: NotificationRequest) -> NotificationRequest:
    """The request as the client sent it, its files replaced by the references they were stored as
    (content-addressed): what a retry under the same idempotency key is compared with."""
    sent_email, stored_email = sent.notification, stored.notification
    if not isinstance(sent_email, EmailNotification) or not isinstance(stored_email, EmailNotification):
        return sent
    files = msgspec.structs.replace(sent_email, attachments=stored_email.attachments)
    return msgspec.structs.replace(sent, notification=files)


def _due(request: NotificationRequest, now: datetime) -> datetime | None:
    if request.send_at is None:
        return None
    try:
        return due_time(request.send_at, now)
    except SendAtOutOfRange as exc:
        raise HeraldError(
            f"sendAt must lie between now and 30 days ahead (it is {request.send_at}).",
            ErrorCode.SEND_AT_OUT_OF_RANGE,
        ) from exc


def idempotency_key_of(body_key: str | None, header_key: str | None) -> str | None:
    """The request's idempotency key, from its body or its Idempotency-Key header (both: the same)."""
    if header_key is not None and not IDEMPOTENCY_KEY.fullmatch(header_key):
        raise HeraldError(
            "Invalid request: Idempotency-Key: must be 1-255 printable ASCII characters.",
            ErrorCode.VALIDATION_ERROR,
        )
    if body_key and header_key and body_key != header_key:
        raise HeraldError(
            "The Idempotency-Key header and idempotencyKey field differ.", ErrorCode.IDEMPOTENCY_KEY_MISMATCH
        )
    return body_key or header_key
