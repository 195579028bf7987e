"""The audit log through the local stack, over HTTP and through the operator CLI: a tenant's changes
read back newest first, named by the key that made them, and the operator's changes named by the OS
user who ran the CLI."""

from __future__ import annotations

import getpass
import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
import requests

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

TIMEOUT = 15


def call(stack: RunningStack, key: str, method: str, path: str, body: Any = None) -> Any:
    answer = requests.request(
        method, f"{stack.api_root}{path}", json=body, headers={"X-API-Key": key}, timeout=TIMEOUT
    )
    assert answer.status_code in (200, 201), answer.text
    return answer.json()["data"]


def test_a_tenants_changes_read_back_newest_first_named_by_its_key(local_stack: RunningStack) -> None:
    """Given a new tenant, When its key stores a provider, adds a domain and creates the signing
    secret, Then GET /account/audit lists those three newest first as the key's ("Default key"),
    after the operator's creation of the tenant, and holds neither the provider key nor the secret."""
    tenant_id, key = local_stack.create_tenant("startup", name=f"audit-{uuid.uuid4().hex[:8]}")
    provider_key = f"sandbox-sg-{uuid.uuid4().hex}"
    domain = f"mail-{uuid.uuid4()}.example.com"
    call(local_stack, key, "PUT", "/account/providers/SENDGRID", {"apiKey": provider_key})
    call(local_stack, key, "POST", "/account/domains", {"domain": domain})
    secret = call(local_stack, key, "POST", "/account/webhook-secret")["secret"]

    raw = requests.get(f"{local_stack.api_root}/account/audit", headers={"X-API-Key": key}, timeout=TIMEOUT)
    page = raw.json()["data"]

    assert [(item["action"], item["target"], item["actor"]["name"]) for item in page["entries"]] == [
        ("signing_secret.created", "signing_secret", "Default key"),
        ("domain.added", domain, "Default key"),
        ("provider.added", "SENDGRID", "Default key"),
        ("tenant.created", tenant_id, f"operator {getpass.getuser()}"),
    ]
    assert page["entries"][2]["details"]["lastFour"] == provider_key[-4:]
    assert page["nextCursor"] is None
    assert all(item["ip"] for item in page["entries"][:3])
    assert provider_key not in raw.text
    assert secret not in raw.text

    # The operator reads the same log, newest first, and its own change is recorded as its own.
    local_stack.cli("tenant", "set-plan", tenant_id, "indie")
    lines = local_stack.cli("audit", "--tenant", tenant_id, "--json", "--limit", "2").splitlines()
    newest = [json.loads(line) for line in lines]
    assert [(item["action"], item["actor"]["type"], item["actor"]["name"]) for item in newest] == [
        ("plan.changed", "operator", f"operator {getpass.getuser()}"),
        ("signing_secret.created", "key", "Default key"),
    ]
    assert newest[0]["details"] == {"plan": "indie"}
