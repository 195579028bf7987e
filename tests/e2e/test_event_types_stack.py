"""Event types over HTTP through the local stack, as a tenant uses them: declare order.paid with a
schema, a new schema version, archive and bring back; a send-scoped key refused with the scope it
lacks; a schema that would fetch a URL or backtrack for ever refused when saved; the catalog's
OpenAPI document and the API's own webhooks entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import requests
from openapi_spec_validator import validate

from herald_harness.tenants import Tenant, new_tenant

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

SCHEMA = {
    "type": "object",
    "required": ["orderId", "amount"],
    "properties": {
        "orderId": {"type": "string", "pattern": "^ord_[0-9a-z]+$"},
        "amount": {"type": "integer", "minimum": 0},
    },
}
ORDER_PAID = {"name": "order.paid", "description": "An order was paid in full", "schema": SCHEMA}


def answered(tenant: Tenant, method: str, path: str, body: Any, status: int) -> dict[str, Any]:
    answer = tenant.call(method, path, body)
    assert answer.status_code == status, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_a_tenant_declares_versions_archives_and_brings_back_an_event_type(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, providers=())
    created = answered(tenant, "POST", "/event-types", ORDER_PAID, 201)["data"]
    assert (created["name"], created["version"], created["schema"], created["archived"]) == (
        "order.paid",
        1,
        SCHEMA,
        False,
    )

    v2 = {**SCHEMA, "required": ["orderId"]}
    patched = answered(tenant, "PATCH", "/event-types/order.paid", {"schema": v2}, 200)["data"]
    assert (patched["version"], patched["schema"]) == (2, v2)
    assert answered(tenant, "GET", "/event-types/order.paid?version=1", None, 200)["data"]["schema"] == SCHEMA
    assert answered(tenant, "GET", "/event-types/order.paid", None, 200)["data"]["version"] == 2

    archived = answered(tenant, "DELETE", "/event-types/order.paid", None, 200)["data"]
    assert archived["archived"] is True
    assert answered(tenant, "GET", "/event-types", None, 200)["data"] == []
    listed = answered(tenant, "GET", "/event-types?includeArchived=true", None, 200)["data"]
    assert [(kind["name"], kind["archived"], kind["version"]) for kind in listed] == [("order.paid", True, 2)]
    again = answered(tenant, "POST", "/event-types", ORDER_PAID, 409)
    assert (again["code"], again["error"]) == (
        "event_type_exists",
        'There is already an event type order.paid (archived: PATCH it with {"archived": false} to use it again).',
    )
    back = answered(tenant, "PATCH", "/event-types/order.paid", {"archived": False}, 200)["data"]
    assert (back["archived"], back["version"]) == (False, 2)

    entries = answered(tenant, "GET", "/account/audit?action=event_type.updated", None, 200)["data"][
        "entries"
    ]
    assert [entry["details"] for entry in entries] == [
        {"version": "2", "archived": "false"},
        {"version": "2"},
    ]


def test_a_send_scoped_key_is_refused_naming_the_scope_it_lacks(local_stack: RunningStack) -> None:
    owner = new_tenant(local_stack, providers=())
    answered(owner, "POST", "/event-types", ORDER_PAID, 201)
    made = answered(owner, "POST", "/account/keys", {"name": "CI", "scopes": ["send"]}, 201)["data"]
    ci = Tenant(owner.api_root, owner.tenant_id, made["key"])
    refused = answered(ci, "POST", "/event-types", {"name": "order.refunded"}, 403)
    assert (refused["code"], refused["error"], refused["requiredScope"]) == (
        "insufficient_scope",
        'This request needs the manage scope, which the API key "CI" lacks.',
        "manage",
    )
    read = answered(ci, "GET", "/event-types", None, 403)
    assert read["error"] == 'This request needs the read scope, which the API key "CI" lacks.'
    assert answered(ci, "DELETE", "/event-types/order.paid", None, 403)["requiredScope"] == "manage"


def test_hostile_schemas_are_refused_when_saved_and_another_tenant_sees_nothing(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, providers=())
    metadata = {**ORDER_PAID, "schema": {"$ref": "http://169.254.169.254/latest/meta-data/"}}
    refused = answered(tenant, "POST", "/event-types", metadata, 400)
    assert (refused["code"], refused["error"]) == (
        "event_type_invalid",
        "The schema's $ref at / is 'http://169.254.169.254/latest/meta-data/': a schema may refer only to its "
        "own parts (#/$defs/…), never to a URL or a file.",
    )
    lookahead = {**ORDER_PAID, "schema": {"properties": {"a": {"pattern": "(?=a)a"}}}}
    assert answered(tenant, "POST", "/event-types", lookahead, 400)["error"] == (
        "The schema's pattern at /properties/a/pattern is not an RE2 regular expression (no lookaround, no "
        'backreferences, at most 2 MiB once compiled): "(?=a)a".'
    )
    bad_name = answered(tenant, "POST", "/event-types", {"name": "Order.Paid"}, 400)
    assert bad_name["code"] == "validation_error"
    assert "like order.paid ('Order.Paid' is not one)." in bad_name["error"]

    answered(tenant, "POST", "/event-types", ORDER_PAID, 201)
    stranger = new_tenant(local_stack, providers=())
    unknown = answered(stranger, "GET", "/event-types/order.paid", None, 404)
    assert (unknown["code"], unknown["error"]) == (
        "event_type_not_found",
        "There is no event type order.paid.",
    )
    answered(stranger, "DELETE", "/event-types/order.paid", None, 404)
    assert answered(tenant, "GET", "/event-types/order.paid", None, 200)["data"]["archived"] is False


def test_the_catalog_and_the_api_describe_deliveries_as_openapi_webhooks(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack, providers=())
    answered(tenant, "POST", "/event-types", ORDER_PAID, 201)
    answered(tenant, "POST", "/event-types", {"name": "order.refunded"}, 201)
    answered(tenant, "PATCH", "/event-types/order.refunded", {"deprecated": True}, 200)
    answered(tenant, "POST", "/event-types", {"name": "order.gone"}, 201)
    answered(tenant, "DELETE", "/event-types/order.gone", None, 200)

    catalog = tenant.call("GET", "/event-types/openapi.json")
    assert catalog.status_code == 200, catalog.text
    document = catalog.json()
    validate(document)
    assert sorted(document["webhooks"]) == ["order.paid", "order.refunded"]
    paid = document["webhooks"]["order.paid"]["post"]
    body = paid["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["data"] == {"$id": "urn:herald:event-type:order.paid:1", **SCHEMA}
    assert body["properties"]["type"] == {"const": "order.paid"}
    assert document["webhooks"]["order.refunded"]["post"]["deprecated"] is True

    api = requests.get(f"{local_stack.api_root}/openapi.json", timeout=20).json()
    assert set(api["webhooks"]) == {"event"}
    headers = {parameter["name"] for parameter in api["webhooks"]["event"]["post"]["parameters"]}
    assert {"webhook-signature", "X-Webhook-Signature"} <= headers
