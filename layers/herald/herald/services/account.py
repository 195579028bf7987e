"""The account routes' logic: a tenant manages its plan view, API key, provider keys, signing
secret, sending domains and suppression list with its own API key (api.md, "Account routes").

Secrets come in once, are checked live where the provider allows it, sealed by the vault and
never shown again except as their last four characters.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from herald.adapters.providers.registry import domain_provider_for
from herald.adapters.store.account_store import (
    AccountStore,
    AlreadyExists,
    DomainTaken,
    domain_sk,
    provider_sk,
)
from herald.adapters.store.models import (
    DnsRecordAttribute,
    ProviderCredential,
    ProviderDomainAttribute,
    SendingDomain,
    tenant_pk,
)
from herald.adapters.store.sealed import provider_credential, seal_attribute
from herald.adapters.store.tenant_store import TenantRecords, TenantStore
from herald.adapters.vault import Purpose, SecretTampered, Vault, last_four
from herald.domain.clock import iso, utc_now
from herald.domain.errors import HeraldError, bad_request, conflict, forbidden, not_found
from herald.domain.plans import limits_for, period_end, usage_period
from herald.domain.providers import Credential, DomainProvider, ProviderFailure, ProviderName
from herald.domain.signing import new_signing_secret
from herald.observability import logger
from herald.services.auth import TenantContext
from herald.services.tenants import IssuedKey, rotate_api_key

SIGNING_OVERLAP = timedelta(hours=24)
_DOMAIN = r"^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"


class ProviderKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    apiKey: str = Field(min_length=1, max_length=512)  # noqa: N815 (api.md's field names)
    accountToken: str | None = Field(default=None, min_length=1, max_length=512)  # noqa: N815
    webhookSecret: str | None = Field(default=None, min_length=1, max_length=1024)  # noqa: N815


class PriorityRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    priority: StrictInt = Field(ge=1, le=3)


class RotateKeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    graceSeconds: StrictInt = Field(default=0, ge=0, le=604_800)  # noqa: N815


class DomainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    domain: str = Field(
        min_length=4,
        max_length=253,
        pattern=_DOMAIN,
        description="A sending domain such as mail.example.com (lower case)",
    )


def _tenant_provider(name: str) -> ProviderName:
    try:
        provider = ProviderName(name.upper())
    except ValueError as exc:
        raise not_found(
            f"Unknown provider {name}; use SENDGRID, RESEND or POSTMARK.", "unknown_provider"
        ) from exc
    if provider is ProviderName.SES:
        raise bad_request(
            "Amazon SES is the platform's own provider; tenants do not bring SES keys.", "unknown_provider"
        )
    return provider


class AccountService:
    def __init__(
        self,
        tenants: TenantStore,
        store: AccountStore,
        vault: Vault,
        providers: Callable[[ProviderName], DomainProvider] = domain_provider_for,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._tenants = tenants
        self._store = store
        self._vault = vault
        self._providers = providers
        self._clock = clock

    # ------------------------------------------------------------ plan and key

    def overview(self, tenant: TenantContext) -> dict[str, Any]:
        profile = self._tenants.load(tenant.tenant_id).profile
        limits = limits_for(profile.plan)
        now = self._clock()
        usage = self._store.usage(tenant.tenant_id, usage_period(now))
        return {
            "tenantId": profile.tenant_id,
            "name": profile.name,
            "email": profile.email,
            "plan": profile.plan,
            "status": profile.status,
            "rateLimit": {"requestsPerMinute": limits.requests_per_minute},
            "limits": {
                "monthlyEmails": limits.shared_quota or limits.monthly_emails,
                "monthlyWebhooks": limits.shared_quota or limits.monthly_webhooks,
                "sharedQuota": limits.shared_quota is not None,
            },
            "usage": {
                "period": usage_period(now),
                "emails": int(usage.emails) if usage else 0,
                "webhooks": int(usage.webhooks) if usage else 0,
            },
            "periodEnd": iso(period_end(now)),
        }

    def rotate_key(self, tenant: TenantContext, request: RotateKeyRequest) -> dict[str, Any]:
        issued: IssuedKey = rotate_api_key(
            self._tenants, tenant.tenant_id, tenant.key_hash, request.graceSeconds
        )
        until = iso(self._clock() + timedelta(seconds=request.graceSeconds)) if request.graceSeconds else None
        return {"apiKey": issued.api_key, "previousKeyValidUntil": until}

    # ------------------------------------------------------------ providers

    def _paid(self, tenant: TenantContext) -> None:
        if not limits_for(tenant.plan).own_providers:
            raise forbidden("Bringing your own provider keys needs a paid plan.", "plan_required")

    def providers(self, tenant: TenantContext, api_base: str) -> list[dict[str, Any]]:
        records = self._tenants.load(tenant.tenant_id)
        return [self._provider_view(item, tenant.tenant_id, api_base) for item in records.providers]

    @staticmethod
    def _provider_view(item: ProviderCredential, tenant_id: str, api_base: str) -> dict[str, Any]:
        return {
            "provider": item.provider,
            "priority": int(item.priority),
            "lastFour": item.last_four,
            "addedAt": item.added_at,
            "hasWebhookSecret": item.webhook_secret is not None,
            "hasAccountToken": item.account_token is not None,
            "webhookUrl": f"{api_base}/webhooks/{item.provider.lower()}/{tenant_id}",
        }

    def put_provider(
        self, tenant: TenantContext, name: str, request: ProviderKeyRequest, api_base: str
    ) -> tuple[bool, dict[str, Any]]:
        """Check the key live, then store it sealed; (created?, masked view)."""
        self._paid(tenant)
        provider = _tenant_provider(name)
        self._check_key(provider, Credential(request.apiKey, request.accountToken))
        records = self._tenants.load(tenant.tenant_id)
        existing = next((item for item in records.providers if item.provider == provider.value), None)
        priority = int(existing.priority) if existing else len(records.providers) + 1
        credential = ProviderCredential(
            tenant_pk(tenant.tenant_id),
            provider_sk(provider.value),
            provider=provider.value,
            priority=priority,
            api_key=seal_attribute(self._vault, tenant.tenant_id, Purpose.PROVIDER_KEY, request.apiKey),
            last_four=last_four(request.apiKey),
            account_token=seal_attribute(
                self._vault, tenant.tenant_id, Purpose.PROVIDER_KEY, request.accountToken
            )
            if request.accountToken
            else None,
            webhook_secret=seal_attribute(
                self._vault, tenant.tenant_id, Purpose.INBOUND_SECRET, request.webhookSecret
            )
            if request.webhookSecret
            else None,
            added_at=existing.added_at if existing else iso(self._clock()),
        )
        self._store.save_provider(credential)
        return existing is None, self._provider_view(credential, tenant.tenant_id, api_base)

    def _check_key(self, provider: ProviderName, credential: Credential) -> None:
        try:
            check = self._providers(provider).check_key(credential)
        except ProviderFailure as exc:
            logger.warning(
                "provider key check failed", extra={"provider": provider.value, "reason": exc.reason}
            )
            raise HeraldError(
                f"{provider.value} could not check the key right now ({exc.reason}); try again.",
                "provider_unavailable",
                502,
            ) from exc
        if not check.valid:
            raise bad_request(
                f"{provider.value} did not accept the key: {check.reason}", "provider_key_invalid"
            )

    def set_priority(
        self, tenant: TenantContext, name: str, request: PriorityRequest, api_base: str
    ) -> list[dict[str, Any]]:
        self._paid(tenant)
        provider = _tenant_provider(name)
        records = self._tenants.load(tenant.tenant_id)
        moved = self._find_provider(records, provider)
        if request.priority > len(records.providers):
            raise bad_request(f"priority must be between 1 and {len(records.providers)}.", "invalid_priority")
        holder = next((item for item in records.providers if int(item.priority) == request.priority), None)
        if holder is not moved:
            self._store.swap_priorities(moved, request.priority, holder)
        return self.providers(tenant, api_base)

    def delete_provider(self, tenant: TenantContext, name: str) -> None:
        provider = _tenant_provider(name)
        records = self._tenants.load(tenant.tenant_id)
        removed = self._find_provider(records, provider)
        below = [item for item in records.providers if int(item.priority) > int(removed.priority)]
        self._store.delete_provider(removed, below)

    @staticmethod
    def _find_provider(records: TenantRecords, provider: ProviderName) -> ProviderCredential:
        for item in records.providers:
            if item.provider == provider.value:
                return item
        raise not_found(f"{provider.value} is not configured.", "provider_not_configured")

    # ------------------------------------------------------------ signing secret

    def create_signing_secret(self, tenant: TenantContext) -> dict[str, Any]:
        secret = new_signing_secret()
        created_at = iso(self._clock())
        sealed = seal_attribute(self._vault, tenant.tenant_id, Purpose.SIGNING_SECRET, secret)
        try:
            self._store.set_signing_secret(tenant.tenant_id, sealed, created_at, require_absent=True)
        except AlreadyExists as exc:
            raise conflict(
                "A signing secret exists already; rotate it instead.", "signing_secret_exists"
            ) from exc
        return {"secret": secret, "createdAt": created_at}

    def signing_secret_status(self, tenant: TenantContext) -> dict[str, Any]:
        profile = self._tenants.load(tenant.tenant_id).profile
        valid_until = profile.previous_valid_until
        active_previous = valid_until if valid_until and valid_until > iso(self._clock()) else None
        return {
            "hasSecret": profile.signing_secret is not None,
            "createdAt": profile.signing_secret_created_at,
            "previousValidUntil": active_previous,
        }

    def rotate_signing_secret(self, tenant: TenantContext) -> dict[str, Any]:
        profile = self._tenants.load(tenant.tenant_id).profile
        if profile.signing_secret is None:
            raise not_found(
                "There is no signing secret to rotate; create one first.", "signing_secret_not_found"
            )
        now = self._clock()
        secret = new_signing_secret()
        sealed = seal_attribute(self._vault, tenant.tenant_id, Purpose.SIGNING_SECRET, secret)
        valid_until = iso(now + SIGNING_OVERLAP)
        self._store.set_signing_secret(
            tenant.tenant_id,
            sealed,
            iso(now),
            require_absent=False,
            previous=profile.signing_secret,
            previous_valid_until=valid_until,
        )
        return {"secret": secret, "createdAt": iso(now), "previousValidUntil": valid_until}

    def delete_signing_secret(self, tenant: TenantContext) -> None:
        if self._tenants.load(tenant.tenant_id).profile.signing_secret is None:
            raise not_found("There is no signing secret.", "signing_secret_not_found")
        self._store.delete_signing_secret(tenant.tenant_id)

    # ------------------------------------------------------------ domains

    def add_domain(self, tenant: TenantContext, request: DomainRequest) -> dict[str, Any]:
        self._paid(tenant)
        records = self._tenants.load(tenant.tenant_id)
        if not records.providers:
            raise bad_request(
                "Configure at least one provider before adding a sending domain.", "provider_not_configured"
            )
        domain = SendingDomain(
            tenant_pk(tenant.tenant_id),
            domain_sk(request.domain),
            domain=request.domain,
            created_at=iso(self._clock()),
        )
        try:
            self._store.claim_domain(tenant.tenant_id, domain)
        except DomainTaken as exc:
            raise conflict("This domain is registered by another account.", "domain_taken") from exc
        domain.providers = [
            self._register(tenant.tenant_id, item, request.domain) for item in records.providers
        ]
        self._store.save_domain(domain)
        return _domain_view(domain)

    def _register(self, tenant_id: str, stored: ProviderCredential, domain: str) -> ProviderDomainAttribute:
        provider = ProviderName(stored.provider)
        try:
            registration = self._providers(provider).register_domain(
                domain, self._credential(tenant_id, stored)
            )
        except ProviderFailure as exc:
            return ProviderDomainAttribute(
                provider=provider.value, provider_domain_id="", verified=False, error=exc.reason
            )
        return ProviderDomainAttribute(
            provider=provider.value,
            provider_domain_id=registration.provider_domain_id,
            verified=registration.verified,
            records=[
                DnsRecordAttribute(
                    type=r.type, host=r.host, value=r.value, purpose=r.purpose, priority=r.priority
                )
                for r in registration.records
            ],
        )

    def _credential(self, tenant_id: str, stored: ProviderCredential) -> Credential:
        try:
            return provider_credential(self._vault, tenant_id, stored)
        except SecretTampered as exc:
            raise conflict(
                f"The stored {stored.provider} key cannot be decrypted; store it again with "
                f"PUT /api/v1/account/providers/{stored.provider}.",
                "provider_key_unreadable",
            ) from exc

    def domains(self, tenant: TenantContext) -> list[dict[str, Any]]:
        return [_domain_view(domain) for domain in self._tenants.load(tenant.tenant_id).domains]

    def verify_domain(self, tenant: TenantContext, name: str) -> dict[str, Any]:
        domain = self._owned_domain(tenant, name)
        records = self._tenants.load(tenant.tenant_id)
        credentials = {item.provider: item for item in records.providers}
        for entry in domain.providers:
            stored = credentials.get(entry.provider)
            if stored is None or entry.verified or not entry.provider_domain_id:
                continue
            self._verify_entry(tenant.tenant_id, entry, stored)
        self._store.save_domain(domain)
        return _domain_view(domain)

    def _verify_entry(
        self, tenant_id: str, entry: ProviderDomainAttribute, stored: ProviderCredential
    ) -> None:
        provider = self._providers(ProviderName(entry.provider))
        try:
            result = provider.verify_domain(entry.provider_domain_id, self._credential(tenant_id, stored))
        except ProviderFailure as exc:
            entry.error = exc.reason
            return
        entry.verified = result.verified
        entry.error = None

    def delete_domain(self, tenant: TenantContext, name: str) -> None:
        domain = self._owned_domain(tenant, name)
        credentials = {item.provider: item for item in self._tenants.load(tenant.tenant_id).providers}
        for entry in domain.providers:
            stored = credentials.get(entry.provider)
            if stored is not None and entry.provider_domain_id:
                try:
                    self._providers(ProviderName(entry.provider)).delete_domain(
                        entry.provider_domain_id, self._credential(tenant.tenant_id, stored)
                    )
                except ProviderFailure as exc:
                    logger.warning(
                        "provider kept the domain", extra={"provider": entry.provider, "reason": exc.reason}
                    )
        self._store.delete_domain(tenant.tenant_id, domain.domain)

    def _owned_domain(self, tenant: TenantContext, name: str) -> SendingDomain:
        domain = self._store.domain(tenant.tenant_id, name.lower())
        if domain is None:
            raise not_found("No such sending domain on this account.", "domain_not_found")
        return domain

    # ------------------------------------------------------------ suppressions

    def suppressions(self, tenant: TenantContext) -> list[dict[str, Any]]:
        return [
            {
                "email": item.address,
                "reason": item.reason,
                "source": item.source,
                "createdAt": item.created_at,
            }
            for item in self._store.suppressions(tenant.tenant_id)
        ]

    def delete_suppression(self, tenant: TenantContext, email: str) -> None:
        if not self._store.delete_suppression(tenant.tenant_id, email):
            raise not_found("This address is not suppressed.", "suppression_not_found")


def _domain_view(domain: SendingDomain) -> dict[str, Any]:
    return {
        "domain": domain.domain,
        "createdAt": domain.created_at,
        "verified": any(entry.verified for entry in domain.providers),
        "providers": [
            {
                "provider": entry.provider,
                "verified": entry.verified,
                "error": entry.error,
                "records": [
                    {
                        "type": r.type,
                        "host": r.host,
                        "value": r.value,
                        "purpose": r.purpose,
                        "priority": r.priority,
                    }
                    for r in entry.records
                ],
            }
            for entry in domain.providers
        ],
    }
