"""Ports of tenants and their accounts: profiles and keys, providers and domains as stored, usage
counters, suppression lists, console sign-in and sessions, and payment processors' links."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # Only named in signatures: a function imports the domain modules its own path uses.
    from herald.domain.access import ApiKey, Member
    from herald.domain.account import ApiKeyRecord, TenantProfile, TenantRecords, Usage
    from herald.domain.activity import DayCounts
    from herald.domain.addresses import Suppression
    from herald.domain.audit import AuditEntry
    from herald.domain.inbound import Processor
    from herald.domain.jobs import Channel
    from herald.domain.members import Membership
    from herald.domain.plans import Quota
    from herald.domain.providers import (
        SendingDomain,
        StoredProvider,
    )
    from herald.domain.secrets import SealedSecret
    from herald.domain.signin import PendingCode, Session


class TenantStore(Protocol):
    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    def tenant_for_email(self, address_key: str) -> str | None:
        """The tenant that signs in with this address (``herald.domain.signin.address_key``); the
        first tenant created with an address claims it."""

    def profile(self, tenant_id: str) -> TenantProfile:
        """``TenantNotFound`` when there is no such tenant."""

    def load(self, tenant_id: str) -> TenantRecords:
        """``TenantNotFound`` when there is no such tenant."""

    def create(self, profile: TenantProfile, key: ApiKey, owner: Member, audit: AuditEntry) -> None: ...

    def due_for_reset(self, now: datetime) -> Iterator[TenantProfile]:
        """The tenants whose period ended or whose paid plan's grace ended by ``now``."""

    def all_profiles(self) -> Iterator[TenantProfile]: ...

    def tenant_ids(self) -> Iterator[str]:
        """Every tenant's id, oldest first, from the index alone (no profile is read)."""

    def update_profile(self, tenant_id: str, audit: AuditEntry, **changes: object) -> TenantProfile:
        """Set (or, with None, remove) profile attributes, with the change's audit entry in the same
        transaction; ``TenantNotFound`` when absent."""

    def update_profile_if(
        self,
        tenant_id: str,
        expected: Mapping[str, object],
        changes: Mapping[str, object],
        audit: AuditEntry,
    ) -> TenantProfile:
        """``update_profile`` only while the ``expected`` attributes still hold those values (None:
        absent); ``ProfileChanged`` otherwise."""


class KeyStore(Protocol):
    """A tenant's named API keys; every change is written with its audit entry."""

    def add(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None: ...

    def revoke(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None:
        """``KeyChanged`` when the key was rotated or revoked meanwhile."""

    def rotate(
        self, tenant_id: str, old: ApiKey, new: ApiKey, audit: AuditEntry, sessions_end_at: str | None = None
    ) -> None:
        """``KeyChanged`` when the key was rotated or revoked meanwhile."""

    def touch(self, tenant_id: str, key_id: str, now: datetime) -> bool:
        """Record a use unless one was recorded within the interval."""


class MemberStore(Protocol):
    """A tenant's members and the accounts a person belongs to; every change is one transaction
    with its audit entry, conditioned on what the change was decided from. Each raises
    ``MemberChanged`` when that no longer holds."""

    def invite(
        self, tenant_id: str, tenant_name: str, member: Member, audit: AuditEntry, lapsed: Member | None
    ) -> None:
        """The member (invited) and the person's membership; ``lapsed``, a lapsed invitation of the
        same address, goes in the same transaction. ``MemberChanged`` when the address is a member."""

    def change_role(
        self, tenant_id: str, member: Member, changed: Member, audit: AuditEntry, keeper: Member | None
    ) -> None:
        """``member`` becomes ``changed`` while its role is still ``member.role`` and ``keeper``
        (None: no condition) is still an active owner."""

    def remove(self, tenant_id: str, member: Member, audit: AuditEntry, keeper: Member | None) -> None:
        """The member and the person's membership go, on the same conditions as ``change_role``."""

    def join(self, tenant_id: str, member: Member, audit: AuditEntry) -> None:
        """The invitation ``member`` (now active, joined) is accepted, while it is still invited."""

    def memberships(self, address_key: str) -> list[Membership]:
        """The accounts an address (``herald.domain.signin.address_key``) belongs to or is invited to."""


class AccountStore(Protocol):
    """Provider keys, the signing secret and sending domains; every change is written with its audit
    entry, in one transaction."""

    def save_provider(self, tenant_id: str, provider: StoredProvider, audit: AuditEntry) -> None: ...

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider], audit: AuditEntry
    ) -> None: ...

    def swap_priorities(
        self,
        tenant_id: str,
        moved: StoredProvider,
        new_priority: int,
        holder: StoredProvider | None,
        audit: AuditEntry,
    ) -> None: ...

    def set_signing_secret(
        self,
        tenant_id: str,
        secret: SealedSecret,
        created_at: str,
        *,
        require_absent: bool,
        audit: AuditEntry,
        previous: SealedSecret | None = None,
        previous_valid_until: str | None = None,
    ) -> None:
        """``AlreadyExists`` when ``require_absent`` and a secret is set."""

    def delete_signing_secret(self, tenant_id: str, audit: AuditEntry) -> None: ...

    def claim_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None:
        """``DomainTaken`` when another tenant owns it."""

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None: ...

    def record_registrations(self, tenant_id: str, domain: SendingDomain) -> None:
        """The providers' answers to the registration of the domain ``claim_domain`` just added."""

    def save_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None: ...

    def delete_domain(self, tenant_id: str, name: str, audit: AuditEntry) -> None: ...


class Counters(Protocol):
    """Per-tenant request and usage counters (one small item per tenant and billing period)."""

    def charge(
        self,
        tenant_id: str,
        period: str,
        minute: str,
        channel: Channel,
        *,
        rate_limit: int,
        quota: Quota | None,
        jobs: int = 1,
    ) -> None:
        """Count one request in ``minute`` and ``jobs`` jobs in ``period`` and on the day of
        ``minute`` (``YYYYmmddHHMM``), within their limits, or raise ``RateLimited`` /
        ``QuotaExhausted`` and count nothing. An event counts each of its deliveries as a job."""

    def refund(
        self, tenant_id: str, period: str, channel: Channel, minute: str | None, jobs: int = 1
    ) -> None:
        """Take back the job of a request that turned out to be a duplicate (charged in ``minute``),
        or, with ``minute`` None, only the quota of a job that stays among its day's (a cancelled one)."""

    def usage(self, tenant_id: str, period: str) -> Usage: ...


class ActivityCounters(Protocol):
    """A tenant's jobs by day: the accepted ones (counted by ``Counters.charge``) and the outcomes,
    which TallyFunction adds from the table's stream, one write per tenant-day and stream batch."""

    def add_outcomes(self, changes: Mapping[tuple[str, date], Mapping[str, int]], token: str) -> None:
        """Add each tenant-day's ``changes`` (``outcome_field`` -> count, negative to take back) to its
        counts. Repeated with the same ``token`` and changes within ten minutes, it adds only what
        the earlier call did not (a call that raised may have added some tenant-days): a retried
        stream batch, in this container or another, is not counted twice."""

    def days(self, tenant_id: str, first: date, last: date) -> list[DayCounts]:
        """The counts of the days from ``first`` to ``last`` that have any (one bounded read)."""


class Suppressions(Protocol):
    def is_suppressed(self, tenant_id: str, address: str) -> bool: ...

    def suppress(self, tenant_id: str, suppression: Suppression) -> None: ...

    def entries(self, tenant_id: str) -> Iterator[Suppression]: ...

    def delete(self, tenant_id: str, address: str, audit: AuditEntry) -> bool:
        """False (writing no entry) when the address was not suppressed."""


class SignInStore(Protocol):
    """One-time codes (one per address) and the per client IP throttles of the sign-in routes."""

    def count_request(self, scope: str, window: int, limit: int) -> bool:
        """Count one request against ``scope`` in the window starting at ``window`` (epoch
        seconds); False, counting nothing, when ``limit`` requests were counted already."""

    def save_code(self, code: PendingCode, replacing: PendingCode | None) -> bool:
        """Store the address's code in place of ``replacing``, the code read before it (None: there
        was none); False, storing nothing, when another code took its place meanwhile."""

    def code(self, address_key: str) -> PendingCode | None:
        """The address's last code, also once it expired or died, until its streak is over."""

    def wrong_try(self, code: PendingCode) -> None:
        """Count a wrong try of this very code (a newer code of the address is left alone)."""

    def use_code(self, code: PendingCode) -> bool:
        """Remove this very code, unless it was used, replaced or locked meanwhile (False)."""


class SessionStore(Protocol):
    def create(self, session: Session) -> None: ...

    def get(self, token_digest: str) -> Session | None: ...

    def end(self, token_digest: str) -> None: ...


class BillingLinks(Protocol):
    """Which tenant a payment processor's customer or subscription belongs to."""

    def tenant_for(self, processor: Processor, ref: str) -> str | None: ...

    def link(self, processor: Processor, refs: Sequence[str], tenant_id: str) -> None: ...
