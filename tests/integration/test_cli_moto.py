"""The operator CLI against a CloudFormation stack (moto's, created from template.yaml): names come
from the stack outputs, as with a deployed stack."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta

import pytest

from herald.adapters.store.models import (
    KEY_SK,
    PROFILE_SK,
    TENANTS_GSI_PK,
    ApiKeyItem,
    TenantItem,
    api_key_pk,
    tenant_pk,
    tenant_sort_key,
)
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.access import Role
from herald.domain.account import generate_api_key, hash_api_key
from herald.domain.clock import iso, utc_now
from herald_cli.main import main
from herald_harness.in_moto import HeraldInMoto, herald_in_moto
from herald_local.config import STACK_NAME
from tests.fakes.common import CREATED_AT


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["--stack", STACK_NAME, "--region", "us-east-1", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_an_operator_creates_lists_changes_and_disables_a_tenant(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = cli(
        capsys, "tenant", "create", "--name", "Acme", "--email", "ops@acme.test", "--plan", "indie", "--json"
    )
    assert status == 0
    created = json.loads(out)
    key = created["apiKey"]
    assert herald.api("GET", "/api/v1/account", key=key).data["plan"] == "indie"

    status, out, _ = cli(capsys, "tenant", "list", "--json")
    assert status == 0
    assert {"tenantId": created["tenantId"], "plan": "indie", "status": "active"}.items() <= next(
        row for row in json.loads(out) if row["tenantId"] == created["tenantId"]
    ).items()

    assert cli(capsys, "tenant", "set-plan", created["tenantId"], "startup")[0] == 0
    assert herald.api("GET", "/api/v1/account", key=key).data["plan"] == "startup"

    status, out, _ = cli(capsys, "tenant", "disable", created["tenantId"])
    assert status == 0
    assert out.splitlines() == [
        f"{created['tenantId']} is now disabled",
        "its next request is refused (403 tenant_disabled); its queued jobs end failed, not sent",
    ]
    refused = herald.api("GET", "/api/v1/account", key=key)
    assert (refused.status, refused.body["code"]) == (403, "tenant_disabled")


def test_key_rotate_prints_a_new_key_once_and_revokes_the_old_one(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = cli(
        capsys, "tenant", "create", "--name", "B", "--email", "b@b.test", "--plan", "startup", "--json"
    )
    created = json.loads(out)
    status, out, _ = cli(capsys, "key", "rotate", created["tenantId"], "--json")
    assert status == 0
    rotated = json.loads(out)
    assert rotated["apiKey"] != created["apiKey"]
    herald.use_function_environment("ApiFunction")
    assert herald.api("GET", "/api/v1/account", key=rotated["apiKey"]).status == 200
    assert herald.api("GET", "/api/v1/account", key=created["apiKey"]).status == 401


def test_key_rotate_without_grace_ends_every_key_still_in_an_earlier_grace_and_says_until_when(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    """Given a key rotated with an hour's grace, When the operator rotates again without grace (a
    leaked key), Then the CLI says the old keys are revoked now, and neither the first nor the second
    key works on the next request of the warm container that accepted them before."""
    _, out, _ = cli(
        capsys, "tenant", "create", "--name", "C", "--email", "c@c.test", "--plan", "startup", "--json"
    )
    first = json.loads(out)
    status, out, _ = cli(capsys, "key", "rotate", first["tenantId"], "--grace-seconds", "3600")
    assert status == 0
    lines = out.splitlines()
    second = lines[1].split()[2]
    assert re.fullmatch(r"old key valid until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z, then revoked", lines[2])

    status, out, _ = cli(capsys, "key", "rotate", first["tenantId"], "--json")
    assert status == 0
    third = json.loads(out)
    assert third["previousKeyValidUntil"] is None
    assert [herald.api("GET", "/api/v1/account", key=key).status for key in (first["apiKey"], second)] == [
        401,
        401,
    ]
    assert herald.api("GET", "/api/v1/account", key=third["apiKey"]).status == 200

    _, out, _ = cli(capsys, "key", "rotate", first["tenantId"])
    assert out.splitlines()[2:] == [
        "old key revoked now, with every key still in an earlier rotation's grace period",
        "the next request with a revoked key is refused (401 invalid_api_key)",
    ]


def test_an_unknown_stack_or_tenant_is_a_clear_error(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--stack", "no-such-stack", "--region", "us-east-1", "tenant", "list"]) == 2
    assert "no-such-stack" in capsys.readouterr().err
    status, _, err = cli(capsys, "key", "rotate", "00000000-0000-0000-0000-000000000000")
    assert status == 1
    assert "No tenant 00000000-0000-0000-0000-000000000000." in err


def test_key_migrate_makes_a_key_from_before_named_keys_the_first_named_key(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    """Given a tenant stored as before named keys (its one key and a rotated-out key in grace on the
    profile, lookups without a key id), When the operator migrates, Then both keys work again as the
    named key "Default key" (full), the profile's address is its owner, the audit log says so, and a
    second run changes nothing."""
    tenant_id, old_key, in_grace = "legacy-tenant", generate_api_key(), generate_api_key()
    until = iso(utc_now() + timedelta(hours=1))
    table = herald.table
    table[TenantItem](
        tenant_pk(tenant_id),
        PROFILE_SK,
        tenant_id=tenant_id,
        name="Legacy",
        email="Ops@Legacy.test",
        plan="startup",
        created_at=CREATED_AT,
        period_anchor=CREATED_AT,
        api_key_hash=hash_api_key(old_key),
        grace_keys={hash_api_key(in_grace): until},
        gsi1pk=TENANTS_GSI_PK,
        gsi1sk=tenant_sort_key(CREATED_AT, tenant_id),
    ).save()
    for key in (old_key, in_grace):
        table[ApiKeyItem](
            api_key_pk(hash_api_key(key)), KEY_SK, tenant_id=tenant_id, created_at=CREATED_AT
        ).save()
    herald.use_function_environment("ApiFunction")
    assert herald.api("GET", "/api/v1/account", key=old_key).status == 401

    status, out, _ = cli(capsys, "key", "migrate")

    assert status == 0
    assert out.splitlines() == [
        'legacy-tenant: its key is now the named key "Default key" (full)',
        "1 tenant(s) migrated; the others had named keys already",
    ]
    herald.use_function_environment("ApiFunction")
    assert [herald.api("GET", "/api/v1/account", key=key).status for key in (old_key, in_grace)] == [200, 200]
    keys = herald.api("GET", "/api/v1/account/keys", key=old_key).data
    assert [(key["name"], key["scopes"], key["previousValidUntil"]) for key in keys] == [
        ("Default key", ["full"], until)
    ]
    records = DynamoTenantStore(table).load(tenant_id)
    assert [(member.email, member.role) for member in records.members] == [("ops@legacy.test", Role.OWNER)]
    assert records.profile.tenant_id == tenant_id
    _, again, _ = cli(capsys, "key", "migrate")
    assert again.splitlines() == ["0 tenant(s) migrated; the others had named keys already"]
