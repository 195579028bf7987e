"""What a tenant's account shows it: its plan and usage this period, and the state of its secrets."""

from __future__ import annotations

import msgspec

from herald.domain.plans import BillingPeriod, PlanLimits, Quota
from herald.domain.records import TenantProfile, Usage


class AccountOverview(msgspec.Struct, frozen=True):
    profile: TenantProfile
    limits: PlanLimits
    period: BillingPeriod
    usage: Usage
    email_quota: Quota | None
    webhook_quota: Quota | None

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
