"""The provider adapters of one process, by name. Adapter modules load on first use, so a cold start
imports only the providers it actually calls (the API's key check needs one, the free plan only SES)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from herald.domain.providers import TENANT_PROVIDERS, ProviderName
from herald.services.ports import DomainProvider, EmailProvider

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client


class ProviderEndpoints(msgspec.Struct, frozen=True):
    sendgrid: str
    resend: str
    postmark: str


class ProviderRegistry:
    def __init__(
        self, endpoints: ProviderEndpoints, platform_sender: str, ses_client: Callable[[], SESV2Client]
    ) -> None:
        self._endpoints = endpoints
        self._platform_sender = platform_sender
        self._ses_client = ses_client
        self._emails: dict[ProviderName, EmailProvider] = {}
        self._domains: dict[ProviderName, DomainProvider] = {}

    def email(self, name: ProviderName) -> EmailProvider:
        """The adapter the delivery engine sends through (one per name and process)."""
        if name not in self._emails:
            self._emails[name] = self._new_email(name)
        return self._emails[name]

    def domain(self, name: ProviderName) -> DomainProvider:
        """The adapter of a tenant provider, which also manages sending domains; SES is not one."""
        if name not in self._domains:
            self._domains[name] = self._new_domain(name)
        return self._domains[name]

    def _new_email(self, name: ProviderName) -> EmailProvider:
        if name is ProviderName.SES:
            from herald.adapters.providers.ses import SesProvider

            return SesProvider(self._ses_client, self._platform_sender)
        return self.domain(name)

    def _new_domain(self, name: ProviderName) -> DomainProvider:
        if name not in TENANT_PROVIDERS:
            raise ValueError(f"{name} is not a provider tenants bring keys for")
        if name is ProviderName.SENDGRID:
            from herald.adapters.providers.sendgrid import SendGridProvider

            return SendGridProvider(self._endpoints.sendgrid)
        if name is ProviderName.RESEND:
            from herald.adapters.providers.resend import ResendProvider

            return ResendProvider(self._endpoints.resend)
        from herald.adapters.providers.postmark import PostmarkProvider

        return PostmarkProvider(self._endpoints.postmark)
