"""Data access for tenants and their API keys.

DynamoDB calls: authenticate = 1 GetItem (key hash) + 1 Query (the tenant's partition: profile,
provider credentials, domains), both cached by herald.services.auth; create = 1 transaction; rotate = 1
transaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from pynamodb.exceptions import DoesNotExist, PynamoDBException, TransactWriteError
from pynamodb.transactions import TransactWrite

from herald.adapters.store.models import (
    ApiKeyRecord,
    HeraldItem,
    ProviderCredential,
    SendingDomain,
    TenantProfile,
    tenant_pk,
)
from herald.adapters.store.table import cancellation_codes, connection
from herald.domain.clock import epoch_seconds, iso
from herald.domain.errors import DependencyError

TENANTS_GSI_PK = "TENANTS"
# TTL removes a rotated-out key's record a day after its grace ends (auth checks validUntil itself).
GRACE_TTL_MARGIN = 24 * 3600


def api_key_pk(key_hash: str) -> str:
    return f"APIKEY#{key_hash}"


@dataclass
class TenantRecords:
    """Everything stored in a tenant's partition, read with one Query."""

    profile: TenantProfile
    providers: list[ProviderCredential] = field(default_factory=list)
    domains: list[SendingDomain] = field(default_factory=list)

    def verified_domains(self) -> list[str]:
        """Domains verified with at least one provider the tenant still has configured: the only
        ones mail may be sent from."""
        configured = {credential.provider for credential in self.providers}
        return sorted(
            domain.domain
            for domain in self.domains
            if any(entry.verified and entry.provider in configured for entry in domain.providers)
        )


class TenantNotFound(Exception):
    pass


class KeyChanged(Exception):
    """The tenant's current key changed under a concurrent rotation."""


class TenantStore:
    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        try:
            record: ApiKeyRecord = ApiKeyRecord.get(api_key_pk(key_hash), "KEY")
        except DoesNotExist:
            return None
        except PynamoDBException as exc:
            raise DependencyError(f"tenant table read failed: {exc.cause_response_code}") from exc
        return record

    def profile(self, tenant_id: str) -> TenantProfile:
        """Only the profile item (1 eventually consistent GetItem)."""
        try:
            profile: TenantProfile = TenantProfile.get(tenant_pk(tenant_id), "PROFILE")
        except DoesNotExist as exc:
            raise TenantNotFound(tenant_id) from exc
        except PynamoDBException as exc:
            raise DependencyError(f"tenant table read failed: {exc.cause_response_code}") from exc
        return profile

    def load(self, tenant_id: str) -> TenantRecords:
        profile: TenantProfile | None = None
        providers: list[ProviderCredential] = []
        domains: list[SendingDomain] = []
        try:
            for item in HeraldItem.query(tenant_pk(tenant_id)):
                if isinstance(item, TenantProfile):
                    profile = item
                elif isinstance(item, ProviderCredential):
                    providers.append(item)
                elif isinstance(item, SendingDomain):
                    domains.append(item)
        except PynamoDBException as exc:
            raise DependencyError(f"tenant table read failed: {exc.cause_response_code}") from exc
        if profile is None:
            raise TenantNotFound(tenant_id)
        providers.sort(key=lambda credential: int(credential.priority))
        return TenantRecords(profile, providers, domains)

    def create(self, profile: TenantProfile, key_hash: str) -> None:
        profile.gsi1pk = TENANTS_GSI_PK
        profile.gsi1sk = f"{profile.created_at}#{profile.tenant_id}"
        key = ApiKeyRecord(
            api_key_pk(key_hash), "KEY", tenant_id=profile.tenant_id, created_at=profile.created_at
        )
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.save(profile, condition=TenantProfile.pk.does_not_exist())
                tx.save(key, condition=ApiKeyRecord.pk.does_not_exist())
        except PynamoDBException as exc:
            raise DependencyError(f"tenant table write failed: {exc.cause_response_code}") from exc

    def all_profiles(self) -> Iterator[TenantProfile]:
        try:
            for item in HeraldItem.by_tenant.query(TENANTS_GSI_PK):
                if isinstance(item, TenantProfile):
                    yield item
        except PynamoDBException as exc:
            raise DependencyError(f"tenant index read failed: {exc.cause_response_code}") from exc

    def update_profile(self, tenant_id: str, **changes: str) -> TenantProfile:
        profile = TenantProfile(tenant_pk(tenant_id), "PROFILE")
        actions = [getattr(TenantProfile, name).set(value) for name, value in changes.items()]
        try:
            profile.update(actions=actions, condition=TenantProfile.pk.exists())
        except PynamoDBException as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                raise TenantNotFound(tenant_id) from exc
            raise DependencyError(f"tenant table write failed: {exc.cause_response_code}") from exc
        return profile

    def rotate_api_key(
        self, tenant_id: str, old_hash: str, new_hash: str, created_at: str, old_valid_until: datetime | None
    ) -> None:
        """New key in, profile points at it, old key revoked now or kept until ``old_valid_until``."""
        new_key = ApiKeyRecord(api_key_pk(new_hash), "KEY", tenant_id=tenant_id, created_at=created_at)
        old_key = ApiKeyRecord(api_key_pk(old_hash), "KEY")
        profile = TenantProfile(tenant_pk(tenant_id), "PROFILE")
        try:
            with TransactWrite(connection=connection()) as tx:
                tx.save(new_key, condition=ApiKeyRecord.pk.does_not_exist())
                tx.update(
                    profile,
                    actions=[TenantProfile.api_key_hash.set(new_hash)],
                    condition=TenantProfile.api_key_hash == old_hash,
                )
                if old_valid_until is None:
                    tx.delete(old_key)
                else:
                    tx.update(
                        old_key,
                        actions=[
                            ApiKeyRecord.valid_until.set(iso(old_valid_until)),
                            ApiKeyRecord.expires_at.set(epoch_seconds(old_valid_until) + GRACE_TTL_MARGIN),
                        ],
                    )
        except TransactWriteError as exc:
            codes = cancellation_codes(exc)
            # PynamoDB sends deletes, then puts, then updates: [old key delete?, new key, profile, ...].
            profile_index = 2 if old_valid_until is None else 1
            if len(codes) > profile_index and codes[profile_index] == "ConditionalCheckFailed":
                raise KeyChanged(tenant_id) from exc
            raise DependencyError(f"tenant table write failed: {exc.cause_response_code}") from exc
        except PynamoDBException as exc:
            raise DependencyError(f"tenant table write failed: {exc.cause_response_code}") from exc
