"""The sandbox's imitation of SES tenants (moto has none), driven through Herald's own adapter and
botocore's real sesv2 client: two free tenants, one tripped, the other still delivering, and resume."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.providers.ses import SesProvider
from herald.adapters.providers.ses_tenants import SesSending, SesTenants, ses_tenant_name
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from herald_local.sandbox import SandboxServer
from tests.unit.test_provider_ses import ses_client

SENDER = "notifications@herald.test"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="module")
def ses(sandbox: SandboxServer) -> tuple[SesProvider, SesTenants]:
    client = ses_client(f"{sandbox.base_url}/ses")
    return SesProvider(lambda: client, SENDER), SesTenants(lambda: client, SENDER)


def sandbox_call(sandbox: SandboxServer, method: str, path: str) -> Any:
    with urllib.request.urlopen(
        urllib.request.Request(f"{sandbox.base_url}/ses{path}", method=method)
    ) as answer:
        return json.loads(answer.read())


def send(provider: SesProvider, tenant_id: str, to: str) -> str | None:
    email = EmailNotification(to=to, subject="Hello", body="<p>Hi</p>")
    routing = Routing(job_id=f"job-{to[:5]}", tenant_id=tenant_id, from_address=SENDER)
    return provider.send(email, routing, Credential("")).provider_message_id


def test_a_set_up_tenant_has_the_platform_identity_and_the_standard_policy(
    sandbox: SandboxServer, ses: tuple[SesProvider, SesTenants]
) -> None:
    _, tenants = ses
    tenants.ensure("acct-setup")
    tenants.ensure("acct-setup")  # idempotent

    (listed,) = [
        item
        for item in sandbox_call(sandbox, "GET", "/_sandbox/tenants")
        if item["TenantName"] == "herald-acct-setup"
    ]
    assert listed["Resources"] == ["arn:aws:ses:us-east-1:123456789012:identity/herald.test"]
    assert listed["Policy"] == "arn:aws:ses:us-east-1:aws:reputation-policy/standard"


def test_a_tripped_tenant_is_paused_alone_and_resumes(
    sandbox: SandboxServer, ses: tuple[SesProvider, SesTenants]
) -> None:
    provider, tenants = ses
    tenants.ensure("acct-tripped")
    tenants.ensure("acct-healthy")
    sandbox_call(sandbox, "POST", f"/_sandbox/tenants/{ses_tenant_name('acct-tripped')}/trip")

    with pytest.raises(ProviderFailure) as caught:
        send(provider, "acct-tripped", "paused@example.org")
    assert send(provider, "acct-healthy", "healthy@example.org")

    assert (caught.value.kind, caught.value.code) == (FailureKind.PROVIDER_PERMANENT, "sending_paused")
    assert "(sending_paused)" in caught.value.reason
    assert [message.summary.recipients for message in sandbox.store.messages(to="paused@example.org")] == []
    assert tenants.paused() == ["herald-acct-tripped"]

    assert tenants.resume("acct-tripped").sending is SesSending.REINSTATED
    assert send(provider, "acct-tripped", "resumed@example.org")


def test_a_tenant_sign_up_never_created_is_created_by_its_first_send(
    sandbox: SandboxServer, ses: tuple[SesProvider, SesTenants]
) -> None:
    provider, tenants = ses

    assert send(provider, "acct-late", "late@example.org")
    status = tenants.status("acct-late")
    assert status is not None
    assert status.sending is SesSending.ENABLED
