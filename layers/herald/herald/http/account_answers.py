"""The answers of the account routes and of the console's own routes, one model per shape, as
``herald.http.answers`` describes them; imported with those routes, so that no send pays for them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Literal

from msgspec import Meta

from herald.domain.account import PlatformSending
from herald.domain.billing import BillingStatus
from herald.domain.breakers import BreakerState
from herald.domain.clock import iso
from herald.domain.jobs import JobStatus
from herald.domain.plans import PlanChange
from herald.http.envelope import Answer, Timestamp

if TYPE_CHECKING:
    from herald.domain import addresses, providers, unsubscribes
    from herald.domain.account import AccountOverview
    from herald.domain.account import NewSigningSecret as CreatedSecret
    from herald.domain.account import SigningSecretStatus as SecretStatus
    from herald.domain.breakers import Breaker
    from herald.domain.providers import ProviderDomain, SendingDomain, StoredProvider
    from herald.services.activity import Activity as DayCounts
    from herald.services.checkout import PlanOffer
    from herald.services.keys import IssuedNamedKey


class RateLimit(Answer):
    requests_per_minute: int


class Limits(Answer):
    monthly_emails: int | None
    monthly_webhooks: int | None
    shared_quota: bool


class Usage(Answer):
    emails: int
    webhooks: int
    total: int


class Billing(Answer):
    status: Annotated[
        BillingStatus | None, Meta(description="Set by the payment processor's events; null before any")
    ]
    paid_until: Timestamp | None


class Account(Answer):
    tenant_id: str
    name: str
    email: str
    plan: str
    status: str
    rate_limit: RateLimit
    limits: Limits
    usage: Usage
    period_start: Timestamp
    period_end: Timestamp
    retention_days: int
    billing: Billing
    previous_key_valid_until: Annotated[
        Timestamp | None,
        Meta(description="Until when a rotated-out API key keeps working; null: no grace period runs"),
    ]
    platform_sending: Annotated[
        PlatformSending | None,
        Meta(
            description="Free plan: whether the platform's mail service sends for this account; paused "
            "after too many bounces or complaints (its emails then fail with sending_paused until the "
            "operator resumes it); unknown when it could not be read; null on paid plans"
        ),
    ]

    @classmethod
    def of(cls, overview: AccountOverview) -> Account:
        profile, limits, usage = overview.profile, overview.limits, overview.usage
        emails, webhooks = overview.email_quota, overview.webhook_quota
        paying = None if profile.billing_status is None else BillingStatus(profile.billing_status)
        return cls(
            tenant_id=profile.tenant_id,
            name=profile.name,
            email=profile.email,
            plan=profile.plan,
            status=profile.status,
            rate_limit=RateLimit(requests_per_minute=overview.requests_per_minute),
            limits=Limits(
                monthly_emails=emails.limit if emails else None,
                monthly_webhooks=webhooks.limit if webhooks else None,
                shared_quota=limits.shared_quota is not None,
            ),
            usage=Usage(emails=usage.emails, webhooks=usage.webhooks, total=usage.total),
            period_start=iso(overview.period.start),
            period_end=iso(overview.period.end),
            retention_days=limits.retention_days,
            billing=Billing(status=paying, paid_until=profile.paid_until),
            previous_key_valid_until=overview.previous_key_valid_until,
            platform_sending=overview.platform_sending,
        )


# Keyword-only fields follow a subclass's own: a day's ``day`` leads its counts.
class ActivityTotals(Answer, kw_only=True):
    accepted: int
    completed: int
    failed: int


class ActivityDay(ActivityTotals):
    day: Annotated[str, Meta(description="The UTC day (YYYY-MM-DD) the jobs were accepted on")]


class Activity(Answer):
    from_: Annotated[str, Meta(description="The first day of the range")]
    to: Annotated[str, Meta(description="The last day of the range (today, UTC)")]
    totals: ActivityTotals
    success_rate: Annotated[
        float | None, Meta(description="Completed of finished jobs; null before any finished")
    ]
    days: Annotated[list[ActivityDay], Meta(description="Every day of the range, oldest first")]

    @classmethod
    def of(cls, activity: DayCounts) -> Activity:
        days = activity.days
        return cls(
            from_=days[0].day.isoformat(),
            to=days[-1].day.isoformat(),
            totals=ActivityTotals(
                accepted=activity.total(None),
                completed=activity.total(JobStatus.COMPLETED),
                failed=activity.total(JobStatus.FAILED),
            ),
            success_rate=activity.success_rate,
            days=[
                ActivityDay(
                    day=day.day.isoformat(),
                    accepted=day.count(None, None),
                    completed=day.count(JobStatus.COMPLETED, None),
                    failed=day.count(JobStatus.FAILED, None),
                )
                for day in days
            ],
        )


class Checkout(Answer):
    url: Annotated[str, Meta(description="The processor's hosted checkout page; it returns to the console")]


class Portal(Answer):
    url: Annotated[
        str,
        Meta(description="The processor's customer portal: change or cancel the plan, the payment method"),
    ]


class PlanPrice(Answer):
    processor: Annotated[
        str, Meta(description="The processor that sells the plan at this price: polar or paystack")
    ]
    amount: Annotated[int, Meta(description="A month's price in the currency's minor units (cents, kobo)")]
    currency: Annotated[str, Meta(description="ISO 4217 code")]


class OfferedPlan(Answer):
    """A plan as it is offered: its limits, its prices, and what it would be for this account."""

    plan: str
    change: Annotated[PlanChange, Meta(description="current, upgrade or downgrade, from this account's plan")]
    requests_per_minute: int
    monthly_quota: Annotated[
        int | None, Meta(description="One monthly quota for emails and webhooks together; null: none")
    ]
    monthly_emails: Annotated[int | None, Meta(description="Emails a month; null: not metered apart")]
    monthly_webhooks: Annotated[int | None, Meta(description="Webhooks a month; null: not metered apart")]
    own_providers: Annotated[bool, Meta(description="Emails go through the tenant's own providers")]
    retention_days: int
    prices: Annotated[list[PlanPrice], Meta(description="Empty: not for sale (the free plan)")]

    @classmethod
    def of(cls, offer: PlanOffer) -> OfferedPlan:
        limits = offer.limits
        return cls(
            plan=offer.plan.value,
            change=offer.change,
            requests_per_minute=limits.requests_per_minute,
            monthly_quota=limits.shared_quota,
            monthly_emails=limits.monthly_emails,
            monthly_webhooks=limits.monthly_webhooks,
            own_providers=limits.own_providers,
            retention_days=limits.retention_days,
            prices=[
                PlanPrice(processor=processor.value.lower(), amount=price.amount, currency=price.currency)
                for processor, price in offer.prices
            ],
        )


class RotatedApiKey(Answer):
    api_key: Annotated[str, Meta(description="The new key, shown this once")]
    previous_key_valid_until: Annotated[
        Timestamp | None,
        Meta(description="Until when the old key works; null: it and every earlier key stopped at once"),
    ]

    @classmethod
    def of(cls, issued: IssuedNamedKey) -> RotatedApiKey:
        return cls(api_key=issued.secret, previous_key_valid_until=issued.previous_valid_until)


class Provider(Answer):
    provider: str
    priority: int
    last_four: str
    added_at: Timestamp
    has_webhook_secret: bool
    has_account_token: bool
    webhook_url: Annotated[str, Meta(description="Where this provider posts its event webhooks")]

    @classmethod
    def of(cls, item: StoredProvider, tenant_id: str, api_base: str) -> Provider:
        return cls(
            provider=item.provider,
            priority=item.priority,
            last_four=item.last_four,
            added_at=item.added_at,
            has_webhook_secret=item.webhook_secret is not None,
            has_account_token=item.account_token is not None,
            webhook_url=f"{api_base}/webhooks/{item.provider.lower()}/{tenant_id}",
        )


class Deleted(Answer):
    deleted: Literal[True]


DELETED = Deleted(deleted=True)


class NewSigningSecret(Answer):
    secret: Annotated[str, Meta(description="whsec_…, shown this once")]
    created_at: Timestamp

    @classmethod
    def of(cls, created: CreatedSecret) -> NewSigningSecret:
        """A new secret, or a rotated one with the time its predecessor stops signing."""
        if created.previous_valid_until is None:
            return cls(secret=created.secret, created_at=created.created_at)
        return RotatedSigningSecret(
            secret=created.secret,
            created_at=created.created_at,
            previous_valid_until=created.previous_valid_until,
        )


class RotatedSigningSecret(NewSigningSecret):
    previous_valid_until: Annotated[Timestamp, Meta(description="The old secret signs too until then")]


class SigningSecretStatus(Answer):
    has_secret: bool
    created_at: Timestamp | None
    previous_valid_until: Timestamp | None

    @classmethod
    def of(cls, status: SecretStatus) -> SigningSecretStatus:
        return cls(
            has_secret=status.has_secret,
            created_at=status.created_at,
            previous_valid_until=status.previous_valid_until,
        )


class DnsRecord(Answer):
    type: str
    host: str
    value: str
    purpose: str
    priority: int | None

    @classmethod
    def of(cls, record: providers.DnsRecord) -> DnsRecord:
        return cls(
            type=record.type,
            host=record.host,
            value=record.value,
            purpose=record.purpose,
            priority=record.priority,
        )


class DomainAtProvider(Answer):
    provider: str
    verified: bool
    error: str | None
    records: list[DnsRecord]

    @classmethod
    def of(cls, entry: ProviderDomain) -> DomainAtProvider:
        return cls(
            provider=entry.provider,
            verified=entry.verified,
            error=entry.error,
            records=[DnsRecord.of(record) for record in entry.records],
        )


class Domain(Answer):
    domain: str
    created_at: Timestamp
    verified: bool
    providers: list[DomainAtProvider]

    @classmethod
    def of(cls, item: SendingDomain) -> Domain:
        return cls(
            domain=item.domain,
            created_at=item.created_at,
            verified=item.verified,
            providers=[DomainAtProvider.of(entry) for entry in item.providers],
        )


class Suppression(Answer):
    email: str
    reason: str
    source: Annotated[str | None, Meta(description="The provider that reported it; null: not recorded")]
    created_at: Timestamp

    @classmethod
    def of(cls, item: addresses.Suppression) -> Suppression:
        return cls(email=item.address, reason=item.reason, source=item.source, created_at=item.created_at)


class Unsubscribe(Answer):
    """A recipient's unsubscribe: mail that names this topic no longer goes to this address."""

    email: Annotated[str, Meta(description="The recipient, in the form addresses are compared on")]
    topic: Annotated[str, Meta(description="The topic; * for every topic (a provider's unsubscribe event)")]
    source: Annotated[
        Literal["one-click", "provider"],
        Meta(description="one-click: the link in the mail (or its page); provider: a provider's event"),
    ]
    provider: Annotated[str | None, Meta(description="The provider of a provider event")]
    created_at: Timestamp

    @classmethod
    def of(cls, item: unsubscribes.Unsubscribe) -> Unsubscribe:
        return cls(
            email=item.address,
            topic=item.topic,
            source=item.source.value,
            provider=item.provider,
            created_at=item.created_at,
        )


class UnsubscribePage(Answer):
    data: list[Unsubscribe]
    next_cursor: Annotated[str | None, Meta(description="Pass as cursor for the next page; null: the last")]

    @classmethod
    def of(cls, page: unsubscribes.UnsubscribePage) -> UnsubscribePage:
        return cls(data=[Unsubscribe.of(item) for item in page.items], next_cursor=page.next_cursor)


class Endpoint(Answer):
    """A webhook endpoint as its breaker sees it."""

    origin: Annotated[str, Meta(description="scheme://host[:port] of the webhook URLs it serves")]
    state: Annotated[
        BreakerState,
        Meta(
            description="open: its jobs wait for the cool-down; disabled: its jobs fail with endpoint_disabled"
        ),
    ]
    since: Annotated[Timestamp | None, Meta(description="When the state last changed")]
    last_error: str | None

    @classmethod
    def of(cls, breaker: Breaker) -> Endpoint:
        since = None if breaker.since is None else iso(datetime.fromtimestamp(breaker.since, UTC))
        return cls(origin=breaker.key.name, state=breaker.state, since=since, last_error=breaker.last_error)


# ---------------------------------------------------------------- the console's own routes


class CodeSent(Answer):
    message: str


class SignedIn(Answer):
    tenant_id: str
    # The first API key of a tenant this sign-in created, shown this once; null otherwise.
    api_key: str | None


class SignedOut(Answer):
    signed_out: Literal[True]
