"""The provider table (herald.domain.vendors) names, for each vendor, code that exists and agrees
with it: its adapters, its sandbox imitation, its side of the harness, the import contracts that keep
it apart, and the DNS records its domains get."""

from __future__ import annotations

import configparser
from collections.abc import Iterator

import msgspec
import pytest

from herald.adapters.providers.registry import ProviderRegistry
from herald.adapters.vendor_modules import load
from herald.domain.providers import Credential
from herald.domain.vendors import TENANT_PROVIDERS, VENDOR_REGIONS, ProviderName, Region, vendor_of
from herald.http.answers import SupportedProvider
from herald.services.ports.providers import DeliveryWebhook
from herald_harness.vendors import side
from herald_local.config import project_root
from herald_local.sandbox import SandboxServer
from herald_local.sandbox.app import SERVICES

SANDBOX_CREDENTIAL = Credential("sandbox-table-key", "sandbox-table-token")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


def contract(name: str, field: str) -> list[str]:
    """A contract's field of .importlinter, one entry a line."""
    linter = configparser.ConfigParser()
    linter.read(project_root() / ".importlinter")
    return linter[f"importlinter:contract:{name}"][field].split("\n")[1:]


def test_ses_is_the_one_provider_without_a_vendor() -> None:
    assert [name for name in ProviderName if name.vendor is None] == [ProviderName.SES]
    with pytest.raises(ValueError, match="not a provider tenants bring keys for"):
        vendor_of(ProviderName.SES)


def test_a_regions_setting_is_its_parameter_in_the_templates_variable_spelling() -> None:
    assert Region("eu", "SomeVendorEuBaseUrl").setting == "HERALD_SOME_VENDOR_EU_BASE_URL"


@pytest.mark.parametrize("name", TENANT_PROVIDERS, ids=str)
def test_a_vendors_adapters_are_its_own(name: ProviderName) -> None:
    vendor = vendor_of(name)
    adapter = load(vendor.adapter)(*(f"https://{region.name}.test" for region in vendor.regions))
    webhook = load(vendor.webhook)

    assert adapter.name is name
    assert isinstance(webhook, DeliveryWebhook)
    assert webhook.provider is name
    assert vendor.adapter.startswith(f"herald.adapters.providers.{name.slug}:")
    assert vendor.webhook.startswith(f"herald.adapters.inbound.{name.slug}:")


@pytest.mark.parametrize("name", TENANT_PROVIDERS, ids=str)
def test_a_vendors_sandbox_imitation_and_harness_side_go_by_its_slug(name: ProviderName) -> None:
    service = next(service for service in SERVICES if service.name == name.slug)

    assert vendor_of(name).sandbox == f"herald_local.sandbox.{name.slug}"
    assert (service.url_prefix, service.email_provider) == (f"/{name.slug}", True)
    assert side(name).SENDER.name == name.slug


def test_the_import_contracts_list_every_vendor_and_no_other() -> None:
    slugs = [name.slug for name in TENANT_PROVIDERS]

    assert contract("vendors-apart", "modules") == [
        *(f"herald.adapters.providers.{slug}" for slug in slugs),
        *(f"herald.adapters.inbound.{slug}" for slug in slugs),
    ]
    [services] = [layer.split(" | ") for layer in contract("sandbox-services", "layers") if "|" in layer]
    assert set(slugs) <= set(services)


@pytest.mark.parametrize("name", TENANT_PROVIDERS, ids=str)
def test_a_domain_at_a_vendors_imitation_asks_for_the_dns_records_the_table_names(
    name: ProviderName, sandbox: SandboxServer
) -> None:
    urls = {
        region.base_url_parameter: sandbox.provider_base_url(owner.slug) for owner, region in VENDOR_REGIONS
    }
    adapter = ProviderRegistry(urls, "platform@herald.test", lambda: None).domain(name)  # type: ignore[arg-type, return-value]

    registered = adapter.register_domain(f"{name.slug}.mail.example.com", SANDBOX_CREDENTIAL)

    kinds = {(record.type, record.purpose) for record in registered.records}
    assert kinds == {(need.type, need.purpose) for need in vendor_of(name).dns}


@pytest.mark.parametrize("name", TENANT_PROVIDERS, ids=str)
def test_the_api_describes_a_vendor_from_its_entry_and_offers_a_region_only_where_there_is_a_choice(
    name: ProviderName,
) -> None:
    vendor = vendor_of(name)
    document = msgspec.to_builtins(SupportedProvider.of(name))

    assert (document["provider"], document["label"], document["webhookSecret"]) == (
        name.value,
        vendor.label,
        vendor.inbound_credential,
    )
    regions = [region.name for region in vendor.regions]
    assert document["regions"] == (regions if len(regions) > 1 else [])
