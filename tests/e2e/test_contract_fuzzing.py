"""Contract fuzzing: schemathesis makes up requests for every operation of the OpenAPI document the
local stack serves, valid and hostile, and checks each answer: never a server error, and always a
status, content type, headers and body the document states for that operation.

The fuzzer runs three times: with the keys it makes up itself (none, malformed or unknown), with the
key of a paid tenant that has sandbox provider keys (so authenticated answers are fuzzed too; its
emails are accepted and delivered), and, for key rotation alone, with a tenant of its own (a rotation
ends the key that made it). The explicit examples then take every operation through its success with
the requests a client makes (free-plan and paid email, a webhook to the sandbox, a retried job, an
account's whole life), under the same checks: made-up input alone never reaches a 202 webhook or a
201 retry.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.e2e.clients import new_tenant
from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from tests.e2e.conftest import RunningStack

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# The fuzzer's runs also check that requests breaking the document's rules are refused (4xx).
FUZZ_CHECKS = [check.__name__ for check in CHECKS] + ["negative_data_rejection"]
# Made-up requests per operation in each generation phase (coverage, fuzzing), besides the
# document's own examples: enough to reach every rule, few enough for make test.
MAX_EXAMPLES = 10
OPERATIONS = 26
ROTATE_KEY = "/api/v1/account/api-key/rotate"
HTTP_TIMEOUT = 20
FUZZ_TIMEOUT_SECONDS = 600


def paid_tenant(stack: RunningStack, name: str) -> str:
    """A startup-plan tenant with a sandbox key for each provider; its API key."""
    return new_tenant(stack, name=name).api_key


def fuzz(stack: RunningStack, report: Path, *options: str) -> dict[str, Any]:
    """One schemathesis run over the served document; its JSON report (named after the run)."""
    finished = subprocess.run(
        [str(Path(sys.executable).with_name("schemathesis")), "run", f"{stack.api_root}/openapi.json"]
        + ["--url", stack.base_url, "--checks", ",".join(FUZZ_CHECKS), "--max-examples", str(MAX_EXAMPLES)]
        + ["--phases", "examples,coverage,fuzzing", "--workers", "1", "--request-timeout", str(HTTP_TIMEOUT)]
        + ["--report", "json", "--report-json-path", str(report), *options],
        cwd=report.parent,  # schemathesis keeps a cache folder where it runs: not in the repository
        capture_output=True,
        text=True,
        timeout=FUZZ_TIMEOUT_SECONDS,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout[-6000:] + finished.stderr[-2000:]
    result: dict[str, Any] = json.loads(report.read_text())
    assert result["test_cases"]["with_failures"] == 0, result["failures"]
    assert result["errors"] == [], result["errors"]
    print(f"schemathesis, {report.stem}: {result['test_cases']}")
    return result


def test_made_up_requests_with_made_up_keys_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    result = fuzz(local_stack, tmp_path / "anonymous.json")
    assert result["operations"]["tested"] == OPERATIONS


def test_made_up_requests_of_a_paid_tenant_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    key = paid_tenant(local_stack, "Fuzzed")
    result = fuzz(
        local_stack, tmp_path / "paid.json", "-H", f"X-API-Key: {key}", "--exclude-path", ROTATE_KEY
    )
    assert result["operations"]["tested"] == OPERATIONS - 1
    # The tenant's made-up emails went through: accepted answers were checked too.
    assert result["valid_rates"]["POST /api/v1/notifications/email"]["fuzzing"]["accepted"] > 0


def test_made_up_key_rotations_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    _, key = local_stack.create_tenant(plan="indie", name="Rotated")
    result = fuzz(
        local_stack, tmp_path / "rotation.json", "-H", f"X-API-Key: {key}", "--include-path", ROTATE_KEY
    )
    assert result["operations"]["tested"] == 1


# ---------------------------------------------------------------- explicit examples


@pytest.fixture(scope="module")
def served_contract(local_stack: RunningStack) -> BaseSchema:
    """The document as a client fetches it; requests go to the SDK's baseUrl (its paths begin with
    /api/v1)."""
    schema = schemathesis.openapi.from_url(f"{local_stack.api_root}/openapi.json")
    schema.config.update(base_url=local_stack.base_url)
    return schema


@dataclass
class Client:
    """Requests built from the served document's operations, sent with one tenant's key and checked
    as the fuzzer's are."""

    schema: BaseSchema
    api_key: str

    def call(self, method: str, path: str, status: int, **case: Any) -> Any:
        operation = self.schema[path][method]
        response = operation.Case(**case).call_and_validate(
            checks=CHECKS, headers={"X-API-Key": self.api_key}, timeout=HTTP_TIMEOUT
        )
        assert response.status_code == status, response.text
        body = response.json()
        return body["data"] if body["success"] else body


def wait_until(check: Callable[[], Any], what: str) -> Any:
    return wait_for(check, what, timeout=60, interval=0.2)


def test_explicit_examples_accept_every_kind_of_notification_and_retry_a_failed_one(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a free tenant and a paid one with sandbox keys, When they send the notifications a client
    sends, Then each is accepted (202), followed, listed and, once failed, retried (201), every
    answer as the document states."""
    _, free_key = local_stack.create_tenant(plan="free", name="FreeContract")
    free = Client(served_contract, free_key)
    paid = Client(served_contract, paid_tenant(local_stack, "PaidContract"))
    email = {"to": "someone@example.com", "subject": "Contract", "body": "<p>Hi</p>"}
    sandbox = local_stack.sandbox_url

    free.call("POST", "/api/v1/notifications/email", 202, body=email)
    paid.call("POST", "/api/v1/notifications/email", 202, body={**email, "provider": "RESEND", "priority": 1})
    paid.call(
        "POST",
        "/api/v1/notifications/email",
        202,
        body=email,
        headers={"Idempotency-Key": f"contract-{uuid.uuid4().hex}"},
    )
    hook = {
        "url": f"{sandbox}/hooks/contract",
        "payload": {"event": "order.paid"},
        "headers": {"X-Trace": "1"},
    }
    accepted = paid.call("POST", "/api/v1/notifications/webhook", 202, body=hook)
    refused = paid.call(
        "POST", "/api/v1/notifications/webhook", 202, body={**hook, "url": f"{sandbox}/hooks/fail-400"}
    )

    job_id = accepted["jobId"]
    wait_until(
        lambda: (
            paid.call("GET", "/api/v1/notifications/jobs/{id}", 200, path_parameters={"id": job_id})["status"]
            == "completed"
        ),
        "the webhook to be delivered",
    )
    failed_id = refused["jobId"]
    wait_until(
        lambda: (
            paid.call("GET", "/api/v1/notifications/jobs/{id}", 200, path_parameters={"id": failed_id})[
                "status"
            ]
            == "failed"
        ),
        "the refused webhook to fail",
    )
    retried = paid.call(
        "POST", "/api/v1/notifications/jobs/{id}/retry", 201, path_parameters={"id": failed_id}
    )
    assert (retried["jobId"], retried["status"]) == (failed_id, "pending")

    page = paid.call("GET", "/api/v1/notifications/jobs", 200, query={"limit": 2, "type": "email"})
    assert [job["type"] for job in page["data"]] == ["email", "email"]
    assert (
        len(paid.call("GET", "/api/v1/notifications/jobs", 200, query={"status": "completed"})["data"]) >= 1
    )


def test_explicit_examples_take_an_account_through_every_account_operation(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a paid tenant, When it manages its key, providers, signing secret, domains and
    suppressions, Then every operation answers its documented success."""
    client = Client(served_contract, local_stack.create_tenant(plan="startup", name="AccountContract")[1])
    sendgrid = {"provider": "SENDGRID"}
    key = {"apiKey": f"sandbox-{uuid.uuid4().hex}"}

    assert client.call("GET", "/api/v1/account", 200)["plan"] == "startup"
    client.call("PUT", "/api/v1/account/providers/{provider}", 201, path_parameters=sendgrid, body=key)
    client.call("PUT", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid, body=key)
    client.call(
        "PUT", "/api/v1/account/providers/{provider}", 201, path_parameters={"provider": "RESEND"}, body=key
    )
    client.call(
        "PATCH", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid, body={"priority": 2}
    )
    assert [p["provider"] for p in client.call("GET", "/api/v1/account/providers", 200)] == [
        "RESEND",
        "SENDGRID",
    ]

    domain = {"domain": f"mail-{uuid.uuid4().hex[:8]}.example.com"}
    client.call("POST", "/api/v1/account/domains", 201, body=domain)
    client.call("POST", "/api/v1/account/domains/{domain}/verify", 200, path_parameters=domain)
    assert len(client.call("GET", "/api/v1/account/domains", 200)) == 1
    client.call("DELETE", "/api/v1/account/domains/{domain}", 200, path_parameters=domain)
    client.call("DELETE", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid)

    client.call("POST", "/api/v1/account/webhook-secret", 201)
    client.call("POST", "/api/v1/account/webhook-secret/rotate", 200)
    assert client.call("GET", "/api/v1/account/webhook-secret", 200)["hasSecret"] is True
    client.call("DELETE", "/api/v1/account/webhook-secret", 200)

    assert client.call("GET", "/api/v1/account/suppressions", 200) == []
    client.call(
        "DELETE", "/api/v1/account/suppressions/{email}", 404, path_parameters={"email": "a@example.com"}
    )

    rotated = client.call("POST", ROTATE_KEY, 200, body={"graceSeconds": 60})
    assert rotated["previousKeyValidUntil"] is not None
    client.api_key = rotated["apiKey"]
    for path in ("/api/v1/ping", "/api/v1/info", "/api/v1/health"):
        client.call("GET", path, 200)
