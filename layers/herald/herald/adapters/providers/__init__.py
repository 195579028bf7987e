"""Email provider adapters: SendGrid, Resend and Postmark with the tenant's keys, Amazon SES for the
platform. Callers use the types of ``model`` and get adapters from ``registry``."""

from herald.adapters.providers.registry import domain_provider_for, provider_for
from herald.domain.providers import (
    JOB_ID_TAG,
    TENANT_ID_TAG,
    TENANT_PROVIDERS,
    Credential,
    Delivered,
    DnsRecord,
    DomainProvider,
    DomainRegistration,
    DomainVerification,
    EmailProvider,
    FailureKind,
    KeyCheck,
    OutboundEmail,
    ProviderFailure,
    ProviderName,
)

__all__ = [
    "JOB_ID_TAG",
    "TENANT_ID_TAG",
    "TENANT_PROVIDERS",
    "Credential",
    "Delivered",
    "DnsRecord",
    "DomainProvider",
    "DomainRegistration",
    "DomainVerification",
    "EmailProvider",
    "FailureKind",
    "KeyCheck",
    "OutboundEmail",
    "ProviderFailure",
    "ProviderName",
    "domain_provider_for",
    "provider_for",
]
