"""Items to domain values and back, for the tenant side of the table (profiles, credentials,
domains) and the sealed secrets they hold. The job side converts in ``job_items``."""

from __future__ import annotations

from herald.adapters.documents import sealed_record, sealed_secret
from herald.adapters.store.models import (
    DnsRecordAttribute,
    DomainItem,
    ProviderDomainAttribute,
    ProviderItem,
    SealedAttribute,
    TenantItem,
    domain_sk,
    provider_sk,
    tenant_pk,
)
from herald.adapters.store.table import Table
from herald.domain.account import TenantProfile
from herald.domain.providers import DnsRecord, ProviderDomain, SendingDomain, StoredProvider
from herald.domain.secrets import SealedSecret


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def profile_from(item: TenantItem) -> TenantProfile:
    return TenantProfile(
        tenant_id=item.tenant_id,
        name=item.name,
        email=item.email,
        plan=item.plan,
        status=item.status,
        created_at=item.created_at,
        api_key_hash=item.api_key_hash,
        # Tenants created before billing periods: their sign-up is the anchor.
        period_anchor=item.period_anchor or item.created_at,
        signing_secret=optional_from(item.signing_secret),
        signing_secret_created_at=item.signing_secret_created_at,
        previous_signing_secret=optional_from(item.previous_signing_secret),
        previous_valid_until=item.previous_valid_until,
        rate_limit=_int_or_none(item.rate_limit),
        quota_limit=_int_or_none(item.quota_limit),
        paid_until=item.paid_until,
        period_end=item.period_end,
        billing_status=item.billing_status,
        subscription=item.subscription,
        grace_keys={
            str(key): str(value)
            for key, value in (item.grace_keys.as_dict() if item.grace_keys else {}).items()
        },
        sessions_valid_from=item.sessions_valid_from,
    )


def profile_item(table: Table, profile: TenantProfile) -> TenantItem:
    return table[TenantItem](
        tenant_pk(profile.tenant_id),
        "PROFILE",
        tenant_id=profile.tenant_id,
        name=profile.name,
        email=profile.email,
        plan=profile.plan,
        status=profile.status,
        created_at=profile.created_at,
        api_key_hash=profile.api_key_hash,
        period_anchor=profile.period_anchor,
        signing_secret=optional_to(profile.signing_secret),
        signing_secret_created_at=profile.signing_secret_created_at,
        previous_signing_secret=optional_to(profile.previous_signing_secret),
        previous_valid_until=profile.previous_valid_until,
        rate_limit=profile.rate_limit,
        quota_limit=profile.quota_limit,
        paid_until=profile.paid_until,
        period_end=profile.period_end,
        billing_status=profile.billing_status,
        subscription=profile.subscription,
    )


def provider_from(item: ProviderItem) -> StoredProvider:
    return StoredProvider(
        provider=item.provider,
        priority=int(item.priority),
        api_key=from_attribute(item.api_key),
        last_four=item.last_four,
        added_at=item.added_at,
        account_token=optional_from(item.account_token),
        webhook_secret=optional_from(item.webhook_secret),
    )


def provider_item(table: Table, tenant_id: str, provider: StoredProvider) -> ProviderItem:
    return table[ProviderItem](
        tenant_pk(tenant_id),
        provider_sk(provider.provider),
        provider=provider.provider,
        priority=provider.priority,
        api_key=to_attribute(provider.api_key),
        last_four=provider.last_four,
        added_at=provider.added_at,
        account_token=optional_to(provider.account_token),
        webhook_secret=optional_to(provider.webhook_secret),
    )


def domain_from(item: DomainItem) -> SendingDomain:
    return SendingDomain(
        domain=item.domain,
        created_at=item.created_at,
        providers=tuple(
            ProviderDomain(
                provider=entry.provider,
                provider_domain_id=entry.provider_domain_id,
                verified=bool(entry.verified),
                records=tuple(
                    DnsRecord(
                        type=record.type,
                        host=record.host,
                        value=record.value,
                        purpose=record.purpose or "",
                        priority=_int_or_none(record.priority),
                        status=record.status,
                    )
                    for record in entry.records or []
                ),
                error=entry.error,
            )
            for entry in item.providers or []
        ),
    )


def domain_item(table: Table, tenant_id: str, domain: SendingDomain) -> DomainItem:
    return table[DomainItem](
        tenant_pk(tenant_id),
        domain_sk(domain.domain),
        domain=domain.domain,
        created_at=domain.created_at,
        providers=[
            ProviderDomainAttribute(
                provider=entry.provider,
                provider_domain_id=entry.provider_domain_id,
                verified=entry.verified,
                error=entry.error,
                records=[
                    DnsRecordAttribute(
                        type=r.type,
                        host=r.host,
                        value=r.value,
                        purpose=r.purpose,
                        priority=r.priority,
                        status=r.status,
                    )
                    for r in entry.records
                ],
            )
            for entry in domain.providers
        ],
    )


# Sealed secrets as stored attributes: the bridge between ``SealedSecret`` values and the items.


def to_attribute(sealed: SealedSecret) -> SealedAttribute:
    record = sealed_record(sealed)
    return SealedAttribute(
        version=record["version"],
        wrapped_key=record["wrappedKey"],
        nonce=record["nonce"],
        ciphertext=record["ciphertext"],
    )


def from_attribute(sealed: SealedAttribute) -> SealedSecret:
    return sealed_secret(sealed.version, sealed.wrapped_key, sealed.nonce, sealed.ciphertext)


def optional_from(sealed: SealedAttribute | None) -> SealedSecret | None:
    return None if sealed is None else from_attribute(sealed)


def optional_to(sealed: SealedSecret | None) -> SealedAttribute | None:
    return None if sealed is None else to_attribute(sealed)
