"""The provider registry: one adapter per name, loaded lazily from the provider table's dotted path,
built from the base URLs and the platform sender it is given (the composition root passes the
settings' values)."""

from __future__ import annotations

import json
import subprocess
import sys

import boto3
import pytest
import responses
from botocore.stub import Stubber
from mypy_boto3_sesv2 import SESV2Client

from herald.adapters.providers.registry import ProviderRegistry
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, Routing
from herald.domain.vendors import TENANT_PROVIDERS, VENDOR_REGIONS, ProviderName, vendor_of

EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="hello@acme.test")
CREDENTIAL = Credential("key-0123456789", "account-0123456789")
ROOT = "http://127.0.0.1:8101"


def ses_client() -> SESV2Client:
    client: SESV2Client = boto3.session.Session().client(
        "sesv2", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
    return client


def registry(sender: str = "mail@platform.test", client: SESV2Client | None = None) -> ProviderRegistry:
    # Each vendor's first API at /<slug>, any other at /<slug>/<region>.
    urls = {
        region.base_url_parameter: f"{ROOT}/{name.slug}"
        + ("" if region is vendor_of(name).regions[0] else f"/{region.name}")
        for name, region in VENDOR_REGIONS
    }
    return ProviderRegistry(urls, sender, lambda: client or ses_client())


@pytest.mark.parametrize("name", list(ProviderName))
def test_every_provider_name_has_one_adapter_of_that_name(name: ProviderName) -> None:
    providers = registry()
    adapter = providers.email(name)

    assert adapter.name is name
    assert providers.email(name) is adapter


@pytest.mark.parametrize("name", TENANT_PROVIDERS)
def test_tenant_providers_also_manage_domains_with_the_same_adapter(name: ProviderName) -> None:
    providers = registry()
    assert providers.domain(name) is providers.email(name)


def test_ses_is_not_offered_as_a_tenant_domain_provider() -> None:
    with pytest.raises(ValueError, match="not a provider tenants bring keys for"):
        registry().domain(ProviderName.SES)


def test_tenant_providers_are_sendgrid_resend_postmark_and_mailgun_in_api_spelling() -> None:
    assert [str(name) for name in TENANT_PROVIDERS] == ["SENDGRID", "RESEND", "POSTMARK", "MAILGUN"]


def test_given_a_cold_process_when_one_provider_is_used_then_only_its_module_is_imported() -> None:
    probe = (
        "import json, sys\n"
        "from herald.adapters.providers.registry import ProviderRegistry\n"
        "from herald.domain.vendors import ProviderName\n"
        "from herald.domain.vendors import VENDOR_REGIONS\n"
        "urls = {region.base_url_parameter: 'a' for _, region in VENDOR_REGIONS}\n"
        "registry = ProviderRegistry(urls, 's', lambda: None)\n"
        "registry.email(ProviderName.RESEND)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('herald.adapters.providers.', 'boto')))))\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )

    loaded = json.loads(result.stdout)
    assert "herald.adapters.providers.resend" in loaded
    for absent in (
        "herald.adapters.providers.sendgrid",
        "herald.adapters.providers.postmark",
        "herald.adapters.providers.ses",
        "boto3",
    ):
        assert absent not in loaded


def test_each_tenant_provider_calls_its_own_endpoint() -> None:
    with responses.RequestsMock() as mocked:
        mocked.add(responses.POST, f"{ROOT}/sendgrid/v3/mail/send", status=202)
        mocked.add(responses.POST, f"{ROOT}/resend/emails", json={"id": "r"})
        mocked.add(responses.POST, f"{ROOT}/postmark/email", json={"MessageID": "p"})
        mocked.add(responses.POST, f"{ROOT}/mailgun/v3/acme.test/messages", json={"id": "<m>"})
        mocked.add(responses.POST, f"{ROOT}/mailgun/eu/v3/acme.test/messages", json={"id": "<m>"})
        providers = registry()
        for name in TENANT_PROVIDERS:
            providers.email(name).send(EMAIL, ROUTING, CREDENTIAL)
        providers.email(ProviderName.MAILGUN).send(EMAIL, ROUTING, Credential("eu:key-0123456789"))

        assert [call.request.url for call in mocked.calls] == [
            f"{ROOT}/sendgrid/v3/mail/send",
            f"{ROOT}/resend/emails",
            f"{ROOT}/postmark/email",
            f"{ROOT}/mailgun/v3/acme.test/messages",
            f"{ROOT}/mailgun/eu/v3/acme.test/messages",
        ]


def test_ses_sends_from_the_platform_sender_it_was_given() -> None:
    client = ses_client()
    with Stubber(client) as stubber:
        stubber.add_response(
            "send_email",
            {"MessageId": "m-1"},
            {
                "FromEmailAddress": "mail@platform.test",
                "Destination": {"ToAddresses": ["ada@example.org"]},
                "Content": {
                    "Simple": {
                        "Subject": {"Data": "Welcome", "Charset": "UTF-8"},
                        "Body": {"Html": {"Data": "<p>Hi</p>", "Charset": "UTF-8"}},
                    }
                },
                "EmailTags": [
                    {"Name": "herald_job_id", "Value": "job-0001"},
                    {"Name": "herald_tenant_id", "Value": "tenant-42"},
                ],
                "TenantName": "herald-tenant-42",
            },
        )
        delivered = registry(client=client).email(ProviderName.SES).send(EMAIL, ROUTING, CREDENTIAL)
    assert delivered.provider_message_id == "m-1"
