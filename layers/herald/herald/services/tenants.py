"""Tenant lifecycle: creation with a first API key, plan and status changes, key rotation.

Shared by the operator CLI and the account routes of the API.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from herald.adapters.store.models import TenantProfile, tenant_pk
from herald.adapters.store.tenant_store import KeyChanged, TenantStore
from herald.domain.clock import iso, utc_now
from herald.domain.errors import bad_request, conflict
from herald.domain.plans import Plan
from herald.services.auth import generate_api_key, hash_api_key

MAX_GRACE_SECONDS = 604_800  # 7 days (api.md)


@dataclass(frozen=True)
class IssuedKey:
    """An API key in clear text: shown once, in the response that creates it, never stored."""

    tenant_id: str
    api_key: str


def create_tenant(store: TenantStore, name: str, email: str, plan: str) -> IssuedKey:
    plan_value = Plan(plan.lower())
    tenant_id = str(uuid.uuid4())
    api_key = generate_api_key()
    key_hash = hash_api_key(api_key)
    profile = TenantProfile(
        tenant_pk(tenant_id),
        "PROFILE",
        tenant_id=tenant_id,
        name=name,
        email=email,
        plan=plan_value.value,
        status="active",
        created_at=iso(utc_now()),
        api_key_hash=key_hash,
    )
    store.create(profile, key_hash)
    return IssuedKey(tenant_id, api_key)


def set_plan(store: TenantStore, tenant_id: str, plan: str) -> TenantProfile:
    return store.update_profile(tenant_id, plan=Plan(plan.lower()).value)


def set_status(store: TenantStore, tenant_id: str, active: bool) -> TenantProfile:
    return store.update_profile(tenant_id, status="active" if active else "disabled")


def rotate_api_key(
    store: TenantStore, tenant_id: str, current_key_hash: str, grace_seconds: int
) -> IssuedKey:
    """A new key now; the old one keeps working for ``grace_seconds`` (0 = revoked at once)."""
    if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
        raise bad_request(f"graceSeconds must be between 0 and {MAX_GRACE_SECONDS}.")
    now = utc_now()
    api_key = generate_api_key()
    valid_until = now + timedelta(seconds=grace_seconds) if grace_seconds else None
    try:
        store.rotate_api_key(tenant_id, current_key_hash, hash_api_key(api_key), iso(now), valid_until)
    except KeyChanged as exc:
        raise conflict("The API key was rotated concurrently; use the newest key.", "key_rotated") from exc
    return IssuedKey(tenant_id, api_key)
