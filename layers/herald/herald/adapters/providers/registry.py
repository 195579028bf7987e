"""The provider adapters of one process, by name. Adapter modules load on first use, so a cold start
imports only the providers it actually calls (the API's key check needs one, the free plan only SES);
which module and class a tenant's vendor has comes from the provider table (``herald.domain.vendors``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from herald.adapters.vendor_modules import load
from herald.domain.vendors import ProviderName, vendor_of
from herald.services.ports.providers import DomainProvider, EmailProvider

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client


class ProviderRegistry:
    def __init__(
        self, base_urls: Mapping[str, str], platform_sender: str, ses_client: Callable[[], SESV2Client]
    ) -> None:
        # By template parameter, as the table's regions name them.
        self._base_urls = base_urls
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
        vendor = vendor_of(name)
        adapter: Callable[..., DomainProvider] = load(vendor.adapter)
        return adapter(*(self._base_urls[region.base_url_parameter] for region in vendor.regions))
