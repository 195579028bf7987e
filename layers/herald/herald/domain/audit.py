"""The account's audit log: one entry per change to an account, written in the same transaction as
the change itself, so a change without its entry cannot exist.

An entry says when, who (``Actor``: a key, a member, the operator, a payment processor), what (an
``AuditAction``), the target (a key id, a provider, a domain, an address) and from which client
address. Its details are plain facts chosen by the code that records it (a new priority, a role),
never a secret value: no key, token, password or secret is passed to an entry.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from enum import StrEnum

import msgspec

from herald.domain.access import Actor

# Entries are kept at least this long (longer than any plan's job retention).
AUDIT_RETENTION_DAYS = 400
MAX_AUDIT_PAGE = 100


class AuditAction(StrEnum):
    TENANT_CREATED = "tenant.created"
    TENANT_CHANGED = "tenant.changed"
    KEY_CREATED = "key.created"
    KEY_REVOKED = "key.revoked"
    KEY_ROTATED = "key.rotated"
    KEY_MIGRATED = "key.migrated"
    PROVIDER_ADDED = "provider.added"
    PROVIDER_REPLACED = "provider.replaced"
    PROVIDER_REORDERED = "provider.reordered"
    PROVIDER_REMOVED = "provider.removed"
    DOMAIN_ADDED = "domain.added"
    DOMAIN_VERIFIED = "domain.verified"
    DOMAIN_REMOVED = "domain.removed"
    SIGNING_SECRET_CREATED = "signing_secret.created"  # noqa: S105 (an action name)
    SIGNING_SECRET_ROTATED = "signing_secret.rotated"  # noqa: S105 (an action name)
    SIGNING_SECRET_DELETED = "signing_secret.deleted"  # noqa: S105 (an action name)
    SUPPRESSION_REMOVED = "suppression.removed"
    UNSUBSCRIBE_REMOVED = "unsubscribe.removed"
    MEMBER_INVITED = "member.invited"
    MEMBER_JOINED = "member.joined"
    MEMBER_ROLE_CHANGED = "member.role_changed"
    MEMBER_REMOVED = "member.removed"
    OWNERSHIP_TRANSFERRED = "ownership.transferred"
    PLAN_CHANGED = "plan.changed"
    ENDPOINT_ENABLED = "endpoint.enabled"
    ENDPOINT_DISABLED = "endpoint.disabled"
    TEMPLATE_CREATED = "template.created"
    TEMPLATE_UPDATED = "template.updated"
    TEMPLATE_PUBLISHED = "template.published"
    TEMPLATE_DELETED = "template.deleted"
    EVENT_TYPE_CREATED = "event_type.created"
    EVENT_TYPE_UPDATED = "event_type.updated"
    EVENT_TYPE_ARCHIVED = "event_type.archived"
    SUBSCRIPTION_CREATED = "subscription.created"
    SUBSCRIPTION_UPDATED = "subscription.updated"
    SUBSCRIPTION_DELETED = "subscription.deleted"
    SUBSCRIPTION_ENABLED = "subscription.enabled"
    SUBSCRIPTION_DISABLED = "subscription.disabled"
    SUBSCRIPTION_SECRET_ROTATED = "subscription.secret_rotated"  # noqa: S105 (an action name)
    PORTAL_LINK_CREATED = "portal_link.created"
    JOBS_RECOVERED = "jobs.recovered"
    JOB_RETRIED = "job.retried"
    # The operator reinstated a free tenant's sending on the platform's SES after a reputation pause.
    SES_SENDING_RESUMED = "ses.sending_resumed"


def new_entry_id() -> str:
    """16 hex digits: the nanoseconds within the millisecond first (entries sort by ``at#id``, and
    two changes of one millisecond must list newest first), then a random tail."""
    return f"{time.time_ns() % 1_000_000:05x}{secrets.token_hex(6)[:11]}"


class AuditEntry(msgspec.Struct, frozen=True):
    entry_id: str
    tenant_id: str
    at: str
    actor: Actor
    action: AuditAction
    target: str
    details: Mapping[str, str] = msgspec.field(default_factory=dict)


def entry(
    tenant_id: str, at: str, actor: Actor, action: AuditAction, target: str, **details: str
) -> AuditEntry:
    return AuditEntry(new_entry_id(), tenant_id, at, actor, action, target, details)


def changed_fields(changes: Mapping[str, object]) -> dict[str, str]:
    """A profile change as an entry's details: each field's new value ("" where it is removed or goes
    back to the plan's), named as the API names fields (``quota_limit``: ``quotaLimit``). Only for
    profile fields (plan, status, limits, billing), which hold no secret."""
    return {_camel(name): "" if value is None else str(value) for name, value in changes.items()}


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


class AuditPage(msgspec.Struct, frozen=True):
    entries: tuple[AuditEntry, ...]
    next_cursor: str | None
