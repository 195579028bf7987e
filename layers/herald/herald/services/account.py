"""The account routes' logic: a tenant manages its plan view, API key, provider keys, signing
secret, sending domains and suppression list with its own API key.

Secrets come in once, are checked live where the provider allows it, sealed by the ``SecretBox`` and
never shown again except as their last four characters. Every change is written with its audit entry
(who: the caller's key or member, from ``tenant.actor``); an entry names providers, priorities,
domains, addresses and at most a key's last four characters, never a secret. Nothing caches a tenant between requests,
so every change holds from the next request in every container.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from msgspec.structs import replace

from herald.domain.account import (
    AccountOverview,
    NewSigningSecret,
    PlatformSending,
    SigningSecretStatus,
    TenantContext,
    TenantProfile,
    TenantRecords,
)
from herald.domain.addresses import Suppression
from herald.domain.audit import AuditAction, AuditEntry
from herald.domain.audit import entry as audit_entry
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, FieldProblem, HeraldError, validation_failed
from herald.domain.inbound import UnusableSecret
from herald.domain.jobs import Channel
from herald.domain.plans import Plan, current_period, limits_for, quota_for
from herald.domain.providers import Credential, ProviderDomain, ProviderFailure, SendingDomain, StoredProvider
from herald.domain.secrets import Purpose, SealedSecret, SecretTampered, last_four
from herald.domain.signing import SIGNING_OVERLAP, new_signing_secret
from herald.domain.vendors import ProviderName, tenant_provider_names, vendor_of
from herald.observability import logger
from herald.services.outcomes import AlreadyExists, DomainTaken
from herald.services.ports.platform import PlatformTenants, SecretBox
from herald.services.ports.providers import DomainProviders
from herald.services.ports.tenants import AccountStore, Counters, Suppressions, TenantStore


def tenant_provider(name: str) -> ProviderName:
    try:
        provider = ProviderName(name.upper())
    except ValueError as exc:
        raise HeraldError(
            f"Unknown provider {name}; use {tenant_provider_names()}.", ErrorCode.UNKNOWN_PROVIDER
        ) from exc
    if provider is ProviderName.SES:
        raise HeraldError(
            "Amazon SES is the platform's own provider; tenants do not bring SES keys.",
            ErrorCode.UNKNOWN_PROVIDER,
        )
    return provider


class AccountService:
    def __init__(
        self,
        *,
        tenants: TenantStore,
        store: AccountStore,
        suppressions: Suppressions,
        counters: Counters,
        secrets: SecretBox,
        providers: DomainProviders,
        inbound_secrets: Callable[[ProviderName, str], object],
        clock: Callable[[], datetime] = utc_now,
        ses_tenants: PlatformTenants | None = None,
    ) -> None:
        self._tenants = tenants
        self._store = store
        self._suppressions = suppressions
        self._counters = counters
        self._secrets = secrets
        self._providers = providers
        # Raises UnusableSecret for a webhook secret the provider's verifier could never use.
        self._inbound_secrets = inbound_secrets
        self._clock = clock
        self._ses_tenants = ses_tenants

    def _entry(self, tenant: TenantContext, action: AuditAction, target: str, **details: str) -> AuditEntry:
        return _entry(tenant, iso(self._clock()), action, target, **details)

    # ------------------------------------------------------------ plan and key

    def overview(self, tenant: TenantContext) -> AccountOverview:
        records = self._tenants.load(tenant.tenant_id)
        profile = records.profile
        period = current_period(parse_iso(profile.period_anchor), self._clock())
        emails, webhooks = (quota_for(profile.plan, channel, profile.quota_limit) for channel in Channel)
        return AccountOverview(
            profile=profile,
            limits=limits_for(profile.plan),
            period=period,
            usage=self._counters.usage(tenant.tenant_id, period.key),
            email_quota=emails,
            webhook_quota=webhooks,
            previous_key_valid_until=self._grace_end(records),
            platform_sending=self._platform_sending(profile),
        )

    def _platform_sending(self, profile: TenantProfile) -> PlatformSending | None:
        """Read from SES on each overview (SES pauses and reinstates on its own): one call, free plan only."""
        if profile.plan != Plan.FREE or self._ses_tenants is None:
            return None
        try:
            return self._ses_tenants.sending(profile.tenant_id)
        except DependencyError:
            return PlatformSending.UNKNOWN

    def _grace_end(self, records: TenantRecords) -> str | None:
        """The latest end of a grace period still running for any of the account's keys."""
        now = self._clock()
        running = [until for key in records.keys for until in key.previous.values() if parse_iso(until) > now]
        return max(running, key=parse_iso, default=None)

    # ------------------------------------------------------------ providers

    def providers(self, tenant: TenantContext) -> tuple[StoredProvider, ...]:
        return self._tenants.load(tenant.tenant_id).providers

    def put_provider(
        self,
        tenant: TenantContext,
        name: str,
        *,
        api_key: str,
        account_token: str | None,
        webhook_secret: str | None,
    ) -> tuple[bool, StoredProvider]:
        """Check the key live, then store it sealed; (created?, what is stored)."""
        _paid(tenant)
        provider = tenant_provider(name)
        if webhook_secret is not None:
            self._check_webhook_secret(provider, webhook_secret)
        self._check_key(provider, Credential(api_key, account_token))
        records = self._tenants.load(tenant.tenant_id)
        existing = records.provider(provider.value)
        now = iso(self._clock())
        stored = StoredProvider(
            provider=provider.value,
            priority=existing.priority if existing else len(records.providers) + 1,
            api_key=self._seal(tenant, Purpose.PROVIDER_KEY, api_key),
            last_four=last_four(api_key),
            added_at=existing.added_at if existing else now,
            account_token=self._seal(tenant, Purpose.PROVIDER_KEY, account_token) if account_token else None,
            webhook_secret=self._seal(tenant, Purpose.INBOUND_SECRET, webhook_secret)
            if webhook_secret
            else None,
        )
        action = AuditAction.PROVIDER_ADDED if existing is None else AuditAction.PROVIDER_REPLACED
        audit = _entry(
            tenant,
            now,
            action,
            provider.value,
            priority=str(stored.priority),
            lastFour=stored.last_four,
            webhookSecret="set" if webhook_secret else "none",
        )
        self._store.save_provider(tenant.tenant_id, stored, audit)
        return existing is None, stored

    def _check_webhook_secret(self, provider: ProviderName, secret: str) -> None:
        """Refused now, with the reason, rather than stored and failing every webhook later."""
        try:
            self._inbound_secrets(provider, secret)
        except UnusableSecret as exc:
            raise validation_failed([FieldProblem("webhookSecret", exc.reason)]) from None

    def _seal(self, tenant: TenantContext, purpose: Purpose, plaintext: str) -> SealedSecret:
        return self._secrets.seal(tenant.tenant_id, purpose, plaintext)

    def _check_key(self, provider: ProviderName, credential: Credential) -> None:
        try:
            check = self._providers(provider).check_key(credential)
        except ProviderFailure as exc:
            logger.warning(
                "provider key check failed", extra={"provider": provider.value, "reason": exc.reason}
            )
            raise HeraldError(
                f"{vendor_of(provider).label} could not check the key right now ({exc.reason}); try again.",
                ErrorCode.PROVIDER_UNAVAILABLE,
            ) from exc
        if not check.valid:
            raise HeraldError(
                # The vendor is named once, here: the adapters' reasons leave it out.
                f"{vendor_of(provider).label} did not accept the key: {check.reason}",
                ErrorCode.PROVIDER_KEY_INVALID,
            )

    def set_priority(self, tenant: TenantContext, name: str, priority: int) -> tuple[StoredProvider, ...]:
        _paid(tenant)
        provider = tenant_provider(name)
        records = self._tenants.load(tenant.tenant_id)
        moved = _find_provider(records, provider)
        if priority > len(records.providers):
            raise HeraldError(
                f"priority must be between 1 and {len(records.providers)}.", ErrorCode.INVALID_PRIORITY
            )
        holder = next((item for item in records.providers if item.priority == priority), None)
        if holder != moved:
            details = {"priority": str(priority), "previousPriority": str(moved.priority)}
            if holder is not None:
                details["swappedWith"] = holder.provider
            audit = self._entry(tenant, AuditAction.PROVIDER_REORDERED, provider.value, **details)
            self._store.swap_priorities(tenant.tenant_id, moved, priority, holder, audit)
        return self.providers(tenant)

    def delete_provider(self, tenant: TenantContext, name: str) -> None:
        provider = tenant_provider(name)
        records = self._tenants.load(tenant.tenant_id)
        removed = _find_provider(records, provider)
        below = [item for item in records.providers if item.priority > removed.priority]
        audit = self._entry(
            tenant, AuditAction.PROVIDER_REMOVED, provider.value, priority=str(removed.priority)
        )
        self._store.delete_provider(tenant.tenant_id, removed, below, audit)

    # ------------------------------------------------------------ signing secret

    def create_signing_secret(self, tenant: TenantContext) -> NewSigningSecret:
        secret = new_signing_secret()
        created_at = iso(self._clock())
        sealed = self._seal(tenant, Purpose.SIGNING_SECRET, secret)
        audit = _entry(tenant, created_at, AuditAction.SIGNING_SECRET_CREATED, "signing_secret")
        try:
            self._store.set_signing_secret(
                tenant.tenant_id, sealed, created_at, require_absent=True, audit=audit
            )
        except AlreadyExists as exc:
            raise HeraldError(
                "A signing secret exists already; rotate it instead.", ErrorCode.SIGNING_SECRET_EXISTS
            ) from exc
        return NewSigningSecret(secret, created_at)

    def signing_secret_status(self, tenant: TenantContext) -> SigningSecretStatus:
        profile = self._tenants.profile(tenant.tenant_id)
        valid_until = profile.previous_valid_until
        active_previous = valid_until if valid_until and parse_iso(valid_until) > self._clock() else None
        return SigningSecretStatus(
            has_secret=profile.signing_secret is not None,
            created_at=profile.signing_secret_created_at,
            previous_valid_until=active_previous,
        )

    def rotate_signing_secret(self, tenant: TenantContext) -> NewSigningSecret:
        profile = self._tenants.profile(tenant.tenant_id)
        if profile.signing_secret is None:
            raise HeraldError(
                "There is no signing secret to rotate; create one first.", ErrorCode.SIGNING_SECRET_NOT_FOUND
            )
        now = self._clock()
        secret = new_signing_secret()
        valid_until = iso(now + SIGNING_OVERLAP)
        self._store.set_signing_secret(
            tenant.tenant_id,
            self._seal(tenant, Purpose.SIGNING_SECRET, secret),
            iso(now),
            require_absent=False,
            audit=_entry(
                tenant,
                iso(now),
                AuditAction.SIGNING_SECRET_ROTATED,
                "signing_secret",
                previousValidUntil=valid_until,
            ),
            previous=profile.signing_secret,
            previous_valid_until=valid_until,
        )
        return NewSigningSecret(secret, iso(now), valid_until)

    def delete_signing_secret(self, tenant: TenantContext) -> None:
        if self._tenants.profile(tenant.tenant_id).signing_secret is None:
            raise HeraldError("There is no signing secret.", ErrorCode.SIGNING_SECRET_NOT_FOUND)
        audit = self._entry(tenant, AuditAction.SIGNING_SECRET_DELETED, "signing_secret")
        self._store.delete_signing_secret(tenant.tenant_id, audit)

    # ------------------------------------------------------------ domains

    def add_domain(self, tenant: TenantContext, name: str) -> SendingDomain:
        _paid(tenant)
        records = self._tenants.load(tenant.tenant_id)
        if not records.providers:
            raise HeraldError(
                "Configure at least one provider before adding a sending domain.",
                ErrorCode.PROVIDER_NOT_CONFIGURED,
            )
        domain = SendingDomain(domain=name, created_at=iso(self._clock()))
        audit = _entry(
            tenant,
            domain.created_at,
            AuditAction.DOMAIN_ADDED,
            name,
            providers=",".join(item.provider for item in records.providers),
        )
        try:
            self._store.claim_domain(tenant.tenant_id, domain, audit)
        except DomainTaken as exc:
            raise HeraldError(
                "This domain is registered by another account.", ErrorCode.DOMAIN_TAKEN
            ) from exc
        domain = replace(
            domain,
            providers=tuple(self._register(tenant.tenant_id, item, name) for item in records.providers),
        )
        self._store.record_registrations(tenant.tenant_id, domain)
        return domain

    def _register(self, tenant_id: str, stored: StoredProvider, domain: str) -> ProviderDomain:
        provider = ProviderName(stored.provider)
        try:
            registration = self._providers(provider).register_domain(
                domain, self._credential(tenant_id, stored)
            )
        except ProviderFailure as exc:
            return ProviderDomain(provider=provider.value, provider_domain_id="", error=exc.reason)
        return ProviderDomain(
            provider=provider.value,
            provider_domain_id=registration.provider_domain_id,
            verified=registration.verified,
            records=registration.records,
        )

    def _credential(self, tenant_id: str, stored: StoredProvider) -> Credential:
        try:
            token = stored.account_token
            return Credential(
                api_key=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, stored.api_key),
                account_token=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, token) if token else None,
            )
        except SecretTampered as exc:
            raise HeraldError(
                f"The stored {stored.provider} key cannot be decrypted.", ErrorCode.PROVIDER_KEY_UNREADABLE
            ) from exc

    def domains(self, tenant: TenantContext) -> tuple[SendingDomain, ...]:
        return self._tenants.load(tenant.tenant_id).domains

    def verify_domain(self, tenant: TenantContext, name: str) -> SendingDomain:
        domain = self._owned_domain(tenant, name)
        records = self._tenants.load(tenant.tenant_id)
        entries = tuple(
            self._verified(tenant.tenant_id, entry, records.provider(entry.provider))
            for entry in domain.providers
        )
        domain = replace(domain, providers=entries)
        verified = ",".join(entry.provider for entry in entries if entry.verified)
        audit = self._entry(
            tenant, AuditAction.DOMAIN_VERIFIED, domain.domain, verifiedWith=verified or "none"
        )
        self._store.save_domain(tenant.tenant_id, domain, audit)
        return domain

    def _verified(
        self, tenant_id: str, entry: ProviderDomain, stored: StoredProvider | None
    ) -> ProviderDomain:
        if stored is None or entry.verified or not entry.provider_domain_id:
            return entry
        provider = self._providers(ProviderName(entry.provider))
        try:
            result = provider.verify_domain(entry.provider_domain_id, self._credential(tenant_id, stored))
        except ProviderFailure as exc:
            return replace(entry, error=exc.reason)
        return replace(entry, verified=result.verified, error=None, records=result.records or entry.records)

    def delete_domain(self, tenant: TenantContext, name: str) -> None:
        domain = self._owned_domain(tenant, name)
        records = self._tenants.load(tenant.tenant_id)
        for entry in domain.providers:
            stored = records.provider(entry.provider)
            if stored is None or not entry.provider_domain_id:
                continue
            try:
                self._providers(ProviderName(entry.provider)).delete_domain(
                    entry.provider_domain_id, self._credential(tenant.tenant_id, stored)
                )
            except ProviderFailure as exc:
                logger.warning(
                    "provider kept the domain", extra={"provider": entry.provider, "reason": exc.reason}
                )
        audit = self._entry(tenant, AuditAction.DOMAIN_REMOVED, domain.domain)
        self._store.delete_domain(tenant.tenant_id, domain.domain, audit)

    def _owned_domain(self, tenant: TenantContext, name: str) -> SendingDomain:
        domain = self._store.domain(tenant.tenant_id, name.lower())
        if domain is None:
            raise HeraldError("No such sending domain on this account.", ErrorCode.DOMAIN_NOT_FOUND)
        return domain

    # ------------------------------------------------------------ suppressions

    def suppressions(self, tenant: TenantContext) -> list[Suppression]:
        return list(self._suppressions.entries(tenant.tenant_id))

    def delete_suppression(self, tenant: TenantContext, email: str) -> None:
        audit = self._entry(tenant, AuditAction.SUPPRESSION_REMOVED, email.strip().lower())
        if not self._suppressions.delete(tenant.tenant_id, email, audit):
            raise HeraldError("This address is not suppressed.", ErrorCode.SUPPRESSION_NOT_FOUND)


def _entry(tenant: TenantContext, at: str, action: AuditAction, target: str, **details: str) -> AuditEntry:
    """The entry of a change the caller made (its key or member, and its client address)."""
    return audit_entry(tenant.tenant_id, at, tenant.actor, action, target, **details)


def _paid(tenant: TenantContext) -> None:
    if not limits_for(tenant.plan).own_providers:
        raise HeraldError("Bringing your own provider keys needs a paid plan.", ErrorCode.PLAN_REQUIRED)


def _find_provider(records: TenantRecords, provider: ProviderName) -> StoredProvider:
    found = records.provider(provider.value)
    if found is None:
        raise HeraldError(f"{provider.value} is not configured.", ErrorCode.PROVIDER_NOT_FOUND)
    return found
