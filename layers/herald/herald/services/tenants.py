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
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.domain.signin import normalized_email
from herald.services.keys import new_key
from herald.services.outcomes import TenantNotFound
from herald.services.ports.tenants import TenantStore


class IssuedKey(msgspec.Struct, frozen=True):
    """An API key in clear text: shown once, in the response that creates it, never stored."""

    tenant_id: str
    api_key: str
    key_id: str


class TenantAdmin:
    def __init__(self, store: TenantStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._store = store
        self._clock = clock

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
        return IssuedKey(tenant_id, api_key, key.key_id)

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
