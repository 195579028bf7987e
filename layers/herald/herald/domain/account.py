"""A tenant's account: its profile, everything stored in its partition (provider credentials,
domains, breakers, named keys, members), who is calling and what their account allows, its usage,
and what the account shows it.

API keys have a format and are generated here; only their hash is ever stored.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime
from enum import StrEnum

import msgspec

from herald.domain.access import Actor, ApiKey, Grant, Member
from herald.domain.breakers import Breaker
from herald.domain.jobs import Channel
from herald.domain.plans import BillingPeriod, PlanLimits, Quota, current_period, limits_for, quota_for
from herald.domain.providers import SendingDomain, StoredProvider
from herald.domain.secrets import SealedSecret

ACTIVE = "active"
DISABLED = "disabled"

API_KEY_PATTERN = re.compile(r"^hk_[0-9a-f]{64}$")
# The longest grace period a rotated-out key may keep working (7 days).
MAX_GRACE_SECONDS = 604_800


def generate_api_key() -> str:
    return "hk_" + secrets.token_hex(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class TenantProfile(msgspec.Struct, frozen=True):
    tenant_id: str
    name: str
    email: str
    plan: str
    status: str
    created_at: str
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
    # Console sessions started before this time have ended (the account key's rotation without grace).
    sessions_valid_from: str | None = None


class ApiKeyRecord(msgspec.Struct, frozen=True):
    """Which tenant and named key a key hash is: a fact that never changes (revoking deletes it)."""

    key_hash: str
    tenant_id: str
    key_id: str


class TenantRecords(msgspec.Struct, frozen=True):
    """Everything stored in a tenant's partition, read with one Query."""

    profile: TenantProfile
    providers: tuple[StoredProvider, ...] = ()
    domains: tuple[SendingDomain, ...] = ()
    # The circuit breakers of the tenant's provider keys (only those that ever failed are stored).
    breakers: tuple[Breaker, ...] = ()
    keys: tuple[ApiKey, ...] = ()
    members: tuple[Member, ...] = ()

    def key(self, key_id: str) -> ApiKey | None:
        return next((item for item in self.keys if item.key_id == key_id), None)

    def member(self, member_id: str) -> Member | None:
        return next((item for item in self.members if item.member_id == member_id), None)

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
    grant: Grant
    period_anchor: datetime
    # Configured providers in priority order, and the domains verified with at least one of them.
    providers: tuple[str, ...] = ()
    verified_domains: frozenset[str] = frozenset()
    rate_limit: int | None = None
    quota_limit: int | None = None

    @property
    def actor(self) -> Actor:
        return self.grant.actor

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


class PlatformSending(StrEnum):
    """Whether the platform's SES sends a free account's mail (its own SES tenant's state)."""

    ENABLED = "enabled"
    # SES's reputation policy paused this account alone: its sends fail with sending_paused.
    PAUSED = "paused"
    # SES did not answer the read; sends decide for themselves.
    UNKNOWN = "unknown"


class AccountOverview(msgspec.Struct, frozen=True):
    profile: TenantProfile
    limits: PlanLimits
    period: BillingPeriod
    usage: Usage
    email_quota: Quota | None
    webhook_quota: Quota | None
    # The latest end of a rotated-out key's grace period still running (None: none is).
    previous_key_valid_until: str | None = None
    # Free plan only (paid plans send through their own providers): None otherwise.
    platform_sending: PlatformSending | None = None

    @property
    def requests_per_minute(self) -> int:
        return self.profile.rate_limit or self.limits.requests_per_minute


class NewSigningSecret(msgspec.Struct, frozen=True):
    """A signing secret in clear text: shown once, in the response that creates it."""

    secret: str
    created_at: str
    # During a rotation: until when the previous secret still signs too.
    previous_valid_until: str | None = None


class SigningSecretStatus(msgspec.Struct, frozen=True):
    has_secret: bool
    created_at: str | None
    previous_valid_until: str | None
