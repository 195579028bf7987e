"""What the stores hold, as frozen values: tenants, keys, provider credentials, domains, jobs.

Services take and return these; the PynamoDB items behind them never leave ``herald.adapters.store``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import msgspec

from herald.domain.breakers import Breaker
from herald.domain.job_messages import JobMessage
from herald.domain.jobs import Channel, JobStatus, queue_priority
from herald.domain.notifications import NotificationRequest
from herald.domain.plans import BillingPeriod, Quota, current_period, limits_for, quota_for
from herald.domain.providers import DnsRecord
from herald.domain.secrets import SealedSecret

ACTIVE = "active"
DISABLED = "disabled"


# ---------------------------------------------------------------- tenants


class TenantProfile(msgspec.Struct, frozen=True):
    tenant_id: str
    name: str
    email: str
    plan: str
    status: str
    created_at: str
    api_key_hash: str
    # The start of the tenant's billing periods (sign-up, or the subscription's period start).
    period_anchor: str
    signing_secret: SealedSecret | None = None
    signing_secret_created_at: str | None = None
    previous_signing_secret: SealedSecret | None = None
    previous_valid_until: str | None = None
    # Operator overrides of the plan's figures; None = the plan's.
    rate_limit: int | None = None
    quota_limit: int | None = None
    # Paid plans: the subscription's current period ends here (set by payment events).
    paid_until: str | None = None
    # The end of the billing period the quota-reset schedule last recorded (bookkeeping: the accept
    # path computes the current period from the anchor itself).
    period_end: str | None = None
    # Set by payment events while the tenant pays: active, canceling or past_due (see domain.billing),
    # and "<PROCESSOR>:<subscription id>" of the subscription it pays with.
    billing_status: str | None = None
    subscription: str | None = None
    # Keys of earlier rotations still in their grace period: hash -> valid until (ISO-8601).
    grace_keys: Mapping[str, str] = msgspec.field(default_factory=dict)
    # Console sessions started before this time have ended (a key rotation without grace).
    sessions_valid_from: str | None = None


class ApiKeyRecord(msgspec.Struct, frozen=True):
    key_hash: str
    tenant_id: str
    created_at: str
    # Set when the key was rotated with a grace period: valid until then, refused after.
    valid_until: str | None = None


class StoredProvider(msgspec.Struct, frozen=True):
    """A tenant's provider credential as stored: sealed, with its place in the fallback order."""

    provider: str
    priority: int
    api_key: SealedSecret
    last_four: str
    added_at: str
    account_token: SealedSecret | None = None
    webhook_secret: SealedSecret | None = None


class ProviderDomain(msgspec.Struct, frozen=True):
    """One provider's registration of a sending domain."""

    provider: str
    provider_domain_id: str
    verified: bool = False
    records: tuple[DnsRecord, ...] = ()
    error: str | None = None


class SendingDomain(msgspec.Struct, frozen=True):
    domain: str
    created_at: str
    providers: tuple[ProviderDomain, ...] = ()

    @property
    def verified(self) -> bool:
        return any(entry.verified for entry in self.providers)


class TenantRecords(msgspec.Struct, frozen=True):
    """Everything stored in a tenant's partition, read with one Query."""

    profile: TenantProfile
    providers: tuple[StoredProvider, ...] = ()
    domains: tuple[SendingDomain, ...] = ()
    # The circuit breakers of the tenant's provider keys (only those that ever failed are stored).
    breakers: tuple[Breaker, ...] = ()

    def provider(self, name: str) -> StoredProvider | None:
        return next((item for item in self.providers if item.provider == name), None)

    def verified_domains(self) -> list[str]:
        """Domains verified with at least one provider the tenant still has configured: the only
        ones mail may be sent from."""
        configured = {credential.provider for credential in self.providers}
        return sorted(
            domain.domain
            for domain in self.domains
            if any(entry.verified and entry.provider in configured for entry in domain.providers)
        )


class TenantContext(msgspec.Struct, frozen=True):
    """Who is calling, and what their account allows: everything the accept path needs."""

    tenant_id: str
    plan: str
    status: str
    key_hash: str
    period_anchor: datetime
    # Configured providers in priority order, and the domains verified with at least one of them.
    providers: tuple[str, ...] = ()
    verified_domains: frozenset[str] = frozenset()
    rate_limit: int | None = None
    quota_limit: int | None = None

    @property
    def requests_per_minute(self) -> int:
        return self.rate_limit if self.rate_limit is not None else limits_for(self.plan).requests_per_minute

    def quota(self, channel: Channel) -> Quota | None:
        return quota_for(self.plan, channel, self.quota_limit)

    def period(self, now: datetime) -> BillingPeriod:
        return current_period(self.period_anchor, now)


class Usage(msgspec.Struct, frozen=True):
    emails: int = 0
    webhooks: int = 0

    @property
    def total(self) -> int:
        return self.emails + self.webhooks


class Suppression(msgspec.Struct, frozen=True):
    address: str
    reason: str
    created_at: str
    source: str | None = None


# ---------------------------------------------------------------- jobs


class NewJob(msgspec.Struct, frozen=True):
    """An accepted request, as the accept path stores it (once; the payload is never rewritten)."""

    job_id: str
    tenant_id: str
    request: NotificationRequest
    priority: int
    max_attempts: int
    created_at: str
    expires_at: int
    # The fingerprint of the request when it came with an idempotency key (the job id derives from it).
    body_hash: str | None = None

    @property
    def channel(self) -> Channel:
        return self.request.channel


class DeliveryLog(msgspec.Struct, frozen=True):
    """What one attempt did, appended to the job's delivery log."""

    log_id: str
    attempt: int
    succeeded: bool
    created_at: str
    used_provider: str | None = None
    error_message: str | None = None
    # Every provider tried in this attempt, in order: {provider, outcome, status, code, error}.
    tried: tuple[Mapping[str, Any], ...] = ()
    response_status: int | None = None
    response_body: str | None = None

    @property
    def status(self) -> str:
        return "success" if self.succeeded else "failed"


class JobState(msgspec.Struct, frozen=True):
    """A job's current state: the accepted request's facts joined with its delivery progress."""

    job_id: str
    tenant_id: str
    channel: Channel
    status: JobStatus
    priority: int
    attempts: int
    max_attempts: int
    created_at: str
    error_message: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    used_provider: str | None = None
    lease_until: int | None = None
    # Providers that failed permanently for this job (bad key, suspended): not tried again.
    skip_providers: tuple[str, ...] = ()
    delivery_logs: tuple[DeliveryLog, ...] = ()
    # When it was last queued again by a retry, a redrive or the sweeper, and how often the sweeper did.
    requeued_at: str | None = None
    sweeps: int = 0
    # A scheduled job's time (on its status item from acceptance on).
    send_at: str | None = None
    # A keyed job's ordering key (on its status item from its first claim or schedule on): every
    # later message of the job joins the key's FIFO group, not a priority queue.
    ordering_key: str | None = None

    @property
    def queue(self) -> str:
        return queue_priority(self.priority).value

    def next_message(self, plan: str, correlation_id: str | None) -> JobMessage:
        """The message that queues the job again for its next attempt (the worker reads its request)."""
        return JobMessage(
            self.job_id,
            self.tenant_id,
            self.channel,
            plan,
            self.attempts,
            None,
            self.priority,
            self.created_at,
            correlation_id,
            ordering_key=self.ordering_key,
        )


class JobEvent(msgspec.Struct, frozen=True):
    """A delivery event a provider reported for the job (``herald.domain.inbound``)."""

    type: str
    occurred_at: str
    provider: str | None = None
    # The provider's short description: bounce reason, SMTP answer, clicked link.
    reason: str | None = None


class JobView(msgspec.Struct, frozen=True):
    state: JobState
    # The accepted request, until its retention ends.
    request: NotificationRequest | None
    events: tuple[JobEvent, ...] = msgspec.field(default_factory=tuple)


class JobPage(msgspec.Struct, frozen=True):
    items: tuple[JobState, ...]
    # None when the store did not count the matches (the day counters give the total).
    total: int | None
    next_cursor: str | None
    # False when a status filter that no index serves stopped at its scan budget.
    total_exact: bool = True


class Claim(msgspec.Struct, frozen=True):
    """A job taken by one delivery attempt."""

    attempt: int
    max_attempts: int
    skip_providers: tuple[str, ...] = ()
