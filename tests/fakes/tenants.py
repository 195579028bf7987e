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

from herald.domain.account import ACTIVE, ApiKeyRecord, TenantProfile, TenantRecords, hash_api_key
from herald.domain.addresses import Suppression, canonical_address
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.clock import iso, parse_iso
from herald.domain.errors import DependencyError
from herald.domain.plans import reset_due
from herald.domain.providers import ProviderDomain, SendingDomain, StoredProvider
from herald.domain.secrets import Purpose, SealedSecret
from herald.domain.signin import address_key
from herald.domain.vendors import ProviderName
from herald.services.outcomes import AlreadyExists, DomainTaken, KeyChanged, ProfileChanged, TenantNotFound
from herald.services.ports.platform import SecretBox
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
        self.email_claims: dict[str, str] = {}
        # Every breaker (tests.fakes.breakers keeps them here): a tenant's provider breakers are
        # read with its partition, as in the table.
        self.breakers: dict[BreakerKey, Breaker] = {}
        self.loads = 0
        self.key_reads = 0
        self.unavailable = False
        # Called before each conditional update: a test plays a concurrent writer here.
        self.before_update: Callable[[str], None] = lambda _tenant_id: None

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
        key_hash = hash_api_key(api_key) if api_key else "0" * 64
        self.profiles[tenant_id] = TenantProfile(
            tenant_id=tenant_id,
            name=tenant_id,
            email=f"ops@{tenant_id}.example",
            plan=plan,
            status=status,
            created_at=CREATED_AT,
            api_key_hash=key_hash,
            period_anchor=CREATED_AT,
            signing_secret=_seal(secrets, tenant_id, Purpose.SIGNING_SECRET, signing_secret),
        )
        if api_key:
            self.keys[key_hash] = ApiKeyRecord(key_hash, tenant_id, CREATED_AT)
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
            profile, tuple(providers), tuple(self.domains.get(tenant_id, {}).values()), breakers
        )

    def create(self, profile: TenantProfile) -> None:
        self._check()
        assert profile.tenant_id not in self.profiles
        self.profiles[profile.tenant_id] = profile
        self.keys[profile.api_key_hash] = ApiKeyRecord(
            profile.api_key_hash, profile.tenant_id, profile.created_at
        )
        self.email_claims.setdefault(address_key(profile.email), profile.tenant_id)

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
        self, tenant_id: str, expected: Mapping[str, object], changes: Mapping[str, object]
    ) -> TenantProfile:
        self.before_update(tenant_id)
        profile = self.profile(tenant_id)
        if any(getattr(profile, name) != value for name, value in expected.items()):
            raise ProfileChanged(tenant_id)
        return self.update_profile(tenant_id, **changes)

    def tenant_ids(self) -> Iterator[str]:
        yield from (profile.tenant_id for profile in self.all_profiles())

    def update_profile(self, tenant_id: str, **changes: object) -> TenantProfile:
        profile = self.profile(tenant_id)
        fields: dict[str, Any] = dict(changes)
        self.profiles[tenant_id] = replace(profile, **fields)
        return self.profiles[tenant_id]

    def rotate_api_key(
        self, tenant_id: str, old_hash: str, new_hash: str, created_at: str, old_valid_until: datetime | None
    ) -> None:
        profile = self.profile(tenant_id)
        if profile.api_key_hash != old_hash:
            raise KeyChanged(tenant_id)
        live = {key: until for key, until in profile.grace_keys.items() if until > created_at}
        self.keys[new_hash] = ApiKeyRecord(new_hash, tenant_id, created_at)
        if old_valid_until is None:
            for key_hash in {old_hash, *live}:
                self.keys.pop(key_hash, None)
            grace: dict[str, str] = {}
        else:
            until = iso(old_valid_until)
            self.keys[old_hash] = replace(self.keys[old_hash], valid_until=until)
            grace = {**live, old_hash: until}
        ended = created_at if old_valid_until is None else profile.sessions_valid_from
        self.profiles[tenant_id] = replace(
            profile, api_key_hash=new_hash, grace_keys=grace, sessions_valid_from=ended
        )

    # -------------------------------------------------- AccountStore

    def save_provider(self, tenant_id: str, provider: StoredProvider) -> None:
        self._check()
        self.providers.setdefault(tenant_id, {})[provider.provider] = provider

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider]
    ) -> None:
        self._check()
        stored = self.providers[tenant_id]
        if stored[removed.provider].priority != removed.priority:
            raise DependencyError("provider delete failed: TransactionCanceledException")
        del stored[removed.provider]
        for item in below:
            stored[item.provider] = replace(stored[item.provider], priority=item.priority - 1)

    def swap_priorities(
        self, tenant_id: str, moved: StoredProvider, new_priority: int, holder: StoredProvider | None
    ) -> None:
        self._check()
        stored = self.providers[tenant_id]
        stored[moved.provider] = replace(stored[moved.provider], priority=new_priority)
        if holder is not None:
            stored[holder.provider] = replace(stored[holder.provider], priority=moved.priority)

    def set_signing_secret(
        self,
        tenant_id: str,
        secret: SealedSecret,
        created_at: str,
        *,
        require_absent: bool,
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

    def delete_signing_secret(self, tenant_id: str) -> None:
        profile = self.profile(tenant_id)
        self.profiles[tenant_id] = replace(
            profile,
            signing_secret=None,
            signing_secret_created_at=None,
            previous_signing_secret=None,
            previous_valid_until=None,
        )

    def claim_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        self._check()
        owner = self.domain_claims.get(domain.domain)
        if owner not in (None, tenant_id):
            raise DomainTaken(domain.domain)
        self.domain_claims[domain.domain] = tenant_id
        self.domains.setdefault(tenant_id, {})[domain.domain] = domain

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None:
        self._check()
        return self.domains.get(tenant_id, {}).get(name)

    def save_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        self._check()
        self.domains.setdefault(tenant_id, {})[domain.domain] = domain

    def delete_domain(self, tenant_id: str, name: str) -> None:
        self._check()
        self.domains.get(tenant_id, {}).pop(name, None)
        if self.domain_claims.get(name) == tenant_id:
            del self.domain_claims[name]

    def _check(self) -> None:
        if self.unavailable:
            raise DependencyError("tenant table read failed: ServiceUnavailable")


class FakeSuppressions:
    def __init__(self) -> None:
        self.entries_by_tenant: dict[str, dict[str, Suppression]] = {}
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

    def delete(self, tenant_id: str, address: str) -> bool:
        self._called("delete")
        return self.entries_by_tenant.get(tenant_id, {}).pop(canonical_address(address), None) is not None

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
