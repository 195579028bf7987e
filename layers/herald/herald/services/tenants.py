"""Tenant lifecycle: creation with a first API key, plan, status and limit changes, key rotation.

Shared by the operator CLI and the account routes of the API. Nothing caches a tenant between
requests, so every change holds from the next request in every container.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

import msgspec

from herald.domain.account import (
    ACTIVE,
    DISABLED,
    MAX_GRACE_SECONDS,
    TenantProfile,
    generate_api_key,
    hash_api_key,
)
from herald.domain.clock import iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.services.outcomes import KeyChanged, TenantNotFound
from herald.services.ports.tenants import TenantStore


class IssuedKey(msgspec.Struct, frozen=True):
    """An API key in clear text: shown once, in the response that creates it, never stored."""

    tenant_id: str
    api_key: str
    # Until when the previous key keeps working (None: revoked at once, with every earlier one).
    previous_valid_until: str | None = None


class TenantAdmin:
    def __init__(self, store: TenantStore, clock: Callable[[], datetime] = utc_now) -> None:
        self._store = store
        self._clock = clock

    def create(self, name: str, email: str, plan: str) -> IssuedKey:
        plan_value = Plan(plan.lower())
        tenant_id = str(uuid.uuid4())
        api_key = generate_api_key()
        created_at = iso(self._clock())
        self._store.create(
            TenantProfile(
                tenant_id=tenant_id,
                name=name,
                email=email,
                plan=plan_value.value,
                status=ACTIVE,
                created_at=created_at,
                api_key_hash=hash_api_key(api_key),
                period_anchor=created_at,
            )
        )
        return IssuedKey(tenant_id, api_key)

    def set_plan(self, tenant_id: str, plan: str) -> TenantProfile:
        return self._update(tenant_id, plan=Plan(plan.lower()).value)

    def set_status(self, tenant_id: str, active: bool) -> TenantProfile:
        return self._update(tenant_id, status=ACTIVE if active else DISABLED)

    def set_quota(self, tenant_id: str, jobs: int | None) -> TenantProfile:
        """Override the plan's metered monthly quota; None goes back to the plan's."""
        return self._update(tenant_id, quota_limit=_limit(jobs))

    def set_rate(self, tenant_id: str, per_minute: int | None) -> TenantProfile:
        """Override the plan's per-minute rate limit; None goes back to the plan's."""
        return self._update(tenant_id, rate_limit=_limit(per_minute))

    def rotate_api_key(
        self, tenant_id: str, grace_seconds: int, current_key_hash: str | None = None
    ) -> IssuedKey:
        """A new key now. With a grace period the current key keeps working that long; without one,
        the current key and every key still in an earlier rotation's grace stop working at once."""
        if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
            raise HeraldError(
                f"graceSeconds must be between 0 and {MAX_GRACE_SECONDS}.", ErrorCode.VALIDATION_ERROR
            )
        current = current_key_hash or self._store.profile(tenant_id).api_key_hash
        now = self._clock()
        api_key = generate_api_key()
        valid_until = now + timedelta(seconds=grace_seconds) if grace_seconds else None
        try:
            self._store.rotate_api_key(tenant_id, current, hash_api_key(api_key), iso(now), valid_until)
        except KeyChanged as exc:
            raise HeraldError(
                "The API key was rotated concurrently; use the newest key.", ErrorCode.KEY_ROTATED
            ) from exc
        return IssuedKey(tenant_id, api_key, iso(valid_until) if valid_until else None)

    def _update(self, tenant_id: str, **changes: object) -> TenantProfile:
        try:
            profile = self._store.update_profile(tenant_id, **changes)
        except TenantNotFound as exc:
            raise HeraldError(f"No tenant {tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc
        return profile


def _limit(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise HeraldError("A limit cannot be negative.", ErrorCode.VALIDATION_ERROR)
    return value
