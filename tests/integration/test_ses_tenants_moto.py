"""Free tenants kept apart on the platform's SES (moto, from template.yaml; the SES tenant operations
answered in-process by the local imitation, which moto lacks): sign-up creates the tenant's SES
tenant, free mail goes out with its TenantName, a tripped tenant's next send fails with
sending_paused while another free tenant keeps sending, and the operator sees and resumes it."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from herald_cli.main import main
from herald_harness.in_moto import HeraldInMoto, herald_in_moto
from herald_harness.ses_tenants import BOOK, TENANT_SENDS
from herald_local.config import STACK_NAME
from tests.integration.test_console_moto import sign_up

FREE_QUEUE = "EmailLowQueueUrl"  # free-plan traffic is always low priority


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


def free_tenant(herald: HeraldInMoto) -> tuple[str, str]:
    herald.use_function_environment("ApiFunction")
    issued = herald.new_tenant("free", name=f"Free{uuid.uuid4().hex[:6]}")
    return issued.tenant_id, issued.api_key


def send_and_deliver(herald: HeraldInMoto, key: str, to: str) -> dict[str, Any]:
    """Accept one free email, run the email worker on the queue, and read the job back."""
    herald.use_function_environment("ApiFunction")
    answer = herald.api(
        "POST", "/api/v1/notifications/email", {"to": to, "subject": "Hi", "body": "<p>Hi</p>"}, key=key
    )
    assert answer.status == 202, answer.body
    herald.invoke_worker(FREE_QUEUE, herald.receive_records(FREE_QUEUE))
    herald.use_function_environment("ApiFunction")
    job: dict[str, Any] = herald.api(
        "GET", f"/api/v1/notifications/jobs/{answer.data['jobId']}", key=key
    ).data
    return job


def account(herald: HeraldInMoto, key: str) -> dict[str, Any]:
    herald.use_function_environment("ApiFunction")
    data: dict[str, Any] = herald.api("GET", "/api/v1/account", key=key).data
    return data


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()  # the functions' log and metric lines so far are not the CLI's
    status = main(["--stack", STACK_NAME, "--region", "us-east-1", *args])
    return status, capsys.readouterr().out


def test_a_sign_up_creates_the_ses_tenant_with_the_platform_identity_and_policy(herald: HeraldInMoto) -> None:
    _, data = sign_up(herald, f"new-{uuid.uuid4().hex[:8]}@example.com")

    tenant = BOOK.tenants[f"herald-{data['tenantId']}"]
    domain = herald.topology.outputs["PlatformSenderAddress"].rsplit("@", 1)[1]
    assert tenant.resources == {f"arn:aws:ses:us-east-1:123456789012:identity/{domain}"}
    assert tenant.policy == "arn:aws:ses:us-east-1:aws:reputation-policy/standard"
    assert tenant.sending_status == "ENABLED"


def test_free_mail_goes_out_with_the_tenants_own_ses_tenant(herald: HeraldInMoto) -> None:
    tenant_id, key = free_tenant(herald)  # created as the harness does, without an SES tenant yet
    to = f"first-{uuid.uuid4().hex[:8]}@example.org"

    job = send_and_deliver(herald, key, to)

    assert job["status"] == "completed"
    assert (f"herald-{tenant_id}", [to]) in TENANT_SENDS
    assert account(herald, key)["platformSending"] == "enabled"


def test_a_tripped_tenant_is_paused_alone_until_the_operator_resumes_it(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    tripped, tripped_key = free_tenant(herald)
    healthy, healthy_key = free_tenant(herald)
    for key in (tripped_key, healthy_key):
        assert (
            send_and_deliver(herald, key, f"warm-{uuid.uuid4().hex[:8]}@example.org")["status"] == "completed"
        )
    BOOK.trip(f"herald-{tripped}")

    paused_job = send_and_deliver(herald, tripped_key, f"paused-{uuid.uuid4().hex[:8]}@example.org")
    other_job = send_and_deliver(herald, healthy_key, f"other-{uuid.uuid4().hex[:8]}@example.org")

    assert other_job["status"] == "completed"
    assert paused_job["status"] == "failed"
    assert paused_job["errorMessage"] == (
        "SES provider_permanent: SES paused this account's free-plan sending after too many bounces or "
        "complaints (sending_paused); other accounts keep sending, and the operator can resume it "
        "(HTTP 400, sending_paused)"
    )
    assert paused_job["statusDetail"].startswith("Failed:")
    (attempt,) = paused_job["deliveryLogs"][0]["providers"]
    assert (attempt["provider"], attempt["outcome"], attempt["code"]) == (
        "SES",
        "provider_permanent",
        "sending_paused",
    )
    # Only the operator can act on it: a dead-letter copy, as for any job left with no usable provider.
    copies = [json.loads(message["Body"]) for message in herald.queued("DeadLetterQueueUrl")]
    assert paused_job["id"] in [copy.get("jobId") for copy in copies]
    assert account(herald, tripped_key)["platformSending"] == "paused"
    assert account(herald, healthy_key)["platformSending"] == "enabled"

    status, shown = cli(capsys, "tenant", "show", tripped, "--json")
    assert status == 0
    assert json.loads(shown)["sesSending"] == "paused"

    status, out = cli(capsys, "tenant", "resume-sending", tripped)
    assert status == 0
    assert (
        out.strip()
        == f"{tripped}: SES sending reinstated by the operator (SES pauses it again on a new finding)"
    )
    status, audit = cli(capsys, "audit", "--tenant", tripped, "--json", "--limit", "1")
    entry = json.loads(audit.splitlines()[0])
    assert (entry["action"], entry["target"], entry["actor"]["type"]) == (
        "ses.sending_resumed",
        tripped,
        "operator",
    )
    assert (
        send_and_deliver(herald, tripped_key, f"again-{uuid.uuid4().hex[:8]}@example.org")["status"]
        == "completed"
    )
