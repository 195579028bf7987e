"""The event type catalog against moto, through the real API handler and the real table: create,
list, read, a new schema version (the previous one kept under its own key), deprecate, archive and
un-archive, each change with its audit entry in the same transaction; the accept path's check in
one strongly consistent read; the catalog's OpenAPI document; the scopes; another tenant's types
stay out of reach."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer
from msgspec.structs import replace
from openapi_spec_validator import validate

from herald.adapters import event_schemas
from herald.adapters.store.event_type_store import DynamoEventTypeStore
from herald.domain.access import Actor, ActorKind
from herald.domain.audit import AuditAction, entry
from herald.domain.errors import ErrorCode, HeraldError
from herald.services.event_types import EventTypes
from herald.services.outcomes import EventTypeChanged
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto
from herald_local.aws.sdk_calls import Proceed, SdkCall, observing

SCHEMA = {
    "type": "object",
    "required": ["orderId", "amount"],
    "properties": {"orderId": {"type": "string"}, "amount": {"type": "integer", "minimum": 0}},
}
ORDER_PAID = {"name": "order.paid", "description": "An order was paid", "schema": SCHEMA}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def items(herald: HeraldInMoto, prefix: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    found = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return sorted((item for item in found if str(item["pk"]).startswith(prefix)), key=lambda item: item["sk"])


def audit(herald: HeraldInMoto, tenant_id: str) -> list[tuple[str, str, dict[str, str]]]:
    return [
        (item["action"], item["target"], item["details"])
        for item in items(herald, f"AUDIT#{tenant_id}")
        if str(item["action"]).startswith("event_type.")
    ]


def created(herald: HeraldInMoto, key: str) -> dict[str, Any]:
    answer = herald.api("POST", "/api/v1/event-types", ORDER_PAID, key=key)
    assert answer.status == 201, answer.text
    data: dict[str, Any] = answer.data
    return data


def test_create_version_deprecate_archive_and_back_each_with_its_audit_entry(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    first = created(herald, key)
    assert {
        name: first[name] for name in ("name", "description", "schema", "version", "deprecated", "archived")
    } == {
        **ORDER_PAID,
        "version": 1,
        "deprecated": False,
        "archived": False,
    }
    assert first["createdAt"] == first["updatedAt"]

    v2 = {**SCHEMA, "required": ["orderId"]}
    patched = herald.api(
        "PATCH", "/api/v1/event-types/order.paid", {"schema": v2, "deprecated": True}, key=key
    )
    assert patched.status == 200, patched.text
    assert (patched.data["version"], patched.data["schema"], patched.data["deprecated"]) == (2, v2, True)
    kept = herald.api("GET", "/api/v1/event-types/order.paid?version=1", key=key)
    assert (kept.status, kept.data["version"], kept.data["schema"]) == (200, 1, SCHEMA)
    versions = items(herald, f"EVENTTYPE#{tenant_id}#order.paid")
    assert [(item["sk"], item["version"]) for item in versions] == [("V#000001", 1), ("V#000002", 2)]

    archived = herald.api("DELETE", "/api/v1/event-types/order.paid", key=key)
    assert (archived.status, archived.data["archived"]) == (200, True)
    assert herald.api("GET", "/api/v1/event-types", key=key).data == []
    listed = herald.api("GET", "/api/v1/event-types?includeArchived=true", key=key).data
    assert [(kind["name"], kind["archived"]) for kind in listed] == [("order.paid", True)]
    taken = herald.api("POST", "/api/v1/event-types", ORDER_PAID, key=key)
    assert (taken.status, taken.body["code"], taken.body["error"]) == (
        409,
        "event_type_exists",
        'There is already an event type order.paid (archived: PATCH it with {"archived": false} to use it again).',
    )
    back = herald.api("PATCH", "/api/v1/event-types/order.paid", {"archived": False}, key=key)
    assert (back.status, back.data["archived"], back.data["version"]) == (200, False, 2)

    assert audit(herald, tenant_id) == [
        (AuditAction.EVENT_TYPE_CREATED.value, "order.paid", {"version": "1"}),
        (AuditAction.EVENT_TYPE_UPDATED.value, "order.paid", {"version": "2", "deprecated": "true"}),
        (AuditAction.EVENT_TYPE_ARCHIVED.value, "order.paid", {"version": "2", "archived": "true"}),
        (AuditAction.EVENT_TYPE_UPDATED.value, "order.paid", {"version": "2", "archived": "false"}),
    ]


def test_a_change_decided_from_a_stale_head_writes_nothing_not_even_its_entry(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    created(herald, key)
    store = DynamoEventTypeStore(herald.table)
    stale = store.get(tenant_id, "order.paid")
    assert stale is not None
    herald.api("PATCH", "/api/v1/event-types/order.paid", {"description": "Paid"}, key=key)  # meanwhile
    before = audit(herald, tenant_id)

    actor = Actor(ActorKind.OPERATOR, "ops", "operator ops")
    late = entry(tenant_id, "2026-12-05T09:00:00.000Z", actor, AuditAction.EVENT_TYPE_UPDATED, "order.paid")
    with pytest.raises(EventTypeChanged):
        store.update(tenant_id, stale, replace(stale, schema=None, version=2), None, late)

    assert audit(herald, tenant_id) == before
    assert [item["sk"] for item in items(herald, f"EVENTTYPE#{tenant_id}#")] == ["V#000001"]


def test_invalid_input_is_refused_with_a_sentence_naming_it(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    bad_name = herald.api("POST", "/api/v1/event-types", {**ORDER_PAID, "name": "Order Paid"}, key=key)
    assert (bad_name.status, bad_name.body["code"]) == (400, "validation_error")
    assert bad_name.body["error"].startswith("An event type's name is 1 to 100 characters")
    remote = herald.api(
        "POST",
        "/api/v1/event-types",
        {**ORDER_PAID, "schema": {"$ref": "http://169.254.169.254/latest"}},
        key=key,
    )
    assert (remote.status, remote.body["code"], remote.body["error"]) == (
        400,
        "event_type_invalid",
        "The schema's $ref at / is 'http://169.254.169.254/latest': a schema may refer only to its own parts "
        "(#/$defs/…), never to a URL or a file.",
    )
    backreference = herald.api(
        "POST",
        "/api/v1/event-types",
        {**ORDER_PAID, "schema": {"properties": {"a": {"pattern": "(a)\\1"}}}},
        key=key,
    )
    assert backreference.body["error"].startswith(
        "The schema's pattern at /properties/a/pattern is not an RE2 regular expression"
    )
    unknown = herald.api("PATCH", "/api/v1/event-types/nope", {"deprecated": True}, key=key)
    assert (unknown.status, unknown.body["code"], unknown.body["error"]) == (
        404,
        "event_type_not_found",
        "There is no event type nope.",
    )
    extra = herald.api("PATCH", "/api/v1/event-types/nope", {"version": 3}, key=key)
    assert (extra.status, extra.body["code"]) == (400, "validation_error")
    for flag in ("true", 1):
        loose = herald.api("PATCH", "/api/v1/event-types/order.paid", {"archived": flag}, key=key)
        assert (loose.status, loose.body["code"]) == (400, "validation_error"), flag
        assert loose.body["details"][0]["field"] == "archived"


def test_the_accept_check_is_one_strongly_consistent_read_and_names_the_payloads_problems(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    created(herald, key)
    catalog = EventTypes(DynamoEventTypeStore(herald.table), event_schemas)
    calls: list[tuple[str, bool]] = []

    def record(call: SdkCall, proceed: Proceed) -> Any:
        calls.append((call.operation, bool(call.params.get("ConsistentRead"))))
        return proceed()

    with observing(record):
        assert catalog.checked(tenant_id, "order.paid", {"orderId": "o1", "amount": 5}).version == 1
    assert calls == [("GetItem", True)]
    with pytest.raises(HeraldError) as caught:
        catalog.checked(tenant_id, "order.paid", {"orderId": 1, "amount": 5})
    assert (caught.value.code, caught.value.extra) == (
        ErrorCode.EVENT_PAYLOAD_INVALID,
        {"errors": [{"path": "/orderId", "message": "1 is not of type 'string'"}]},
    )


def test_the_catalog_document_describes_this_accounts_live_types(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    created(herald, key)
    herald.api("POST", "/api/v1/event-types", {"name": "order.gone"}, key=key)
    herald.api("DELETE", "/api/v1/event-types/order.gone", key=key)
    other = herald.new_key()
    herald.api("POST", "/api/v1/event-types", {"name": "secret.other"}, key=other)

    answer = herald.api("GET", "/api/v1/event-types/openapi.json", key=key)
    assert (answer.status, answer.headers["Content-Type"]) == (200, "application/json")
    validate(answer.body)
    assert list(answer.body["webhooks"]) == ["order.paid"]
    data = answer.body["webhooks"]["order.paid"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]
    assert data["properties"]["data"] == {"$id": "urn:herald:event-type:order.paid:1", **SCHEMA}


def test_scopes_and_tenants(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    created(herald, key)
    scoped = {}
    for scope in ("send", "read"):
        answer = herald.api("POST", "/api/v1/account/keys", {"name": scope, "scopes": [scope]}, key=key)
        scoped[scope] = answer.data["key"]
    refused = herald.api("POST", "/api/v1/event-types", {"name": "a.b"}, key=scoped["read"])
    assert (refused.status, refused.body["code"], refused.body["requiredScope"]) == (
        403,
        "insufficient_scope",
        "manage",
    )
    assert herald.api("DELETE", "/api/v1/event-types/order.paid", key=scoped["read"]).status == 403
    assert herald.api("GET", "/api/v1/event-types/order.paid", key=scoped["read"]).status == 200
    assert herald.api("GET", "/api/v1/event-types", key=scoped["send"]).status == 403

    stranger = herald.new_key()
    for method, path in (
        ("GET", "/api/v1/event-types/order.paid"),
        ("DELETE", "/api/v1/event-types/order.paid"),
    ):
        answer = herald.api(method, path, key=stranger)
        assert (answer.status, answer.body["code"]) == (404, "event_type_not_found"), (method, path)
    patched = herald.api("PATCH", "/api/v1/event-types/order.paid", {"deprecated": True}, key=stranger)
    assert patched.status == 404
    assert herald.api("GET", "/api/v1/event-types", key=stranger).data == []
    assert herald.api("GET", "/api/v1/event-types/openapi.json", key=stranger).body["webhooks"] == {}
    # The owner's type is untouched.
    assert herald.api("GET", "/api/v1/event-types/order.paid", key=key).data["deprecated"] is False
