"""The JSON shapes of the API's answers, from the domain values the services return (docs/api.md).

The one place where a job, a provider, a domain or an account becomes the document a client reads;
the operator CLI prints the same documents.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from herald.domain.clock import iso
from herald.domain.jobs import JobStatus
from herald.domain.notifications import NotificationRequest, WebhookNotification, request_document
from herald.domain.records import (
    DeliveryLog,
    JobEvent,
    JobPage,
    JobState,
    JobView,
    SendingDomain,
    StoredProvider,
    Suppression,
)
from herald.domain.vendors import ProviderName, vendor_of

if TYPE_CHECKING:
    from herald.domain.account import AccountOverview, NewSigningSecret, SigningSecretStatus
    from herald.domain.breakers import Breaker
    from herald.services.accept import AcceptedJob
    from herald.services.job_queries import Recovery
    from herald.services.tenants import IssuedKey

Document = dict[str, Any]


# ---------------------------------------------------------------- jobs


def accepted_job(job: AcceptedJob) -> Document:
    status = JobStatus.SCHEDULED if job.scheduled else JobStatus.PENDING
    document = {
        "jobId": job.job_id,
        "status": status.value,
        "type": job.channel.value,
        "createdAt": job.created_at,
    }
    if job.send_at is not None:
        document["sendAt"] = job.send_at
    return document


def job_summary(state: JobState) -> Document:
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


def _delivery_log(entry: DeliveryLog) -> Document:
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


def _event(event: JobEvent) -> Document:
    return {
        "type": event.type,
        "occurredAt": event.occurred_at,
        "provider": event.provider,
        "reason": event.reason,
    }


def payload(request: NotificationRequest) -> Document:
    """The accepted request as the tenant sent it, its webhook credentials masked."""
    webhook = request.notification
    if isinstance(webhook, WebhookNotification):
        request = replace(request, notification=replace(webhook, headers=webhook.shown_headers()))
    return request_document(request)


def job_document(view: JobView) -> Document:
    request = view.request
    return {
        **job_summary(view.state),
        "sendAt": view.state.send_at or (request.send_at if request is not None else None),
        "orderingKey": request.ordering_key if request is not None else None,
        "payload": payload(view.request) if view.request is not None else None,
        "deliveryLogs": [_delivery_log(entry) for entry in view.state.delivery_logs],
        "events": [_event(event) for event in view.events],
    }


def job_page(result: JobPage, *, page: int, limit: int) -> Document:
    total = result.total or 0  # the queries fill it in from the day counters
    pagination: Document = {
        "total": total,
        "page": page,
        "limit": limit,
        "totalPages": (total + limit - 1) // limit,
        "nextCursor": result.next_cursor,
    }
    if not result.total_exact:
        pagination["totalIsLowerBound"] = True
    return {"data": [job_summary(state) for state in result.items], "pagination": pagination}


def retried_job(state: JobState) -> Document:
    return {
        "jobId": state.job_id,
        "status": JobStatus.PENDING.value,
        "message": "Job has been re-queued for processing",
    }


# ---------------------------------------------------------------- account


def account(overview: AccountOverview) -> Document:
    profile, limits, usage = overview.profile, overview.limits, overview.usage
    emails, webhooks = overview.email_quota, overview.webhook_quota
    return {
        "tenantId": profile.tenant_id,
        "name": profile.name,
        "email": profile.email,
        "plan": profile.plan,
        "status": profile.status,
        "rateLimit": {"requestsPerMinute": overview.requests_per_minute},
        "limits": {
            "monthlyEmails": emails.limit if emails else None,
            "monthlyWebhooks": webhooks.limit if webhooks else None,
            "sharedQuota": limits.shared_quota is not None,
        },
        "usage": {"emails": usage.emails, "webhooks": usage.webhooks, "total": usage.total},
        "periodStart": iso(overview.period.start),
        "periodEnd": iso(overview.period.end),
        "retentionDays": limits.retention_days,
        # Set by the payment processors' events: active, canceling or past_due while paying.
        "billing": {"status": profile.billing_status, "paidUntil": profile.paid_until},
    }


def rotated_key(issued: IssuedKey) -> Document:
    return {"apiKey": issued.api_key, "previousKeyValidUntil": issued.previous_valid_until}


def provider(item: StoredProvider, tenant_id: str, api_base: str) -> Document:
    return {
        "provider": item.provider,
        "priority": item.priority,
        "lastFour": item.last_four,
        "addedAt": item.added_at,
        "hasWebhookSecret": item.webhook_secret is not None,
        "hasAccountToken": item.account_token is not None,
        "webhookUrl": f"{api_base}/webhooks/{item.provider.lower()}/{tenant_id}",
    }


def supported_provider(name: ProviderName) -> Document:
    """A vendor of the provider table as the console and clients read it: what to call it, what
    its key, account token and webhook secret are, its regions and the DNS records it asks for."""
    vendor = vendor_of(name)
    return {
        "provider": name.value,
        "label": vendor.label,
        "apiKey": vendor.api_key,
        "keyExample": vendor.key_example,
        "accountToken": vendor.account_credential,
        "webhookSecret": vendor.inbound_credential,
        # Only where there is a choice: the first is the default.
        "regions": [region.name for region in vendor.regions] if len(vendor.regions) > 1 else [],
        "dnsRecords": [{"type": need.type, "purpose": need.purpose} for need in vendor.dns],
    }


def domain(item: SendingDomain) -> Document:
    return {
        "domain": item.domain,
        "createdAt": item.created_at,
        "verified": item.verified,
        "providers": [
            {
                "provider": entry.provider,
                "verified": entry.verified,
                "error": entry.error,
                "records": [
                    {
                        "type": record.type,
                        "host": record.host,
                        "value": record.value,
                        "purpose": record.purpose,
                        "priority": record.priority,
                    }
                    for record in entry.records
                ],
            }
            for entry in item.providers
        ],
    }


def new_signing_secret(created: NewSigningSecret) -> Document:
    document: Document = {"secret": created.secret, "createdAt": created.created_at}
    if created.previous_valid_until is not None:
        document["previousValidUntil"] = created.previous_valid_until
    return document


def signing_secret_status(status: SigningSecretStatus) -> Document:
    return {
        "hasSecret": status.has_secret,
        "createdAt": status.created_at,
        "previousValidUntil": status.previous_valid_until,
    }


def suppression(item: Suppression) -> Document:
    return {"email": item.address, "reason": item.reason, "source": item.source, "createdAt": item.created_at}


def endpoint(breaker: Breaker) -> Document:
    """A webhook endpoint as its breaker sees it (``since``: when its state last changed)."""
    since = None if breaker.since is None else iso(datetime.fromtimestamp(breaker.since, UTC))
    return {
        "origin": breaker.key.name,
        "state": breaker.state.value,
        "since": since,
        "lastError": breaker.last_error,
    }


def recovery(result: Recovery) -> Document:
    return {"requeued": result.requeued, "nextCursor": result.next_cursor}
