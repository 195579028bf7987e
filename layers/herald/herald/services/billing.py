"""Billing periods over time: the daily quota-reset run.

Usage is counted per billing period, named by the period's start, and the accept path computes the
current period from the tenant's anchor itself: a tenant whose period ended is accepted again at
once, whether this run happened or not. This run does what needs a schedule:
- records the period each tenant is in (``period_end``), so operators and reports see the roll-over;
- moves a paid tenant whose subscription period ended without a renewal to the free plan once the
  grace period is over (a new free period starts then); within the grace, the plan stays.
It is idempotent: a second run, or a late one, finds nothing left to change. It reads only the
tenants due (an index by the time each next needs the reset, moved by every change of period or
payment), so its reads grow with the tenants it acts on, not with all tenants.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime

import msgspec

from herald.domain.access import Actor, ActorKind
from herald.domain.account import TenantProfile
from herald.domain.audit import AuditAction, changed_fields, entry
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.plans import PAYMENT_GRACE, Plan, current_period
from herald.observability import logger
from herald.services.outcomes import TenantNotFound
from herald.services.ports.tenants import TenantStore

ADVANCED = "advanced"
LAPSED = "lapsed"
IN_GRACE = "in_grace"
UNCHANGED = "unchanged"
# Who the audit log names for this run's changes.
QUOTA_RESET = Actor(ActorKind.SYSTEM, "quota-reset", "Quota reset schedule")


class ResetSummary(msgspec.Struct, frozen=True):
    tenants: int
    outcomes: dict[str, int]


class QuotaReset:
    def __init__(self, store: TenantStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._store = store
        self._clock = clock

    def run(self) -> ResetSummary:
        now = self._clock()
        outcomes: Counter[str] = Counter()
        for profile in self._store.due_for_reset(now):
            outcomes[self._reset(profile, now)] += 1
        return ResetSummary(sum(outcomes.values()), dict(outcomes))

    def _reset(self, profile: TenantProfile, now: datetime) -> str:
        if profile.plan != Plan.FREE and profile.paid_until is not None:
            paid_until = parse_iso(profile.paid_until)
            if now >= paid_until + PAYMENT_GRACE:
                return self._lapse(profile, now)
            if now >= paid_until:
                logger.info("paid period ended, in grace", extra={"tenant_id": profile.tenant_id})
                return IN_GRACE
        period = current_period(parse_iso(profile.period_anchor), now)
        if profile.period_end == iso(period.end):
            return UNCHANGED
        self._update(profile.tenant_id, now, AuditAction.TENANT_CHANGED, period_end=iso(period.end))
        return ADVANCED

    def _lapse(self, profile: TenantProfile, now: datetime) -> str:
        """No renewal within the grace: the tenant continues on the free plan, in a new period."""
        period = current_period(now, now)
        self._update(
            profile.tenant_id,
            now,
            AuditAction.PLAN_CHANGED,
            plan=Plan.FREE.value,
            paid_until=None,
            period_anchor=iso(now),
            period_end=iso(period.end),
        )
        logger.warning(
            "paid plan lapsed; moved to free",
            extra={
                "tenant_id": profile.tenant_id,
                "previous_plan": profile.plan,
                "paid_until": profile.paid_until,
            },
        )
        return LAPSED

    def _update(self, tenant_id: str, now: datetime, action: AuditAction, **changes: object) -> None:
        audit = entry(tenant_id, iso(now), QUOTA_RESET, action, tenant_id, **changed_fields(changes))
        try:
            self._store.update_profile(tenant_id, audit, **changes)
        except TenantNotFound:
            return  # deleted while the run was paging: nothing to keep
