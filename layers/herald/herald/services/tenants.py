"""Tenant lifecycle: creation with a first named key (``full``) and its owner, plan, status and
limit changes.

Shared by the operator CLI, sign-up and the account routes of the API. Nothing caches a tenant
between requests, so every change holds from the next request in every container.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

import msgspec

from herald.domain.access import FIRST_KEY_NAME, Actor, Member, MemberStatus, Role, Scope, generate_id
from herald.domain.account import ACTIVE, DISABLED, TenantProfile
from herald.domain.audit import AuditAction, changed_fields, entry
from herald.domain.clock import iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.domain.signin import normalized_email
from herald.observability import logger
from herald.services.keys import new_key
from herald.services.outcomes import TenantNotFound
from herald.services.ports.audit import AuditLog
from herald.services.ports.platform import PlatformTenants
from herald.services.ports.tenants import TenantStore


class IssuedKey(msgspec.Struct, frozen=True):
    """An API key in clear text: shown once, in the response that creates it, never stored."""

    tenant_id: str
    api_key: str
    key_id: str


class TenantAdmin:
    def __init__(
        self,
        store: TenantStore,
        clock: Callable[[], datetime] = utc_now,
        *,
        ses_tenants: PlatformTenants | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        # Where free tenants get their SES tenant (None: a composition that creates no free tenant).
        self._ses_tenants = ses_tenants
        self._audit = audit

    def create(self, name: str, email: str, plan: str, actor: Actor) -> IssuedKey:
        """A tenant, its first key (``full``) and ``email`` as its owner, recorded as ``actor``'s."""
        plan_value = Plan(plan.lower())
        tenant_id, now = str(uuid.uuid4()), self._clock()
        created_at = iso(now)
        key, api_key = new_key(FIRST_KEY_NAME, (Scope.FULL,), actor.name, now)
        owner = Member(
            member_id=generate_id("mem"),
            email=normalized_email(email),
            role=Role.OWNER,
            status=MemberStatus.ACTIVE,
            created_at=created_at,
            invited_by=actor.name,
            joined_at=created_at,
        )
        profile = TenantProfile(
            tenant_id=tenant_id,
            name=name,
            email=email,
            plan=plan_value.value,
            status=ACTIVE,
            created_at=created_at,
            period_anchor=created_at,
        )
        audit = entry(
            tenant_id, created_at, actor, AuditAction.TENANT_CREATED, tenant_id, plan=plan_value.value
        )
        self._store.create(profile, key, owner, audit)
        if plan_value is Plan.FREE:
            self._set_up_ses_tenant(tenant_id)
        return IssuedKey(tenant_id, api_key, key.key_id)

    def _set_up_ses_tenant(self, tenant_id: str) -> None:
        """The free tenant's SES tenant, right after the account exists. An SES failure must not
        cost a person their sign-up: the account stands, and its first free send sets the SES
        tenant up (the SES adapter does so when SES does not know the tenant)."""
        if self._ses_tenants is None:
            return
        try:
            self._ses_tenants.ensure(tenant_id)
        except DependencyError as exc:
            logger.warning(
                "SES tenant left for the first send", extra={"tenant_id": tenant_id, "reason": str(exc)}
            )

    def resume_sending(self, tenant_id: str, actor: Actor) -> None:
        """Reinstate a free tenant's sending on the platform's SES, with its audit entry. The change
        is SES's, not the table's, so the entry follows the change once SES made it."""
        if self._ses_tenants is None or self._audit is None:
            raise TypeError("resume_sending needs the SES tenants and the audit log")
        try:
            self._store.profile(tenant_id)
        except TenantNotFound as exc:
            raise HeraldError(f"No tenant {tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc
        self._ses_tenants.resume(tenant_id)
        self._audit.record(
            entry(tenant_id, iso(self._clock()), actor, AuditAction.SES_SENDING_RESUMED, tenant_id)
        )

    # Each change below is recorded as ``actor``'s (the operator, from the CLI): its audit entry is
    # written in the change's own transaction.

    def set_plan(self, tenant_id: str, plan: str, actor: Actor) -> TenantProfile:
        value = Plan(plan.lower()).value
        return self._update(tenant_id, actor, AuditAction.PLAN_CHANGED, plan=value)

    def set_status(self, tenant_id: str, active: bool, actor: Actor) -> TenantProfile:
        return self._update(
            tenant_id, actor, AuditAction.TENANT_CHANGED, status=ACTIVE if active else DISABLED
        )

    def set_quota(self, tenant_id: str, jobs: int | None, actor: Actor) -> TenantProfile:
        """Override the plan's metered monthly quota; None goes back to the plan's."""
        return self._update(tenant_id, actor, AuditAction.TENANT_CHANGED, quota_limit=_limit(jobs))

    def set_rate(self, tenant_id: str, per_minute: int | None, actor: Actor) -> TenantProfile:
        """Override the plan's per-minute rate limit; None goes back to the plan's."""
        return self._update(tenant_id, actor, AuditAction.TENANT_CHANGED, rate_limit=_limit(per_minute))

    def _update(self, tenant_id: str, actor: Actor, action: AuditAction, **changes: object) -> TenantProfile:
        audit = entry(tenant_id, iso(self._clock()), actor, action, tenant_id, **changed_fields(changes))
        try:
            profile = self._store.update_profile(tenant_id, audit, **changes)
        except TenantNotFound as exc:
            raise HeraldError(f"No tenant {tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc
        return profile


def _limit(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise HeraldError("A limit cannot be negative.", ErrorCode.VALIDATION_ERROR)
    return value
