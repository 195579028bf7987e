"""The in-process twins of the local stack's consistency tests: a warm API function and a warm email
worker (their services built once, as in a container that served requests before) see a change
made through another container's table binding on their very next request or pass."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.store.account_store import DynamoAccountStore
from herald.adapters.store.key_store import DynamoKeyStore
from herald.adapters.store.table import Table
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.access import Scope
from herald.domain.audit import AuditAction
from herald.domain.job_records import JobState
from herald.services.keys import KeyService
from herald.services.tenants import IssuedKey, TenantAdmin
from herald_harness.in_moto import HARNESS, HeraldInMoto, harness_entry, herald_in_moto
from herald_local.sandbox import SandboxServer
from tests.fakes.common import full_grant

EMAIL_QUEUE = "EmailNormalQueueUrl"
EMAIL = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


def elsewhere(herald: HeraldInMoto) -> Table:
    """The table as another container (or the operator CLI) binds it: nothing shared in memory."""
    return Table(herald.table.address)


def admin_elsewhere(herald: HeraldInMoto) -> TenantAdmin:
    return TenantAdmin(DynamoTenantStore(elsewhere(herald)))


def send(herald: HeraldInMoto, key: str, body: dict[str, Any] = EMAIL) -> Any:
    return herald.api("POST", "/api/v1/notifications/email", body, key=key)


def test_a_provider_stored_elsewhere_lets_the_next_send_of_a_warm_container_through(
    herald: HeraldInMoto,
) -> None:
    issued = herald.new_tenant("startup", "Late", providers=())
    refused = send(herald, issued.api_key)
    assert (refused.status, refused.body["code"]) == (403, "provider_required")

    herald.store_provider_key(issued.tenant_id, "SENDGRID", "sendgrid-late-key-0001")

    assert send(herald, issued.api_key).status == 202


@pytest.mark.parametrize("grace", [False, True])
def test_a_key_revoked_elsewhere_is_refused_by_the_next_request_of_a_warm_container(
    herald: HeraldInMoto, grace: bool
) -> None:
    issued = herald.new_tenant("startup", "Revoked")
    assert herald.api("GET", "/api/v1/account", key=issued.api_key).status == 200

    keys = KeyService(DynamoTenantStore(elsewhere(herald)), DynamoKeyStore(elsewhere(herald)))
    rotated = keys.rotate(issued.tenant_id, full_grant(), issued.key_id, 3600 if grace else 0)

    old = herald.api("GET", "/api/v1/account", key=issued.api_key)
    assert (old.status, old.body.get("code")) == ((200, None) if grace else (401, "invalid_api_key"))
    assert herald.api("GET", "/api/v1/account", key=rotated.secret).status == 200


def test_a_key_revoked_elsewhere_is_refused_by_a_second_warm_container(herald: HeraldInMoto) -> None:
    issued = herald.new_tenant("startup", "Second")
    keys = KeyService(DynamoTenantStore(elsewhere(herald)), DynamoKeyStore(elsewhere(herald)))
    reader = keys.create(issued.tenant_id, full_grant(), "dashboard", [Scope.READ])
    assert herald.api("GET", "/api/v1/notifications/jobs", key=reader.secret).status == 200

    keys.revoke(issued.tenant_id, full_grant(), reader.key.key_id)

    refused = herald.api("GET", "/api/v1/notifications/jobs", key=reader.secret)
    assert (refused.status, refused.body["code"]) == (401, "invalid_api_key")
    assert herald.api("GET", "/api/v1/notifications/jobs", key=issued.api_key).status == 200


def test_a_tenant_disabled_and_enabled_elsewhere_holds_from_the_next_request(herald: HeraldInMoto) -> None:
    issued = herald.new_tenant("startup", "Toggled")
    assert herald.api("GET", "/api/v1/account", key=issued.api_key).status == 200

    admin_elsewhere(herald).set_status(issued.tenant_id, active=False, actor=HARNESS)
    refused = herald.api("GET", "/api/v1/account", key=issued.api_key)
    admin_elsewhere(herald).set_status(issued.tenant_id, active=True, actor=HARNESS)

    assert (refused.status, refused.body["code"]) == (403, "tenant_disabled")
    assert herald.api("GET", "/api/v1/account", key=issued.api_key).status == 200


def test_a_plan_set_elsewhere_is_the_plan_of_the_next_request(herald: HeraldInMoto) -> None:
    issued = herald.new_tenant("free", "Upgraded")
    assert herald.api("GET", "/api/v1/account", key=issued.api_key).data["plan"] == "free"

    admin_elsewhere(herald).set_plan(issued.tenant_id, "startup", HARNESS)

    overview = herald.api("GET", "/api/v1/account", key=issued.api_key).data
    assert (overview["plan"], overview["rateLimit"]) == ("startup", {"requestsPerMinute": 200})


def sandbox_tenant(herald: HeraldInMoto, name: str, providers: tuple[str, ...]) -> IssuedKey:
    """A paid tenant whose keys the provider sandbox accepts."""
    issued = herald.new_tenant("startup", name, providers=())
    for priority, provider in enumerate(providers, start=1):
        herald.store_provider_key(issued.tenant_id, provider, f"sandbox-{name}-{provider}", priority)
    return issued


def delivered_one(herald: HeraldInMoto, issued: IssuedKey) -> JobState:
    """Hands one waiting message to the email worker's handler as it is now (warm after the first)."""
    [record] = herald.receive_records(EMAIL_QUEUE, max_messages=1)
    herald.acknowledge(EMAIL_QUEUE, [record], herald.handle_batch(EMAIL_QUEUE, [record]))
    state = herald.job_state(issued.tenant_id, json.loads(record["body"])["jobId"])
    assert state is not None
    return state


def test_a_provider_removed_elsewhere_is_never_called_by_the_next_pass_of_a_warm_worker(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    herald.drain_queues()
    urls = sandbox.provider_settings()
    issued = sandbox_tenant(herald, "trimmed", ("SENDGRID", "RESEND"))
    for _ in range(2):
        assert send(herald, issued.api_key).status == 202
    herald.use_function_environment("EmailWorkerFunction", urls)
    first = delivered_one(herald, issued)
    assert (first.status.value, first.delivery_logs[-1].used_provider) == ("completed", "SENDGRID")

    records = DynamoTenantStore(elsewhere(herald)).load(issued.tenant_id)
    sendgrid = records.provider("SENDGRID")
    assert sendgrid is not None
    removed = harness_entry(issued.tenant_id, AuditAction.PROVIDER_REMOVED, "SENDGRID")
    DynamoAccountStore(elsewhere(herald)).delete_provider(
        issued.tenant_id, sendgrid, records.providers[1:], removed
    )
    second = delivered_one(herald, issued)

    assert (second.status.value, second.delivery_logs[-1].used_provider) == ("completed", "RESEND")
    assert [tried["provider"] for tried in second.delivery_logs[-1].tried] == ["RESEND"]


def test_a_tenant_disabled_elsewhere_has_its_queued_job_failed_by_a_warm_worker_without_a_send(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    herald.drain_queues()
    urls = sandbox.provider_settings()
    issued = sandbox_tenant(herald, "stopped", ("SENDGRID",))
    for _ in range(2):
        assert send(herald, issued.api_key).status == 202
    herald.use_function_environment("EmailWorkerFunction", urls)
    assert delivered_one(herald, issued).status.value == "completed"

    admin_elsewhere(herald).set_status(issued.tenant_id, active=False, actor=HARNESS)
    stopped = delivered_one(herald, issued)

    assert (stopped.status.value, stopped.error_message) == (
        "failed",
        "the tenant is disabled (tenant_disabled); the job was not sent",
    )
    assert stopped.delivery_logs[-1].tried == ()
    assert herald.queued("DeadLetterQueueUrl") == []
