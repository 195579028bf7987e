"""The provider adapter for a name. Modules load on first use, so a cold start imports only the
providers it actually calls (the API's key check needs one, the free-plan path only SES)."""

from __future__ import annotations

from functools import cache

from herald.domain.providers import TENANT_PROVIDERS, DomainProvider, EmailProvider, ProviderName


@cache
def provider_for(name: ProviderName) -> EmailProvider:
    """The adapter the delivery engine sends through."""
    if name is ProviderName.SES:
        from herald.adapters.providers.ses import SesProvider

        return SesProvider()
    return domain_provider_for(name)


@cache
def domain_provider_for(name: ProviderName) -> DomainProvider:
    """The adapter of a tenant provider, which also manages sending domains; SES is not one."""
    if name not in TENANT_PROVIDERS:
        raise ValueError(f"{name} is not a provider tenants bring keys for")
    if name is ProviderName.SENDGRID:
        from herald.adapters.providers.sendgrid import SendGridProvider

        return SendGridProvider()
    if name is ProviderName.RESEND:
        from herald.adapters.providers.resend import ResendProvider

        return ResendProvider()
    from herald.adapters.providers.postmark import PostmarkProvider

    return PostmarkProvider()
