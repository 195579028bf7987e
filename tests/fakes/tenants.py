"""An in-memory tenant table with DynamoDB's conditions: the ``TenantStore`` and ``AccountStore``
over the same tenant partitions, and the ``Suppressions`` list.

``unavailable`` makes every call raise ``DependencyError`` as the adapters do when DynamoDB cannot
be reached; ``loads`` counts partition reads (what the services' caches should spare).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from msgspec.structs import replace

from herald.domain.access import ApiKey, Member, MemberStatus, Role, Scope
from herald.domain.account import ACTIVE, ApiKeyRecord, TenantProfile, TenantRecords, hash_api_key
from herald.domain.addresses import Suppression, canonical_address
from herald.domain.audit import AuditEntry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.clock import iso, parse_iso
from herald.domain.errors import DependencyError
from herald.domain.members import Membership
from herald.domain.plans import reset_due
from herald.domain.providers import ProviderDomain, SendingDomain, StoredProvider
from herald.domain.secrets import Purpose, SealedSecret
from herald.domain.signin import address_key
from herald.domain.signin import address_key as _key_of
from herald.domain.unsubscribes import ALL_TOPICS, Unsubscribe, UnsubscribePage
from herald.domain.vendors import ProviderName
from herald.services.outcomes import (
    AlreadyExists,
    DomainTaken,
    KeyChanged,
    MemberChanged,
    ProfileChanged,
    TenantNotFound,
)
from herald.services.ports.platform import SecretBox
from herald.services.unsubscribes import UnsubscribeGate, UnsubscribeLinks
from tests.fakes.common import CREATED_AT


class FakeTenantTable:
    def __init__(self) -> None:
        self.profiles: dict[str, TenantProfile] = {}
        # What the last quota-reset run read.
        self.reset_reads: list[TenantProfile] = []
        self.providers: dict[str, dict[str, StoredProvider]] = {}
        self.domains: dict[str, dict[str, SendingDomain]] = {}
        self.domain_claims: dict[str, str] = {}
        self.keys: dict[str, ApiKeyRecord] = {}
        # Named keys and members by tenant, then id; the audit log, oldest first.
        self.named: dict[str, dict[str, ApiKey]] = {}
        self.members: dict[str, dict[str, Member]] = {}
        self.audit: list[AuditEntry] = []
        self.touches = 0
        # A key's last use cannot be written (throttled), while everything else works.
        self.unwritable_touch = False
        self.email_claims: dict[str, str] = {}
        # Every breaker (tests.fakes.breakers keeps them here): a tenant's provider breakers are
        # read with its partition, as in the table.
        self.breakers: dict[BreakerKey, Breaker] = {}
        self.loads = 0
        self.key_reads = 0
        self.unavailable = False
        # Called before each conditional update: a test plays a concurrent writer here.
        self.before_update: Callable[[str], None] = lambda _tenant_id: None
        # Called before each member transaction's conditions are checked (a concurrent writer).
        self.before_member_write: Callable[[str], None] = lambda _tenant_id: None
        self.membership_reads = 0

    # -------------------------------------------------- test set-up

    def add_tenant(
        self,
        tenant_id: str,
        plan: str = "startup",
        *,
        api_key: str | None = None,
        status: str = ACTIVE,
        secrets: SecretBox | None = None,
        provider_keys: Sequence[tuple[ProviderName, str]] = (),
        signing_secret: str | None = None,
        verified_domains: Sequence[str] = (),
    ) -> None:
        """A tenant with ``provider_keys`` in priority order, sealed with ``secrets``."""
        self.profiles[tenant_id] = TenantProfile(
            tenant_id=tenant_id,
            name=tenant_id,
            email=f"ops@{tenant_id}.example",
            plan=plan,
            status=status,
            created_at=CREATED_AT,
            period_anchor=CREATED_AT,
            signing_secret=_seal(secrets, tenant_id, Purpose.SIGNING_SECRET, signing_secret),
        )
        owner = Member(
            f"mem_{tenant_id}",
            f"ops@{tenant_id}.example",
            Role.OWNER,
            MemberStatus.ACTIVE,
            CREATED_AT,
            "test",
        )
        self.members[tenant_id] = {owner.member_id: owner}
        self.named[tenant_id] = {}
        if api_key:
            key_hash = hash_api_key(api_key)
            key = ApiKey(
                f"key_{tenant_id}", "Default key", (Scope.FULL,), key_hash, api_key[-4:], CREATED_AT, "test"
            )
            self.named[tenant_id][key.key_id] = key
            self.keys[key_hash] = ApiKeyRecord(key_hash, tenant_id, key.key_id)
        self.providers[tenant_id] = {
            name.value: StoredProvider(
                provider=name.value,
                priority=index + 1,
                api_key=_required(_seal(secrets, tenant_id, Purpose.PROVIDER_KEY, key)),
                last_four=key[-4:],
                added_at=CREATED_AT,
            )
            for index, (name, key) in enumerate(provider_keys)
        }
        self.domains[tenant_id] = {
            domain: SendingDomain(domain, CREATED_AT, (ProviderDomain("SENDGRID", "d-1", verified=True),))
            for domain in verified_domains
        }

    # -------------------------------------------------- TenantStore

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        self._check()
        self.key_reads += 1
        return self.keys.get(key_hash)

    def profile(self, tenant_id: str) -> TenantProfile:
        self._check()
        if tenant_id not in self.profiles:
            raise TenantNotFound(tenant_id)
        return self.profiles[tenant_id]

    def load(self, tenant_id: str) -> TenantRecords:
        self._check()
        self.loads += 1
        profile = self.profile(tenant_id)
        providers = sorted(self.providers.get(tenant_id, {}).values(), key=lambda item: item.priority)
        breakers = tuple(
            breaker
            for key, breaker in self.breakers.items()
            if key.kind is BreakerKind.PROVIDER and key.tenant_id == tenant_id
        )
        return TenantRecords(
            profile,
            tuple(providers),
            tuple(self.domains.get(tenant_id, {}).values()),
            breakers,
            tuple(sorted(self.named.get(tenant_id, {}).values(), key=lambda key: key.created_at)),
            tuple(sorted(self.members.get(tenant_id, {}).values(), key=lambda member: member.created_at)),
        )

    def create(self, profile: TenantProfile, key: ApiKey, owner: Member, audit: AuditEntry) -> None:
        self._check()
        assert profile.tenant_id not in self.profiles
        self.profiles[profile.tenant_id] = profile
        self.named[profile.tenant_id] = {key.key_id: key}
        self.members[profile.tenant_id] = {owner.member_id: owner}
        self.keys[key.key_hash] = ApiKeyRecord(key.key_hash, profile.tenant_id, key.key_id)
        self.email_claims.setdefault(address_key(profile.email), profile.tenant_id)
        self.audit.append(audit)

    def tenant_for_email(self, address_key: str) -> str | None:
        self._check()
        return self.email_claims.get(address_key)

    def due_for_reset(self, now: datetime) -> Iterator[TenantProfile]:
        self.reset_reads = [
            profile
            for profile in self.all_profiles()
            if parse_iso(reset_due(profile.plan, profile.paid_until, profile.period_end, profile.created_at))
            <= now
        ]
        yield from self.reset_reads

    def all_profiles(self) -> Iterator[TenantProfile]:
        self._check()
        yield from sorted(self.profiles.values(), key=lambda profile: (profile.created_at, profile.tenant_id))

    def update_profile_if(
        self,
        tenant_id: str,
        expected: Mapping[str, object],
        changes: Mapping[str, object],
        audit: AuditEntry,
    ) -> TenantProfile:
        self.before_update(tenant_id)
        profile = self.profile(tenant_id)
        if any(getattr(profile, name) != value for name, value in expected.items()):
            raise ProfileChanged(tenant_id)
        return self.update_profile(tenant_id, audit, **changes)

    def tenant_ids(self) -> Iterator[str]:
        yield from (profile.tenant_id for profile in self.all_profiles())

    def update_profile(
        self, tenant_id: str, audit: AuditEntry | None = None, **changes: object
    ) -> TenantProfile:
        """``audit`` may be left out by a test's set-up (the services always pass one)."""
        profile = self.profile(tenant_id)
        fields: dict[str, Any] = dict(changes)
        self.profiles[tenant_id] = replace(profile, **fields)
        self._audited(audit)
        return self.profiles[tenant_id]

    # -------------------------------------------------- KeyStore

    def add(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None:
        self._check()
        self.profile(tenant_id)
        assert key.key_hash not in self.keys
        self.named.setdefault(tenant_id, {})[key.key_id] = key
        self.keys[key.key_hash] = ApiKeyRecord(key.key_hash, tenant_id, key.key_id)
        self.audit.append(audit)

    def revoke(self, tenant_id: str, key: ApiKey, audit: AuditEntry) -> None:
        self._check()
        stored = self.named.get(tenant_id, {}).get(key.key_id)
        if stored is None or stored.key_hash != key.key_hash:
            raise KeyChanged(tenant_id)
        del self.named[tenant_id][key.key_id]
        for key_hash in {key.key_hash, *key.previous}:
            self.keys.pop(key_hash, None)
        self.audit.append(audit)

    def rotate(
        self, tenant_id: str, old: ApiKey, new: ApiKey, audit: AuditEntry, sessions_end_at: str | None = None
    ) -> None:
        self._check()
        stored = self.named.get(tenant_id, {}).get(old.key_id)
        if stored is None or stored.key_hash != old.key_hash:
            raise KeyChanged(tenant_id)
        self.named[tenant_id][old.key_id] = new
        for key_hash in {old.key_hash, *old.previous} - {new.key_hash, *new.previous}:
            self.keys.pop(key_hash, None)
        self.keys[new.key_hash] = ApiKeyRecord(new.key_hash, tenant_id, new.key_id)
        if sessions_end_at is not None:
            self.profiles[tenant_id] = replace(self.profiles[tenant_id], sessions_valid_from=sessions_end_at)
        self.audit.append(audit)

    def touch(self, tenant_id: str, key_id: str, now: datetime) -> bool:
        self._check()
        if self.unwritable_touch:
            raise DependencyError("key last-use write failed: ThrottlingException")
        key = self.named.get(tenant_id, {}).get(key_id)
        if key is None:
            return False
        self.touches += 1
        self.named[tenant_id][key_id] = replace(key, last_used_at=iso(now))
        return True

    # -------------------------------------------------- MemberStore

    def invite(
        self, tenant_id: str, tenant_name: str, member: Member, audit: AuditEntry, lapsed: Member | None
    ) -> None:
        self._check()
        self.before_member_write(tenant_id)
        members = self.members.setdefault(tenant_id, {})
        holder = next((item for item in members.values() if item.email == member.email), None)
        if holder is not None and (lapsed is None or holder.member_id != lapsed.member_id):
            raise MemberChanged
        if lapsed is not None:
            del members[lapsed.member_id]
        members[member.member_id] = member
        self.audit.append(audit)

    def change_role(
        self, tenant_id: str, member: Member, changed: Member, audit: AuditEntry, keeper: Member | None
    ) -> None:
        self._member_as_read(tenant_id, member, keeper)
        stored = self.members[tenant_id][member.member_id]
        self.members[tenant_id][member.member_id] = replace(
            stored, role=changed.role, sessions_valid_from=changed.sessions_valid_from
        )
        self.audit.append(audit)

    def remove(self, tenant_id: str, member: Member, audit: AuditEntry, keeper: Member | None) -> None:
        self._member_as_read(tenant_id, member, keeper)
        del self.members[tenant_id][member.member_id]
        self.audit.append(audit)

    def join(self, tenant_id: str, member: Member, audit: AuditEntry) -> None:
        self._check()
        stored = self.members.get(tenant_id, {}).get(member.member_id)
        if stored is None or stored.status is not MemberStatus.INVITED:
            raise MemberChanged
        self.members[tenant_id][member.member_id] = replace(
            stored, status=MemberStatus.ACTIVE, joined_at=member.joined_at
        )
        self.audit.append(audit)

    def memberships(self, address_key: str) -> list[Membership]:
        """Derived from the members (the table keeps a copy per person; here it cannot drift)."""
        self._check()
        self.membership_reads += 1
        return [
            Membership(
                tenant_id,
                member.member_id,
                self.profiles[tenant_id].name,
                member.role,
                member.status,
                member.created_at,
                member.joined_at,
            )  # fmt: skip
            for tenant_id, members in self.members.items()
            for member in members.values()
            if tenant_id in self.profiles and _key_of(member.email) == address_key
        ]

    def _member_as_read(self, tenant_id: str, member: Member, keeper: Member | None) -> None:
        """The conditions of the table's member transactions: the member's role and status as read,
        and the owner that stays still an active owner."""
        self._check()
        self.before_member_write(tenant_id)
        members = self.members.get(tenant_id, {})
        stored = members.get(member.member_id)
        if stored is None or (stored.role, stored.status) != (member.role, member.status):
            raise MemberChanged
        if keeper is not None:
            kept = members.get(keeper.member_id)
            if kept is None or (kept.role, kept.status) != (Role.OWNER, MemberStatus.ACTIVE):
                raise MemberChanged

    # -------------------------------------------------- AccountStore

    def save_provider(
        self, tenant_id: str, provider: StoredProvider, audit: AuditEntry | None = None
    ) -> None:
        """``audit`` may be left out by a test's set-up (the service always passes one)."""
        self._check()
        self.providers.setdefault(tenant_id, {})[provider.provider] = provider
        self._audited(audit)

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider], audit: AuditEntry
    ) -> None:
        self._check()
        stored = self.providers[tenant_id]
        if stored[removed.provider].priority != removed.priority:
            raise DependencyError("provider delete failed: TransactionCanceledException")
        del stored[removed.provider]
        for item in below:
            stored[item.provider] = replace(stored[item.provider], priority=item.priority - 1)
        self._audited(audit)

    def swap_priorities(
        self,
        tenant_id: str,
        moved: StoredProvider,
        new_priority: int,
        holder: StoredProvider | None,
        audit: AuditEntry,
    ) -> None:
        self._check()
        stored = self.providers[tenant_id]
        stored[moved.provider] = replace(stored[moved.provider], priority=new_priority)
        if holder is not None:
            stored[holder.provider] = replace(stored[holder.provider], priority=moved.priority)
        self._audited(audit)

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
        profile = self.profile(tenant_id)
        if require_absent and profile.signing_secret is not None:
            raise AlreadyExists(tenant_id)
        changes: dict[str, Any] = {"signing_secret": secret, "signing_secret_created_at": created_at}
        if previous is not None:
            changes |= {"previous_signing_secret": previous, "previous_valid_until": previous_valid_until}
        self.profiles[tenant_id] = replace(profile, **changes)
        self._audited(audit)

    def delete_signing_secret(self, tenant_id: str, audit: AuditEntry) -> None:
        profile = self.profile(tenant_id)
        self.profiles[tenant_id] = replace(
            profile,
            signing_secret=None,
            signing_secret_created_at=None,
            previous_signing_secret=None,
            previous_valid_until=None,
        )
        self._audited(audit)

    def claim_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None:
        self._check()
        owner = self.domain_claims.get(domain.domain)
        if owner not in (None, tenant_id):
            raise DomainTaken(domain.domain)
        self.domain_claims[domain.domain] = tenant_id
        self.domains.setdefault(tenant_id, {})[domain.domain] = domain
        self._audited(audit)

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None:
        self._check()
        return self.domains.get(tenant_id, {}).get(name)

    def record_registrations(self, tenant_id: str, domain: SendingDomain) -> None:
        self._check()
        assert domain.domain in self.domains.get(tenant_id, {})
        self.domains[tenant_id][domain.domain] = domain

    def save_domain(self, tenant_id: str, domain: SendingDomain, audit: AuditEntry) -> None:
        self._check()
        self.domains.setdefault(tenant_id, {})[domain.domain] = domain
        self._audited(audit)

    def delete_domain(self, tenant_id: str, name: str, audit: AuditEntry) -> None:
        self._check()
        self.domains.get(tenant_id, {}).pop(name, None)
        if self.domain_claims.get(name) == tenant_id:
            del self.domain_claims[name]
        self._audited(audit)

    def _audited(self, audit: AuditEntry | None) -> None:
        """The change's entry, as the table writes it in the change's transaction (once per id)."""
        if audit is None:
            return
        assert all(known.entry_id != audit.entry_id for known in self.audit), "an entry id twice"
        self.audit.append(audit)

    def _check(self) -> None:
        if self.unavailable:
            raise DependencyError("tenant table read failed: ServiceUnavailable")


class FakeSuppressions:
    def __init__(self, audit: list[AuditEntry] | None = None) -> None:
        self.entries_by_tenant: dict[str, dict[str, Suppression]] = {}
        # Where a removal's entry goes (give the tenant table's ``audit`` to read it with the log).
        self.audit: list[AuditEntry] = [] if audit is None else audit
        self.unavailable: set[str] = set()
        self.calls: list[str] = []

    def is_suppressed(self, tenant_id: str, address: str) -> bool:
        self._called("is_suppressed")
        return canonical_address(address) in self.entries_by_tenant.get(tenant_id, {})

    def suppress(self, tenant_id: str, suppression: Suppression) -> None:
        self._called("suppress")
        self.entries_by_tenant.setdefault(tenant_id, {})[canonical_address(suppression.address)] = suppression

    def entries(self, tenant_id: str) -> Iterator[Suppression]:
        self._called("entries")
        yield from self.entries_by_tenant.get(tenant_id, {}).values()

    def delete(self, tenant_id: str, address: str, audit: AuditEntry) -> bool:
        self._called("delete")
        removed = self.entries_by_tenant.get(tenant_id, {}).pop(canonical_address(address), None) is not None
        if removed:
            self.audit.append(audit)
        return removed

    def _called(self, method: str) -> None:
        self.calls.append(method)
        if method in self.unavailable:
            raise DependencyError(f"suppression table unavailable in {method}")


def _seal(
    secrets: SecretBox | None, tenant_id: str, purpose: Purpose, plaintext: str | None
) -> SealedSecret | None:
    if plaintext is None:
        return None
    assert secrets is not None, "sealing needs a SecretBox"
    return secrets.seal(tenant_id, purpose, plaintext)


def _required(sealed: SealedSecret | None) -> SealedSecret:
    assert sealed is not None
    return sealed


class FakeUnsubscribes:
    """The unsubscribe store in memory, keyed as the table keys it (topic, canonical address)."""

    def __init__(self) -> None:
        self.entries_by_tenant: dict[str, dict[tuple[str, str], Unsubscribe]] = {}
        self.audit: list[AuditEntry] = []
        self.calls: list[str] = []

    def blocking(self, tenant_id: str, address: str, topic: str) -> Unsubscribe | None:
        self.calls.append("blocking")
        entries, canonical = self.entries_by_tenant.get(tenant_id, {}), canonical_address(address)
        return entries.get((topic, canonical)) or entries.get((ALL_TOPICS, canonical))

    def record(self, tenant_id: str, unsubscribe: Unsubscribe) -> bool:
        self.calls.append("record")
        key = (unsubscribe.topic, canonical_address(unsubscribe.address))
        entries = self.entries_by_tenant.setdefault(tenant_id, {})
        if key in entries:
            return False
        entries[key] = replace(unsubscribe, address=key[1])
        return True

    def remove(self, tenant_id: str, address: str, topic: str, audit: AuditEntry | None = None) -> bool:
        self.calls.append("remove")
        gone = self.entries_by_tenant.get(tenant_id, {}).pop((topic, canonical_address(address)), None)
        if gone is not None and audit is not None:
            self.audit.append(audit)
        return gone is not None

    def page(
        self, tenant_id: str, *, topic: str | None, address: str | None, limit: int, cursor: str | None
    ) -> UnsubscribePage:
        self.calls.append("page")
        canonical = canonical_address(address) if address else None
        items = [
            entry
            for (entry_topic, entry_address), entry in sorted(
                self.entries_by_tenant.get(tenant_id, {}).items()
            )
            if topic in (None, entry_topic) and canonical in (None, entry_address)
        ]
        start = int(cursor) if cursor else 0
        more = len(items) > start + limit
        return UnsubscribePage(tuple(items[start : start + limit]), str(start + limit) if more else None)


UNSUBSCRIBE_KEY = "test-only-unsubscribe-signing-key"  # noqa: S105 (a test key)
UNSUBSCRIBE_ORIGIN = "https://herald.test"


def unsubscribe_gate(unsubscribes: FakeUnsubscribes | None = None) -> UnsubscribeGate:
    """The email worker's unsubscribe check over ``unsubscribes``, signing with the test key."""
    links = UnsubscribeLinks(lambda: UNSUBSCRIBE_KEY, UNSUBSCRIBE_ORIGIN)
    return UnsubscribeGate(unsubscribes or FakeUnsubscribes(), links)
