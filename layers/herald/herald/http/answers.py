"""The answers of Herald's HTTP functions, one model per shape (docs/api.md): here the public and
the notification routes'; the account's and the console's own routes' in
``herald.http.account_answers``, imported with those routes; the error envelope, and ``Answer``, the
base of them all, in ``herald.http.envelope``.

A model is at once what a route serialises (``msgspec.to_builtins``: its fields in this order under
their camelCase names, an ``UNSET`` field left out) and, through ``msgspec.json.schema_components``
in ``herald.http.openapi``, the schema the OpenAPI document states for it; the console's front end
reads the field names from a module generated from the models (docs/console.md). Each builds
itself from the domain values the services return (``of``); the operator CLI prints the same
documents. Msgspec Structs rather than pydantic models: defining them costs microseconds of the
cold start and serialising one builds nothing (docs/architecture.md).

A route answers with ``json_response``: its answer, or a list of them, in the success envelope.
Failures answer through ``herald.http.responses``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

import msgspec
from aws_lambda_powertools.event_handler import Response
from msgspec import UNSET, Meta, UnsetType

from herald.domain.clock import utc_now
from herald.domain.jobs import PRIORITY_QUEUES, Channel, JobStatus, compact_json
from herald.domain.notifications import EmailNotification, NotificationRequest, WebhookNotification
from herald.domain.vendors import ProviderName, vendor_of
from herald.domain.webhooks import shown_request_headers
from herald.http.envelope import Answer, Timestamp, json_text, success
from herald.http.requests import EmailRequest, WebhookRequest
from herald.http.status_detail import status_detail

if TYPE_CHECKING:
    from herald.domain import job_records
    from herald.services import accept, job_queries

JSON = "application/json"
Priority = Annotated[int, Meta(extra_json_schema={"enum": list(PRIORITY_QUEUES)})]


def json_response(
    status: int, data: Answer | Sequence[Answer], headers: Mapping[str, str] | None = None
) -> Response[str]:
    """``data``, one answer or a list of them, in the success envelope."""
    return Response(
        status_code=status,
        content_type=JSON,
        body=json_text(success(data)),
        headers=dict(headers or {}),
    )


# ---------------------------------------------------------------- public


class Pong(Answer):
    message: Literal["pong"]


PONG = Pong(message="pong")


class ServiceInfo(Answer):
    name: str
    version: str
    description: str
    documentation: str


class HealthChecks(Answer):
    table: Annotated[str, Meta(description='"ok", or why the table cannot be reached')]
    queues: Annotated[str, Meta(description='"ok", or which queue cannot be reached')]


class Health(Answer):
    status: Literal["ok", "degraded"]
    checks: HealthChecks

    @classmethod
    def of(cls, healthy: bool, checks: dict[str, str]) -> Health:
        found = HealthChecks(table=checks["table"], queues=checks["queues"])
        return cls(status="ok" if healthy else "degraded", checks=found)


class DnsNeed(Answer):
    type: str
    purpose: str


class SupportedProvider(Answer):
    provider: Annotated[str, Meta(description="The name the provider routes and the email fields take")]
    label: str
    api_key: Annotated[str, Meta(description="What the provider calls the key to store as apiKey")]
    key_example: Annotated[str, Meta(description="What such a key looks like")]
    account_token: Annotated[str | None, Meta(description="What its accountToken is for; null: it has none")]
    webhook_secret: Annotated[str, Meta(description="What to store as webhookSecret to verify its events")]
    regions: Annotated[
        list[str],
        Meta(
            description="Where an account may live, the first the default; for another, write its name and a "
            "colon before the key (eu:…). Empty: the provider has one API"
        ),
    ]
    dns_records: Annotated[
        list[DnsNeed], Meta(description="The kinds of DNS records it asks a sending domain for")
    ]

    @classmethod
    def of(cls, name: ProviderName) -> SupportedProvider:
        """A vendor of the provider table as the console and clients read it."""
        vendor = vendor_of(name)
        return cls(
            provider=name.value,
            label=vendor.label,
            api_key=vendor.api_key,
            key_example=vendor.key_example,
            account_token=vendor.account_credential,
            webhook_secret=vendor.inbound_credential,
            # Only where there is a choice: the first is the default.
            regions=[region.name for region in vendor.regions] if len(vendor.regions) > 1 else [],
            dns_records=[DnsNeed(type=need.type, purpose=need.purpose) for need in vendor.dns],
        )


# ---------------------------------------------------------------- notifications


class AcceptedJob(Answer):
    job_id: str
    status: Annotated[Literal["pending", "scheduled"], Meta(description="scheduled: it waits for its sendAt")]
    type: Channel
    created_at: Timestamp
    send_at: Annotated[Timestamp | UnsetType, Meta(description="When the request asked for a sendAt")] = UNSET

    @classmethod
    def of(cls, job: accept.AcceptedJob) -> AcceptedJob:
        return cls(
            job_id=job.job_id,
            status="scheduled" if job.scheduled else "pending",
            type=job.channel,
            created_at=job.created_at,
            send_at=UNSET if job.send_at is None else job.send_at,
        )


class JobSummary(Answer):
    id: str
    type: Channel
    status: JobStatus
    priority: Priority
    attempts: int
    max_attempts: int
    error_message: str | None
    created_at: Timestamp
    started_at: Timestamp | None
    completed_at: Timestamp | None

    @classmethod
    def of(cls, state: job_records.JobState, **more: Any) -> Self:
        """``more``: the fields a subclass adds."""
        return cls(
            id=state.job_id,
            type=state.channel,
            status=state.status,
            priority=state.priority,
            attempts=state.attempts,
            max_attempts=state.max_attempts,
            error_message=state.error_message,
            created_at=state.created_at,
            started_at=state.started_at,
            completed_at=state.completed_at,
            **more,
        )


class ListedJob(JobSummary):
    """A job as the list shows it: what it was sent to, and an email's subject."""

    recipient: Annotated[str | None, Meta(description="An email's recipient; null for a webhook")]
    url: Annotated[str | None, Meta(description="A webhook's URL; null for an email")]
    subject: Annotated[str | None, Meta(description="An email's subject, its first 120 characters")]

    @classmethod
    def listed(cls, state: job_records.JobState) -> ListedJob:
        email = state.channel is Channel.EMAIL
        return cls.of(
            state,
            recipient=state.target if email else None,
            url=None if email else state.target,
            subject=state.subject,
        )


class ProviderTry(Answer):
    """One provider call of an attempt: delivered (with the provider's message id) or failed."""

    provider: str
    outcome: Annotated[str, Meta(description="delivered, provider_permanent, message_permanent or transient")]
    # Each is left out where the call had none (a delivery has no error, a failure no message id).
    provider_message_id: Annotated[
        str | None | UnsetType, Meta(description="The provider's id of the message it accepted")
    ] = UNSET
    status: Annotated[int | None | UnsetType, Meta(description="the provider's HTTP status")] = UNSET
    code: Annotated[str | None | UnsetType, Meta(description="the provider's error code")] = UNSET
    error: str | None | UnsetType = UNSET
    latency_ms: Annotated[
        int | UnsetType, Meta(description="How long the provider's call took, in milliseconds")
    ] = UNSET


def _provider_try(tried: Mapping[str, Any]) -> ProviderTry:
    """A provider call as stored (its id under ``messageId``, as attempts have always kept it)."""
    fields = {name: value for name, value in tried.items() if name != "messageId"}
    if "messageId" in tried:
        fields["providerMessageId"] = tried["messageId"]
    return msgspec.convert(fields, ProviderTry)


class SentRequest(Answer):
    """What a webhook attempt sent."""

    method: str
    url: str
    headers: Annotated[
        dict[str, str],
        Meta(description="As sent; signatures and the tenant's credential headers masked"),
    ]
    body_bytes: Annotated[int, Meta(description="The size of the body sent (the payload as compact JSON)")]


class ReceivedResponse(Answer):
    """What a webhook attempt got back; status null: no answer (timeout, connection refused)."""

    status: int | None
    latency_ms: Annotated[int | None, Meta(description="From the dial to the end of the excerpt")]
    headers: Annotated[dict[str, str], Meta(description="The first 20, each value cut to 256 characters")]
    body_excerpt: Annotated[str, Meta(description="The body's first 4 KB, as text")]


class DeliveryLog(Answer):
    id: str
    attempt: int
    status: Literal["success", "failed"]
    used_provider: str | None
    error_message: str | None
    created_at: Timestamp
    # Every provider this attempt tried, in order (a fallback shows the failure before it).
    providers: list[ProviderTry]
    # A webhook attempt's exchange: left out where nothing was sent (the URL was refused).
    request: SentRequest | UnsetType = UNSET
    response: ReceivedResponse | UnsetType = UNSET

    @classmethod
    def of(cls, entry: job_records.DeliveryLog, request: NotificationRequest | None) -> DeliveryLog:
        """``request``: the job's request as the tenant's view shows it (its headers opened and
        masked); a webhook attempt's method, URL and body size come from it, not from storage."""
        answer = cls(
            id=entry.log_id,
            attempt=entry.attempt,
            status="success" if entry.succeeded else "failed",
            used_provider=entry.used_provider,
            error_message=entry.error_message,
            created_at=entry.created_at,
            providers=[_provider_try(tried) for tried in entry.tried],
        )
        hook = None if request is None else request.notification
        exchange = entry.exchange
        if not isinstance(hook, WebhookNotification) or exchange is None:
            return answer
        answer.request = SentRequest(
            method=hook.method,
            url=hook.url,
            headers=shown_request_headers(exchange.request_headers, hook.shown_headers()),
            body_bytes=len(compact_json(hook.payload)),
        )
        answer.response = ReceivedResponse(
            status=entry.response_status,
            latency_ms=entry.latency_ms,
            headers=exchange.response_headers,
            body_excerpt=exchange.body_excerpt,
        )
        return answer


class DeliveryEvent(Answer):
    type: str
    occurred_at: Annotated[Timestamp, Meta(description="When the provider says it happened")]
    provider: str | None
    reason: Annotated[
        str | None, Meta(description="The provider's description: a bounce's reason, a clicked link")
    ]
    received_at: Annotated[
        Timestamp | None,
        Meta(description="When Herald received the report: events are in this order; null: not recorded"),
    ]

    @classmethod
    def of(cls, event: job_records.JobEvent) -> DeliveryEvent:
        return cls(
            type=event.type,
            occurred_at=event.occurred_at,
            provider=event.provider,
            reason=event.reason,
            received_at=event.received_at,
        )


def _shown_request(request: NotificationRequest) -> dict[str, Any]:
    """The accepted request as the tenant sent it, its webhook credentials masked."""
    notification = request.notification
    if isinstance(notification, WebhookNotification):
        return WebhookRequest.of(request, notification, notification.shown_headers()).document()
    return EmailRequest.of(request, notification).document()


class JobAttachment(Answer):
    """A file the email carries: its content stays in Herald's storage until retention ends."""

    filename: str
    content_type: str
    size: Annotated[int, Meta(description="In bytes, decoded")]


def _attachments(request: NotificationRequest | None) -> list[JobAttachment] | UnsetType:
    email = None if request is None else request.notification
    if not isinstance(email, EmailNotification) or not email.attachments:
        return UNSET
    return [
        JobAttachment(filename=item.filename, content_type=item.content_type, size=item.size)
        for item in email.stored_attachments()
    ]


class UsedTemplate(Answer):
    id: str
    version: Annotated[int, Meta(description="The version the email was rendered from")]

    @classmethod
    def of(cls, request: NotificationRequest | None) -> UsedTemplate | None:
        notification = request.notification if request is not None else None
        if not isinstance(notification, EmailNotification) or notification.template is None:
            return None
        return cls(id=notification.template.template_id, version=notification.template.version or 0)


class Job(JobSummary):
    status_detail: Annotated[
        str, Meta(description="One plain sentence: why the job waits, why it failed, or how it ended")
    ]
    retryable: Annotated[
        bool,
        Meta(
            description="True when POST …/retry may deliver it: a failed job, unless its last attempt "
            "failed in a way no retry changes (the recipient is suppressed or was rejected)"
        ),
    ]
    send_at: Annotated[Timestamp | None, Meta(description="When it is (or was) to be sent; null: at once")]
    ordering_key: Annotated[str | None, Meta(description="Its ordering key; null: none")]
    template: Annotated[
        UsedTemplate | None,
        Meta(description="The template an email was rendered from at accept (its payload shows the result)"),
    ]
    payload: Annotated[dict[str, Any] | None, Meta(description="The accepted request, until retention ends")]
    delivery_logs: list[DeliveryLog]
    events: Annotated[list[DeliveryEvent], Meta(description="In the order Herald received them")]
    attachments: Annotated[
        list[JobAttachment] | UnsetType, Meta(description="An email's attachments; absent without any")
    ] = UNSET

    @classmethod
    def of_view(cls, view: job_records.JobView, now: datetime | None = None) -> Job:
        request = view.request
        return cls.of(
            view.state,
            status_detail=status_detail(view, now or utc_now()),
            retryable=view.state.retryable,
            send_at=view.state.send_at or (request.send_at if request is not None else None),
            ordering_key=request.ordering_key if request is not None else None,
            template=UsedTemplate.of(request),
            payload=_shown_request(request) if request is not None else None,
            delivery_logs=[DeliveryLog.of(entry, request) for entry in view.state.delivery_logs],
            events=[DeliveryEvent.of(event) for event in view.events],
            attachments=_attachments(request),
        )


class Pagination(Answer):
    total: int
    page: int
    limit: int
    total_pages: int
    next_cursor: Annotated[str | None, Meta(description="Pass as cursor for the next page; null on the last")]
    total_is_lower_bound: Annotated[
        bool | UnsetType,
        Meta(
            description="Present (true) when a status filter counted only part of the jobs, or when "
            "a search's page is followed by more (nextCursor)"
        ),
    ] = UNSET


class JobPage(Answer):
    data: list[ListedJob]
    pagination: Pagination

    @classmethod
    def of(cls, result: job_records.JobPage, *, page: int, limit: int) -> JobPage:
        total = result.total or 0  # the queries fill it in from the day counters
        pagination = Pagination(
            total=total,
            page=page,
            limit=limit,
            total_pages=(total + limit - 1) // limit,
            next_cursor=result.next_cursor,
            total_is_lower_bound=UNSET if result.total_exact else True,
        )
        return cls(data=[ListedJob.listed(state) for state in result.items], pagination=pagination)

    @classmethod
    def found(cls, result: job_records.JobPage, *, limit: int) -> JobPage:
        """A page of a search: no counter knows how many jobs a recipient or a subject has, so
        ``total`` counts this page's jobs and is a lower bound while ``nextCursor`` goes on."""
        shown = len(result.items)
        pagination = Pagination(
            total=shown,
            page=1,
            limit=limit,
            total_pages=1 if shown else 0,
            next_cursor=result.next_cursor,
            total_is_lower_bound=True if result.next_cursor else UNSET,
        )
        return cls(data=[ListedJob.listed(state) for state in result.items], pagination=pagination)


class RetriedJob(Answer):
    job_id: str
    status: Literal["pending"]
    message: str

    @classmethod
    def of(cls, state: job_records.JobState) -> RetriedJob:
        return cls(job_id=state.job_id, status="pending", message="Job has been re-queued for processing")


class Recovery(Answer):
    requeued: Annotated[int, Meta(description="Failed jobs re-queued by this call")]
    next_cursor: Annotated[
        str | None, Meta(description="Pass as cursor to re-queue the rest; null when done")
    ]

    @classmethod
    def of(cls, result: job_queries.Recovery) -> Recovery:
        return cls(requeued=result.requeued, next_cursor=result.next_cursor)
