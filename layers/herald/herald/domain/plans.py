"""Plans and what they allow: rate limits, monthly quotas, retention, billing periods."""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta
from enum import StrEnum

import msgspec

from herald.domain.clock import iso, parse_iso
from herald.domain.jobs import Channel


class Plan(StrEnum):
    FREE = "free"
    INDIE = "indie"
    STARTUP = "startup"


class PlanLimits(msgspec.Struct, frozen=True):
    requests_per_minute: int
    # None = unmetered. FREE shares one quota between emails and webhooks.
    monthly_emails: int | None
    monthly_webhooks: int | None
    shared_quota: int | None
    own_providers: bool
    # How long a job (request, delivery log, events) is kept.
    retention_days: int


LIMITS: dict[Plan, PlanLimits] = {
    Plan.FREE: PlanLimits(5, None, None, shared_quota=100, own_providers=False, retention_days=14),
    Plan.INDIE: PlanLimits(50, None, 4_000, shared_quota=None, own_providers=True, retention_days=90),
    Plan.STARTUP: PlanLimits(200, None, 15_000, shared_quota=None, own_providers=True, retention_days=365),
}

# Usage counters: the shared count, and one per channel.
TOTAL_COUNTER = "total"


class PlanChange(StrEnum):
    """What moving from a tenant's plan to another one is."""

    CURRENT = "current"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"


def plan_change(current: str, offered: Plan) -> PlanChange:
    """By the plans' order (free, indie, startup: each allows more than the one before)."""
    order = list(Plan)
    step = order.index(offered) - order.index(Plan(current))
    if step == 0:
        return PlanChange.CURRENT
    return PlanChange.UPGRADE if step > 0 else PlanChange.DOWNGRADE


def limits_for(plan: str) -> PlanLimits:
    return LIMITS[Plan(plan)]


def retention_end(plan: str, accepted: datetime) -> datetime:
    """When the items of a job accepted at ``accepted`` may go (their TTL)."""
    return accepted + timedelta(days=limits_for(plan).retention_days)


def channel_counter(channel: Channel) -> str:
    return "emails" if channel is Channel.EMAIL else "webhooks"


class Quota(msgspec.Struct, frozen=True):
    """The counter an accepted job is charged against, and its limit for the period."""

    counter: str
    limit: int


def quota_for(plan: str, channel: Channel, custom_limit: int | None = None) -> Quota | None:
    """None when the channel is unmetered on the plan. A custom limit replaces the plan's figure of
    the metered quota (the shared one on FREE, webhooks on paid plans)."""
    limits = limits_for(plan)
    if limits.shared_quota is not None:
        return Quota(TOTAL_COUNTER, custom_limit if custom_limit is not None else limits.shared_quota)
    plan_limit = limits.monthly_emails if channel is Channel.EMAIL else limits.monthly_webhooks
    if plan_limit is None:
        return None
    return Quota(channel_counter(channel), custom_limit if custom_limit is not None else plan_limit)


class BillingPeriod(msgspec.Struct, frozen=True):
    start: datetime
    end: datetime

    @property
    def key(self) -> str:
        """Names the period's usage counter."""
        return self.start.strftime("%Y%m%dT%H%M%S")


def add_months(anchor: datetime, months: int) -> datetime:
    """The same day and time ``months`` later, clamped to the month's last day (Jan 31 -> Feb 28)."""
    index = anchor.year * 12 + anchor.month - 1 + months
    year, month = divmod(index, 12)
    day = min(anchor.day, calendar.monthrange(year, month + 1)[1])
    return anchor.replace(year=year, month=month + 1, day=day)


# A paid tenant whose subscription period ended without a renewal keeps its plan this long.
PAYMENT_GRACE = timedelta(days=7)


def current_period(anchor: datetime, now: datetime) -> BillingPeriod:
    """The monthly period of ``now`` counted from ``anchor`` (sign-up for free tenants, the
    subscription's period start for paid ones). Each boundary is computed from the anchor itself,
    so short months never make the periods drift."""
    months = (now.year - anchor.year) * 12 + now.month - anchor.month
    start = add_months(anchor, months)
    if start > now:
        months -= 1
        start = add_months(anchor, months)
    return BillingPeriod(start, add_months(anchor, months + 1))


def reset_due(plan: str, paid_until: str | None, period_end: str | None, created_at: str) -> str:
    """When the quota reset next has something to do for a tenant: the end of its recorded period,
    or the end of a paid plan's grace, whichever comes first (a tenant whose period was never
    recorded is due at once)."""
    moments = [period_end or created_at]
    if plan != Plan.FREE and paid_until is not None:
        moments.append(iso(parse_iso(paid_until) + PAYMENT_GRACE))
    return min(moments, key=parse_iso)
