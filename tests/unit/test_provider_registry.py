"""The provider registry: one adapter per name, loaded lazily, reading its endpoints from the
settings when a call is made (so the local stack can point them at the provider sandbox)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import boto3
import pytest
import responses
from botocore.stub import Stubber

from herald.adapters.providers import (
    TENANT_PROVIDERS,
    Credential,
    OutboundEmail,
    ProviderName,
    domain_provider_for,
    provider_for,
)
from herald.adapters.providers.ses import SesProvider
from herald.settings import get_settings

EMAIL = OutboundEmail(
    job_id="job-0001",
    tenant_id="tenant-42",
    to="ada@example.org",
    from_address="hello@acme.test",
    subject="Welcome",
    html="<p>Hi</p>",
)
CREDENTIAL = Credential("key-0123456789", "account-0123456789")


@pytest.mark.parametrize("name", list(ProviderName))
def test_every_provider_name_has_one_adapter_of_that_name(name: ProviderName) -> None:
    adapter = provider_for(name)

    assert adapter.name is name
    assert provider_for(name) is adapter


@pytest.mark.parametrize("name", TENANT_PROVIDERS)
def test_tenant_providers_also_manage_domains_with_the_same_adapter(name: ProviderName) -> None:
    assert domain_provider_for(name) is provider_for(name)


def test_ses_is_not_offered_as_a_tenant_domain_provider() -> None:
    with pytest.raises(ValueError, match="not a provider tenants bring keys for"):
        domain_provider_for(ProviderName.SES)


def test_tenant_providers_are_sendgrid_resend_and_postmark_in_api_spelling() -> None:
    assert [str(name) for name in TENANT_PROVIDERS] == ["SENDGRID", "RESEND", "POSTMARK"]


def test_given_a_cold_process_when_one_provider_is_used_then_only_its_module_is_imported() -> None:
    probe = (
        "import json, sys\n"
        "from herald.adapters.providers import ProviderName, provider_for\n"
        "provider_for(ProviderName.RESEND)\n"
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


# ---------------------------------------------------------------- endpoints from the settings

REQUIRED_ENV = {
    "HERALD_TABLE": "herald-test",
    "HERALD_KMS_KEY_ID": "alias/herald-test",
    "HERALD_DLQ": "https://sqs.test/dlq",
    **{
        f"HERALD_QUEUE_{channel}_{priority}": f"https://sqs.test/{channel}-{priority}"
        for channel in ("EMAIL", "WEBHOOK")
        for priority in ("CRITICAL", "NORMAL", "LOW")
    },
}


@pytest.fixture
def sandbox_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name, value in REQUIRED_ENV.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def point_providers_at(env: pytest.MonkeyPatch, root: str) -> None:
    env.setenv("HERALD_SENDGRID_BASE_URL", f"{root}/sendgrid")
    env.setenv("HERALD_RESEND_BASE_URL", f"{root}/resend")
    env.setenv("HERALD_POSTMARK_BASE_URL", f"{root}/postmark")
    get_settings.cache_clear()


def test_given_settings_that_change_between_calls_then_each_call_uses_the_current_base_url(
    sandbox_env: pytest.MonkeyPatch,
) -> None:
    with responses.RequestsMock() as mocked:
        for port in (8101, 8102):
            mocked.add(responses.POST, f"http://127.0.0.1:{port}/sendgrid/v3/mail/send", status=202)
            mocked.add(responses.POST, f"http://127.0.0.1:{port}/resend/emails", json={"id": "r"})
            mocked.add(responses.POST, f"http://127.0.0.1:{port}/postmark/email", json={"MessageID": "p"})

        for port in (8101, 8102):
            point_providers_at(sandbox_env, f"http://127.0.0.1:{port}")
            for name in TENANT_PROVIDERS:
                provider_for(name).send(EMAIL, CREDENTIAL)

        assert len(mocked.calls) == 6


def test_given_no_injected_sender_then_ses_sends_from_the_platform_sender_setting(
    sandbox_env: pytest.MonkeyPatch,
) -> None:
    sandbox_env.setenv("HERALD_PLATFORM_SENDER", "mail@platform.test")
    get_settings.cache_clear()
    client = boto3.session.Session().client(
        "sesv2", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    )
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
            },
        )

        delivered = SesProvider(client=client).send(EMAIL, CREDENTIAL)

    assert delivered.provider_message_id == "m-1"
