"""Plans and what they allow (design.md rule 7)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class Plan(StrEnum):
    FREE = "free"
    INDIE = "indie"
    STARTUP = "startup"


@dataclass(frozen=True)
class PlanLimits:
    requests_per_minute: int
    # None = unmetered. FREE shares one quota between emails and webhooks.
    monthly_emails: int | None
    monthly_webhooks: int | None
    shared_quota: int | None
    own_providers: bool


LIMITS: dict[Plan, PlanLimits] = {
    Plan.FREE: PlanLimits(5, None, None, shared_quota=100, own_providers=False),
    Plan.INDIE: PlanLimits(50, None, 4_000, shared_quota=None, own_providers=True),
    Plan.STARTUP: PlanLimits(200, None, 15_000, shared_quota=None, own_providers=True),
}


def limits_for(plan: str) -> PlanLimits:
    return LIMITS[Plan(plan)]


def usage_period(moment: datetime) -> str:
    """Quotas count per calendar month (UTC); the monthly reset starts a new period key."""
    return moment.strftime("%Y-%m")


def period_end(moment: datetime) -> datetime:
    first_of_month = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return (first_of_month + timedelta(days=32)).replace(day=1)
