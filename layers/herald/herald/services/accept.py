"""Accepting a notification: the API's write path (design.md rule 1, "durable first").

The job row (PENDING) and its idempotency, rate and quota records are written in one
transaction; only then is the message sent to the queue of its channel and priority. If the send
fails, the row becomes FAILED with the reason and the client gets 503 with the job id, so nothing
is lost between the API and the queue. AWS calls per accepted request after warm-up: 1 DynamoDB
transaction + 1 SQS send.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from herald.adapters.queueing import JobQueue
from herald.adapters.ssrf import UrlNotAllowed, check_url
from herald.adapters.store.job_store import (
    DuplicateRequest,
    IdempotencyClaim,
    JobStore,
    NewJob,
    QuotaExhausted,
    RateGuard,
    RateLimited,
    UsageGuard,
)
from herald.domain.clock import iso, utc_now
from herald.domain.errors import (
    DependencyError,
    HeraldError,
    bad_request,
    conflict,
    forbidden,
    too_many_requests,
    unavailable,
)
from herald.domain.jobs import DEFAULT_PRIORITY, LOWEST_PRIORITY, JobMessage, queue_priority
from herald.domain.plans import Plan, limits_for, period_end, usage_period
from herald.http.requests import EmailRequest, WebhookRequest, compact_json
from herald.observability import logger
from herald.services.auth import TenantContext
from herald.settings import Channel, QueuePriority, Settings


@dataclass(frozen=True)
class AcceptedJob:
    job_id: str
    channel: Channel
    created_at: str

    def as_response(self) -> dict[str, Any]:
        return {
            "jobId": self.job_id,
            "status": "pending",
            "type": self.channel.value,
            "createdAt": self.created_at,
        }


class AcceptService:
    def __init__(
        self,
        settings: Settings,
        store: JobStore,
        queue: JobQueue,
        url_checker: Callable[..., object] = check_url,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._settings = settings
        self._store = store
        self._queue = queue
        self._check_url = url_checker
        self._clock = clock

    def accept_email(
        self, tenant: TenantContext, request: EmailRequest, header_key: str | None
    ) -> AcceptedJob:
        _check_email_routing(tenant, request)
        return self._accept(tenant, Channel.EMAIL, request, header_key)

    def accept_webhook(
        self, tenant: TenantContext, request: WebhookRequest, header_key: str | None
    ) -> AcceptedJob:
        try:
            self._check_url(request.url, local_origin=self._settings.local_webhook_origin)
        except UrlNotAllowed as exc:
            raise bad_request(f"The webhook URL is not allowed: {exc.reason}", "url_not_allowed") from exc
        return self._accept(tenant, Channel.WEBHOOK, request, header_key)

    def _accept(
        self,
        tenant: TenantContext,
        channel: Channel,
        request: EmailRequest | WebhookRequest,
        header_key: str | None,
    ) -> AcceptedJob:
        payload = request.model_dump(by_alias=True, exclude_none=True, mode="json")
        priority = request.priority
        key = _idempotency_key(request.idempotencyKey, header_key)
        now = self._clock()
        effective_priority = LOWEST_PRIORITY if tenant.plan == Plan.FREE else (priority or DEFAULT_PRIORITY)
        job = NewJob(
            job_id=str(uuid.uuid4()),
            tenant_id=tenant.tenant_id,
            type=channel.value,
            priority=effective_priority,
            queue=queue_priority(effective_priority).value,
            max_attempts=self._settings.max_attempts,
            created_at=iso(now),
            payload=payload,
        )
        claim = IdempotencyClaim(key, _body_hash(channel, payload)) if key else None
        self._insert(job, claim, tenant, channel, now)
        self._enqueue(job, tenant)
        return AcceptedJob(job.job_id, channel, job.created_at)

    def _insert(
        self,
        job: NewJob,
        claim: IdempotencyClaim | None,
        tenant: TenantContext,
        channel: Channel,
        now: datetime,
    ) -> None:
        limits = limits_for(tenant.plan)
        rate = RateGuard(now.strftime("%Y%m%d%H%M"), limits.requests_per_minute)
        try:
            self._store.insert_accepted(job, claim, rate, _usage_guard(tenant.plan, channel, now))
        except DuplicateRequest as dup:
            if not dup.same_body:
                raise HeraldError(
                    "This idempotency key was already used with a different request body.",
                    "idempotency_key_reused",
                    422,
                ) from dup
            raise conflict(
                "A request with this idempotency key was already accepted.",
                "duplicate_request",
                jobId=dup.job_id,
            ) from dup
        except RateLimited as exc:
            raise too_many_requests(
                f"Rate limit of {limits.requests_per_minute} requests per minute exceeded.",
                "rate_limit_exceeded",
                60 - now.second,
            ) from exc
        except QuotaExhausted as exc:
            raise too_many_requests(
                "The monthly quota of your plan is used up.", "quota_exceeded", _seconds_to_next_period(now)
            ) from exc
        except DependencyError as exc:
            logger.error("job table write failed", extra={"tenant_id": job.tenant_id, "reason": str(exc)})
            raise unavailable(
                "Herald could not store the request; it was not accepted.", "storage_unavailable"
            ) from exc

    def _enqueue(self, job: NewJob, tenant: TenantContext) -> None:
        message = JobMessage(job.job_id, job.tenant_id, Channel(job.type), tenant.plan, 0, job.payload)
        enqueue_or_fail(self._queue, self._store, message, queue_priority(job.priority), iso(self._clock()))


def enqueue_or_fail(
    queue: JobQueue, store: JobStore, message: JobMessage, priority: QueuePriority, now: str
) -> None:
    """Queue a stored PENDING job; if the queue refuses, the job becomes FAILED with the reason
    (so a retry can restart it) and the client gets 503 with the job id."""
    try:
        queue.enqueue(message, priority)
    except DependencyError as exc:
        logger.error("enqueue failed", extra={"job_id": message.job_id, "reason": str(exc)})
        try:
            store.mark_enqueue_failed(
                message.tenant_id, message.job_id, f"Could not be queued for delivery: {exc}", now
            )
        except DependencyError as store_exc:
            # The row stays PENDING; the sweeper re-enqueues jobs left pending too long.
            logger.error(
                "could not mark job failed", extra={"job_id": message.job_id, "reason": str(store_exc)}
            )
        raise unavailable(
            f"The notification was stored but could not be queued; retry it with "
            f"POST /api/v1/notifications/jobs/{message.job_id}/retry.",
            "queue_unavailable",
            jobId=message.job_id,
        ) from exc


def _check_email_routing(tenant: TenantContext, request: EmailRequest) -> None:
    if request.provider is not None and not limits_for(tenant.plan).own_providers:
        raise forbidden("Choosing a provider needs a paid plan.", "plan_required")
    for choice in (request.provider, request.fallback):
        if choice is not None and choice.value not in tenant.providers:
            raise bad_request(
                f"Provider {choice.value} is not configured for this account.", "provider_not_configured"
            )
    if request.from_ is not None:
        domain = request.from_.rsplit("@", 1)[1].lower()
        if domain not in tenant.verified_domains:
            raise bad_request(
                f"The from address must be on a verified sending domain of this account ({domain} is not).",
                "from_not_allowed",
            )


def _idempotency_key(body_key: str | None, header_key: str | None) -> str | None:
    if body_key and header_key and body_key != header_key:
        raise bad_request(
            "The Idempotency-Key header and idempotencyKey field differ.", "idempotency_key_mismatch"
        )
    return body_key or header_key


def _body_hash(channel: Channel, payload: dict[str, Any]) -> str:
    without_key = {name: value for name, value in payload.items() if name != "idempotencyKey"}
    return hashlib.sha256(channel.value.encode() + b"\n" + compact_json(without_key)).hexdigest()


def _usage_guard(plan: str, channel: Channel, now: datetime) -> UsageGuard:
    limits = limits_for(plan)
    attr = "emails" if channel is Channel.EMAIL else "webhooks"
    channel_limit = limits.monthly_emails if channel is Channel.EMAIL else limits.monthly_webhooks
    limit: tuple[str, int] | None = None
    if limits.shared_quota is not None:
        limit = ("total", limits.shared_quota)
    elif channel_limit is not None:
        limit = (attr, channel_limit)
    return UsageGuard(usage_period(now), attr, limit)


def _seconds_to_next_period(now: datetime) -> int:
    return int((period_end(now) - now).total_seconds())
