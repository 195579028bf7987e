"""Data access for tenants.

Every read is strongly consistent: a change another container made is read by the next request.
DynamoDB calls: authenticate = 1 Query (the tenant's partition: profile, provider credentials,
domains, named keys, members; 1 read unit up to 4 KB, a key or a member is about 250 bytes) and, for
a key this container has not seen, 1 GetItem (key hash); create = 1 transaction (profile, first key,
owner, audit entry) + 1 conditional PutItem (the email claim); profile = 1 GetItem; the tenant of an
email address = 1 GetItem; a profile change (operator, payment, quota reset) = 1 transaction (the
change and its audit entry) + 1 GetItem (the profile as changed) + 1 UpdateItem when the change moved
the tenant's next quota reset.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.access_items import (
    key_from,
    key_item,
    key_lookup_item,
    member_from,
    member_item,
    membership_item,
)
from herald.adapters.store.audit_items import AUDIT_ONCE, audit_item
from herald.adapters.store.breaker_items import tenant_breaker_from
from herald.adapters.store.conversions import domain_from, profile_from, profile_item, provider_from
from herald.adapters.store.models import (
    CLAIM_SK,
    KEY_SK,
    PROFILE_SK,
    RESETS_GSI_PK,
    TENANTS_GSI_PK,
    ApiKeyItem,
    BreakerItem,
    DomainItem,
    EmailClaimItem,
    HeraldItem,
    MemberItem,
    NamedKeyItem,
    ProviderItem,
    TenantItem,
    api_key_pk,
    email_claim_pk,
    reset_sort_key,
    tenant_id_of,
    tenant_pk,
    tenant_sort_key,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, transaction, translated
from herald.domain.access import ApiKey, Member
from herald.domain.account import ApiKeyRecord, TenantProfile, TenantRecords
from herald.domain.audit import AuditEntry
from herald.domain.clock import iso
from herald.domain.plans import reset_due
from herald.domain.signin import address_key
from herald.services.outcomes import ProfileChanged, TenantNotFound

# The fields the quota reset's due time derives from (``herald.domain.plans.reset_due``).
_RESET_FIELDS = {"plan", "paid_until", "period_end"}
# Profile fields an operator or a payment may change, by domain name.
_PROFILE_FIELDS: dict[str, Any] = {
    "plan": TenantItem.plan,
    "status": TenantItem.status,
    "rate_limit": TenantItem.rate_limit,
    "quota_limit": TenantItem.quota_limit,
    "period_anchor": TenantItem.period_anchor,
    "paid_until": TenantItem.paid_until,
    "period_end": TenantItem.period_end,
    "billing_status": TenantItem.billing_status,
    "subscription": TenantItem.subscription,
}


class DynamoTenantStore:
    def __init__(self, table: Table) -> None:
        self._table = table

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        with translated("tenant table read"):
            try:
                item: ApiKeyItem = self._table[ApiKeyItem].get(
                    api_key_pk(key_hash), KEY_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        if item.key_id is None:
            # A key stored before named keys, not migrated yet (``herald migrate keys``).
            return None
        return ApiKeyRecord(key_hash, item.tenant_id, item.key_id)

    def profile(self, tenant_id: str) -> TenantProfile:
        """Only the profile item (1 eventually consistent GetItem)."""
        with translated("tenant table read"):
            try:
                item: TenantItem = self._table[TenantItem].get(
                    tenant_pk(tenant_id), PROFILE_SK, consistent_read=True
                )
            except DoesNotExist as exc:
                raise TenantNotFound(tenant_id) from exc
        return profile_from(item)

    def load(self, tenant_id: str) -> TenantRecords:
        profile: TenantProfile | None = None
        providers = []
        domains = []
        breakers = []
        keys: list[ApiKey] = []
        members: list[Member] = []
        with translated("tenant table read"):
            for item in self._table.item.query(tenant_pk(tenant_id), consistent_read=True):
                if isinstance(item, TenantItem):
                    profile = profile_from(item)
                elif isinstance(item, ProviderItem):
                    providers.append(provider_from(item))
                elif isinstance(item, DomainItem):
                    domains.append(domain_from(item))
                elif isinstance(item, BreakerItem):
                    breakers.append(tenant_breaker_from(item, tenant_id))
                elif isinstance(item, NamedKeyItem):
                    keys.append(key_from(item))
                elif isinstance(item, MemberItem):
                    members.append(member_from(item))
        if profile is None:
            raise TenantNotFound(tenant_id)
        providers.sort(key=lambda credential: credential.priority)
        keys.sort(key=lambda key: key.created_at)
        members.sort(key=lambda member: member.created_at)
        return TenantRecords(
            profile, tuple(providers), tuple(domains), tuple(breakers), tuple(keys), tuple(members)
        )

    def create(self, profile: TenantProfile, key: ApiKey, owner: Member, audit: AuditEntry) -> None:
        """The profile, its first key, its owner and the entry that records them, in one transaction."""
        item = profile_item(self._table, profile)
        item.gsi1pk = TENANTS_GSI_PK
        item.gsi1sk = tenant_sort_key(profile.created_at, profile.tenant_id)
        item.gsi2pk = RESETS_GSI_PK
        item.gsi2sk = reset_sort_key(
            reset_due(profile.plan, profile.paid_until, profile.period_end, profile.created_at),
            profile.tenant_id,
        )
        tenant_id = profile.tenant_id
        lookup = key_lookup_item(self._table, tenant_id, key.key_id, key.key_hash, key.created_at)
        with transaction(self._table.connection, "tenant table write") as tx:
            tx.save(item, condition=TenantItem.pk.does_not_exist())
            tx.save(lookup, condition=ApiKeyItem.pk.does_not_exist())
            tx.save(key_item(self._table, tenant_id, key))
            tx.save(member_item(self._table, tenant_id, owner))
            tx.save(membership_item(self._table, tenant_id, profile.name, owner))
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
        self._claim_email(profile)

    def _claim_email(self, profile: TenantProfile) -> None:
        """The first tenant created with an address signs in to the console with it; an operator may
        create more tenants with the same address, reachable by their API keys."""
        claim = self._table[EmailClaimItem](
            email_claim_pk(address_key(profile.email)), CLAIM_SK, tenant_id=profile.tenant_id
        )
        try:
            with conditional("tenant table write"):
                claim.save(condition=EmailClaimItem.pk.does_not_exist())
        except ConditionFailed:
            return

    def tenant_for_email(self, address_key: str) -> str | None:
        with translated("tenant table read"):
            try:
                item: EmailClaimItem = self._table[EmailClaimItem].get(
                    email_claim_pk(address_key), CLAIM_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return item.tenant_id

    def tenant_ids(self) -> Iterator[str]:
        """Oldest first, from the index alone (entries of ~100 bytes: ~40 tenants per read unit)."""
        with translated("tenant index read"):
            keys = [item.pk for item in self._table.item.by_tenant.query(TENANTS_GSI_PK)]
        for pk in keys:
            yield tenant_id_of(pk)

    def due_for_reset(self, now: datetime) -> Iterator[TenantProfile]:
        """The tenants the quota reset has something to do for (gsi2 ``RESETS`` up to now: keys
        only, then one BatchGet per 100), whatever the number of tenants."""
        with translated("tenant index read"):
            keys = [
                (item.pk, item.sk)
                for item in self._table.item.ended.query(
                    RESETS_GSI_PK, range_key_condition=HeraldItem.gsi2sk <= f"{iso(now)}#~"
                )
            ]
        yield from self._profiles(keys)

    def all_profiles(self) -> Iterator[TenantProfile]:
        """Oldest first, from the index (its entries carry only keys: one BatchGet per 100)."""
        with translated("tenant index read"):
            keys = [(item.pk, item.sk) for item in self._table.item.by_tenant.query(TENANTS_GSI_PK)]
        yield from self._profiles(keys)

    def _profiles(self, keys: list[tuple[str, str]]) -> Iterator[TenantProfile]:
        for start in range(0, len(keys), 100):
            with translated("tenant table read"):
                found = {
                    item.pk: item for item in self._table[TenantItem].batch_get(keys[start : start + 100])
                }
            for pk, _ in keys[start : start + 100]:
                if pk in found:
                    yield profile_from(found[pk])

    def update_profile(self, tenant_id: str, audit: AuditEntry, **changes: object) -> TenantProfile:
        return self._update(tenant_id, changes, {}, audit)

    def update_profile_if(
        self,
        tenant_id: str,
        expected: Mapping[str, object],
        changes: Mapping[str, object],
        audit: AuditEntry,
    ) -> TenantProfile:
        return self._update(tenant_id, changes, expected, audit)

    def _update(
        self,
        tenant_id: str,
        changes: Mapping[str, object],
        expected: Mapping[str, object],
        audit: AuditEntry,
    ) -> TenantProfile:
        """The change and its entry in one transaction (which returns no item: the profile is read
        after it, strongly consistent)."""
        actions: list[Any] = [
            _PROFILE_FIELDS[name].remove() if value is None else _PROFILE_FIELDS[name].set(value)
            for name, value in changes.items()
        ]
        condition = TenantItem.pk.exists()
        for name, value in expected.items():
            field = _PROFILE_FIELDS[name]
            condition &= field.does_not_exist() if value is None else field == value

        def refine(codes: list[str | None]) -> Exception | None:
            # The profile's update comes after the entry's put in the transaction's order.
            if codes[-1:] != ["ConditionalCheckFailed"]:
                return None
            return ProfileChanged(tenant_id) if expected else TenantNotFound(tenant_id)

        with transaction(self._table.connection, "tenant table write", refine) as tx:
            tx.save(audit_item(self._table, audit), condition=AUDIT_ONCE)
            tx.update(
                self._table[TenantItem](tenant_pk(tenant_id), PROFILE_SK),
                actions=actions,
                condition=condition,
            )
        with translated("tenant table read"):
            item: TenantItem = self._table[TenantItem].get(
                tenant_pk(tenant_id), PROFILE_SK, consistent_read=True
            )
        profile = profile_from(item)
        if _RESET_FIELDS & changes.keys():
            self._move_reset_entry(item, profile)
        return profile

    def _move_reset_entry(self, item: TenantItem, profile: TenantProfile) -> None:
        """A second write, only when a period or payment change moved the tenant's next reset."""
        due = reset_sort_key(
            reset_due(profile.plan, profile.paid_until, profile.period_end, profile.created_at),
            profile.tenant_id,
        )
        if item.gsi2sk != due:
            with translated("tenant table write"):
                item.update(actions=[TenantItem.gsi2pk.set(RESETS_GSI_PK), TenantItem.gsi2sk.set(due)])
