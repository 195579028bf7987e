"""The event type catalog: names, schema checks, versions kept, archiving, each change with its audit
entry; the accept path's check of a payload (its sentence and JSON Pointer paths); the attacks a
tenant's schema can carry (remote references, catastrophic patterns, multiplying combinators,
endless recursion, huge or deep documents); and the webhooks the OpenAPI documents describe."""

from __future__ import annotations

import socket
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from openapi_spec_validator import validate

from herald.adapters import event_schemas
from herald.adapters.event_schemas import DIALECT
from herald.domain.audit import AuditAction
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.event_types import (
    MAX_SCHEMA_BYTES,
    MAX_VERSIONS_KEPT,
    EventTypeChange,
    SchemaFault,
    json_pointer,
)
from herald.domain.events import MAX_EVENT_TYPES, EventType
from herald.http.event_webhooks import api_webhooks, catalog_document
from herald.services.event_types import EventTypes
from tests.fakes.common import full_grant
from tests.fakes.event_types import FakeEventTypeStore

TENANT = "t_1"
ORDER_PAID = {
    "type": "object",
    "required": ["orderId", "amount"],
    "properties": {
        "orderId": {"type": "string", "pattern": "^ord_[0-9a-z]+$"},
        "amount": {"type": "integer", "minimum": 0},
        "currency": {"enum": ["USD", "EUR"]},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "uniqueItems": True},
    },
    "$defs": {"line": {"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}}},
}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def store() -> FakeEventTypeStore:
    return FakeEventTypeStore()


@pytest.fixture
def catalog(store: FakeEventTypeStore) -> EventTypes:
    return EventTypes(store, event_schemas, Clock())


def refused(call: Any, *args: Any) -> HeraldError:
    with pytest.raises(HeraldError) as caught:
        call(*args)
    return caught.value


def fault(schema: dict[str, Any]) -> str:
    with pytest.raises(SchemaFault) as caught:
        event_schemas.check(schema)
    return caught.value.message


def create(catalog: EventTypes, name: str = "order.paid", schema: dict[str, Any] | None = None) -> EventType:
    return catalog.create(TENANT, full_grant(), name, "An order was paid", schema or ORDER_PAID)


# ---------------------------------------------------------------- names and schemas


@pytest.mark.parametrize(
    "name", ["order.paid", "invoice.payment_failed", "a", "user-1.created.v2", "x" * 100]
)
def test_names_like_order_paid_are_taken(catalog: EventTypes, name: str) -> None:
    assert create(catalog, name).name == name


@pytest.mark.parametrize(
    "name",
    [
        "Order.Paid",
        "order..paid",
        ".paid",
        "order.paid.",
        "order paid",
        "x" * 101,
        "a.b.c.d.e.f.g.h.i",
        "openapi.json",
    ],
)
def test_other_names_are_refused_naming_the_rule(catalog: EventTypes, name: str) -> None:
    error = refused(create, catalog, name)
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert error.message.startswith("An event type's name is 1 to 100 characters: lower-case words")
    assert f"({name[:120]!r} is not one" in error.message


def test_the_reserved_name_says_so(catalog: EventTypes) -> None:
    assert "('openapi.json' is not one, it is reserved)" in refused(create, catalog, "openapi.json").message


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"type": "objekt"},
            "The schema is not valid JSON Schema 2020-12 at /type: 'objekt' is not valid under any of the "
            "given schemas.",
        ),
        (
            {"properties": {"n": {"minimum": "zero"}}},
            "The schema is not valid JSON Schema 2020-12 at /properties/n/minimum: 'zero' is not of type "
            "'number'.",
        ),
        (
            {"$schema": "http://json-schema.org/draft-07/schema#"},
            "Event type schemas are JSON Schema 2020-12 (https://json-schema.org/draft/2020-12/schema), not "
            "'http://json-schema.org/draft-07/schema#'.",
        ),
        ({"$ref": "#/$defs/nope"}, "The schema refers to '#/$defs/nope', which it does not define."),
    ],
)
def test_a_schema_that_is_not_valid_2020_12_is_refused_naming_where(
    schema: dict[str, Any], message: str
) -> None:
    assert fault(schema) == message


def test_the_2020_12_dialect_may_be_named(catalog: EventTypes) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **ORDER_PAID}
    assert create(catalog, schema=schema).schema == schema


def test_a_schema_refused_by_the_engine_is_event_type_invalid_and_nothing_is_stored(
    catalog: EventTypes, store: FakeEventTypeStore
) -> None:
    error = refused(create, catalog, "order.paid", {"type": 3})
    assert (error.code, store.heads, store.audit) == (ErrorCode.EVENT_TYPE_INVALID, {}, [])


def test_a_schema_over_64_kib_is_refused_with_its_size(catalog: EventTypes) -> None:
    schema = {"description": "x" * MAX_SCHEMA_BYTES}
    error = refused(create, catalog, "order.paid", schema)
    assert error.code is ErrorCode.EVENT_TYPE_INVALID
    assert error.message == f"The schema is {MAX_SCHEMA_BYTES + 18} bytes as compact JSON, more than 65536."


def test_a_schema_nested_too_deep_is_refused() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(20):
        schema = {"properties": {"a": schema}}
    assert fault(schema) == "The schema is nested more than 32 levels deep."


# ---------------------------------------------------------------- the attacks a schema can carry


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every way out (urlopen, a socket's connect, a DNS lookup) recorded, and refused."""
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what} {args[:2]!r}")
            raise OSError("no network in this test")

        return call

    monkeypatch.setattr(urllib.request, "urlopen", refuse("urlopen"))
    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


@pytest.mark.parametrize(
    "reference",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "file:///etc/passwd",
        "other.json#/definitions/x",
    ],
)
def test_a_reference_outside_the_schema_is_refused_and_never_fetched(
    no_network: list[str], reference: str
) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": reference}}}
    assert fault(schema) == (
        f"The schema's $ref at /properties/a is {reference!r}: a schema may refer only to its own parts "
        "(#/$defs/…), never to a URL or a file."
    )
    # Even a schema stored before that rule, validated directly, fetches nothing.
    with pytest.raises(SchemaFault) as caught:
        event_schemas.problems(schema, {"a": 1})
    assert caught.value.message == f"The schema refers to {reference!r}, which it does not define."
    assert no_network == []


def test_the_metaschema_is_refused_too_though_it_would_come_from_the_bundled_copy(
    no_network: list[str],
) -> None:
    schema = {"properties": {"a": {"$ref": DIALECT}}}
    assert fault(schema).startswith(f"The schema's $ref at /properties/a is {DIALECT!r}")
    assert event_schemas.problems(schema, {"a": {"type": 3}})[0].path == "/a/type"
    assert no_network == []


def test_a_dynamic_reference_outside_the_schema_is_refused(no_network: list[str]) -> None:
    assert "$dynamicRef at / is 'http://169.254.169.254/x'" in fault(
        {"$dynamicRef": "http://169.254.169.254/x"}
    )
    assert no_network == []


def test_a_reference_in_data_keywords_is_data(no_network: list[str]) -> None:
    event_schemas.check({"const": {"$ref": "http://169.254.169.254/"}, "examples": [{"$ref": "file:///x"}]})
    assert no_network == []


CATASTROPHIC = "^(a+)+$"
# Python's re takes some 5 s on the short one (a regression fails, it does not hang the suite), and
# longer than the universe has left on the long one; RE2 takes microseconds on both.
EVIL = ("a" * 27 + "!", "a" * 100_000 + "!")


@pytest.mark.parametrize(
    ("schema", "refused"),
    [
        ({"properties": {"s": {"type": "string", "pattern": CATASTROPHIC}}}, True),
        ({"patternProperties": {CATASTROPHIC: {"type": "null"}}}, False),
        ({"patternProperties": {CATASTROPHIC: {}}, "additionalProperties": False}, True),
        ({"patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False}, True),
        ({"propertyNames": {"pattern": "^(a|a)*$"}}, True),
    ],
)
def test_catastrophic_patterns_run_in_linear_time(schema: dict[str, Any], refused: bool) -> None:
    """The evil strings match none of the patterns, which is what makes a backtracking engine try
    every way to split them: with one, this test would not finish (no clock is asserted; a busy
    machine passes it as fast)."""
    event_schemas.check(schema)
    for evil in EVIL:
        problems = event_schemas.problems(schema, {"s": evil, evil: 1})
        assert bool(problems) is refused


def test_patterns_are_matched_as_json_schema_says_unanchored() -> None:
    schema = {"properties": {"s": {"pattern": "b+"}}}
    assert event_schemas.problems(schema, {"s": "abbbc"}) == []
    assert [p.message for p in event_schemas.problems(schema, {"s": "ac"})] == ["'ac' does not match 'b+'"]


@pytest.mark.parametrize(
    ("pattern", "where"),
    [
        ("(a)\\1", "/properties/s/pattern"),
        ("(?=a)a", "/properties/s/pattern"),
        ("(?<!a)b", "/properties/s/pattern"),
    ],
)
def test_patterns_re2_cannot_run_in_linear_time_are_refused(pattern: str, where: str) -> None:
    assert fault({"properties": {"s": {"pattern": pattern}}}) == (
        f"The schema's pattern at {where} is not an RE2 regular expression (no lookaround, no backreferences, "
        f'at most 2 MiB once compiled): "{pattern.replace(chr(92), chr(92) * 2)}".'
    )


def test_a_pattern_too_large_once_compiled_is_refused() -> None:
    assert fault({"properties": {"s": {"pattern": "(\\p{L}{1,100}){1,100}"}}}).startswith(
        "The schema's pattern at /properties/s/pattern is not an RE2 regular expression"
    )


def test_pattern_property_names_are_checked_too() -> None:
    assert fault({"patternProperties": {"(x)\\1": {}}}).startswith(
        "The schema's pattern at /patternProperties is not an RE2 regular expression"
    )


def _multiplying(levels: int) -> dict[str, Any]:
    """anyOf of two references to the next level, ``levels`` deep: 2**levels evaluations."""
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"l{levels}"] = {"type": "null"}
    return {"$defs": defs, "$ref": "#/$defs/l0"}


def test_combinators_that_multiply_are_refused_within_the_step_budget() -> None:
    # The step budget, not a clock, bounds the work: a busy machine refuses it the same way.
    message = fault(_multiplying(40))
    assert message == (
        "Validating against the schema takes more than 50000 steps (combinators that multiply through references)."
    )


def test_a_payload_that_exhausts_the_budget_is_refused_not_run_for_ever(catalog: EventTypes) -> None:
    """Cheap for the payloads tried when it is saved (null meets every level's first branch), the
    schema multiplies for any other: that payload is refused within the budget."""
    schema = {"$defs": _multiplying(40)["$defs"], "properties": {"a": {"$ref": "#/$defs/l0"}}}
    create(catalog, "costly", schema)
    error = refused(catalog.checked, TENANT, "costly", {"a": 1})
    assert (error.code, error.extra) == (ErrorCode.EVENT_PAYLOAD_INVALID, {"errors": []})
    assert error.message == (
        "The payload cannot be checked against event type costly's schema (version 1): Validating against "
        "the schema takes more than 50000 steps (combinators that multiply through references)."
    )


@pytest.mark.parametrize(
    "schema",
    [{"$ref": "#"}, {"anyOf": [{"$ref": "#"}]}, {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}],
)
def test_a_schema_that_refers_to_itself_without_end_is_refused(schema: dict[str, Any]) -> None:
    assert fault(schema) == "The schema refers to itself without end."


def test_recursion_that_follows_the_payload_is_a_tree_and_is_fine() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    event_schemas.check(tree)
    assert event_schemas.problems(tree, {"children": [{"children": []}]}) == []
    assert event_schemas.problems(tree, {"children": [{"children": 1}]})[0].path == "/children/0/children"


def test_unique_items_compares_by_value_in_linear_time() -> None:
    schema = {"properties": {"l": {"uniqueItems": True}}}
    # 10 000 items: pairwise comparison would take minutes, hashing by value milliseconds.
    assert event_schemas.problems(schema, {"l": [{"n": i} for i in range(10_000)]}) == []
    assert [
        p.message for p in event_schemas.problems(schema, {"l": [1, True, {"a": [1]}, {"a": [1.0]}]})
    ] == ["item 3 repeats an earlier item (uniqueItems)"]
    assert event_schemas.problems(schema, {"l": [1, True, 0, False]}) == []


# ---------------------------------------------------------------- the accept path's check


def test_a_payload_that_meets_the_schema_is_taken_in_one_read(
    catalog: EventTypes, store: FakeEventTypeStore
) -> None:
    create(catalog)
    store.reads = 0
    payload = {"orderId": "ord_1", "amount": 4200, "currency": "EUR", "lines": [{"sku": "a"}]}
    assert catalog.checked(TENANT, "order.paid", payload).version == 1
    assert store.reads == 1


def test_a_payload_that_breaks_the_schema_names_the_first_problem_and_lists_each_with_its_path(
    catalog: EventTypes,
) -> None:
    create(catalog)
    payload = {"orderId": "ord_1", "amount": -1, "currency": "GBP", "lines": [{"sku": 7}]}
    error = refused(catalog.checked, TENANT, "order.paid", payload)
    assert error.code is ErrorCode.EVENT_PAYLOAD_INVALID
    assert error.message == (
        "The payload does not match event type order.paid's schema (version 1): at /amount, -1 is less than "
        "the minimum of 0 (and 2 more, listed in errors)."
    )
    assert error.extra == {
        "errors": [
            {"path": "/amount", "message": "-1 is less than the minimum of 0"},
            {"path": "/currency", "message": "'GBP' is not one of ['USD', 'EUR']"},
            {"path": "/lines/0/sku", "message": "7 is not of type 'string'"},
        ]
    }


def test_a_missing_property_is_at_the_top_level(catalog: EventTypes) -> None:
    create(catalog)
    error = refused(catalog.checked, TENANT, "order.paid", {"orderId": "ord_1"})
    assert error.message.endswith("(version 1): at its top level, 'amount' is a required property.")
    assert error.extra == {"errors": [{"path": "", "message": "'amount' is a required property"}]}


def test_at_most_ten_problems_are_listed_and_long_values_are_cut(catalog: EventTypes) -> None:
    schema = {"additionalProperties": {"type": "integer"}}
    create(catalog, "many", schema)
    error = refused(catalog.checked, TENANT, "many", {f"k{i}": "x" * 1000 for i in range(30)})
    problems = error.extra["errors"]
    assert len(problems) == 10
    assert all(len(problem["message"]) <= 300 for problem in problems)
    assert problems[0]["message"].endswith("…")


def test_json_pointer_paths_escape_tilde_and_slash() -> None:
    assert json_pointer(("a/b", "c~d", 0)) == "/a~1b/c~0d/0"
    schema = {"properties": {"a/b": {"type": "integer"}}}
    assert event_schemas.problems(schema, {"a/b": "x"})[0].path == "/a~1b"


def test_an_unknown_or_archived_type_takes_no_event(catalog: EventTypes) -> None:
    error = refused(catalog.checked, TENANT, "order.paid", {})
    assert (error.code, error.message) == (
        ErrorCode.EVENT_TYPE_NOT_FOUND,
        "There is no event type order.paid.",
    )
    create(catalog)
    catalog.archive(TENANT, full_grant(), "order.paid")
    error = refused(catalog.checked, TENANT, "order.paid", {})
    assert error.code is ErrorCode.EVENT_TYPE_ARCHIVED
    assert error.message == (
        'Event type order.paid is archived: it takes no new events (PATCH it with {"archived": false} to use it again).'
    )


def test_a_type_without_a_schema_takes_any_object(catalog: EventTypes) -> None:
    catalog.create(TENANT, full_grant(), "ping", None, None)
    assert catalog.checked(TENANT, "ping", {"anything": [1, {"goes": True}]}).schema is None


def test_a_deprecated_type_still_takes_events(catalog: EventTypes) -> None:
    create(catalog)
    catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(deprecated=True))
    assert catalog.checked(TENANT, "order.paid", {"orderId": "ord_1", "amount": 1}).deprecated


def test_another_tenants_type_is_not_found(catalog: EventTypes) -> None:
    create(catalog)
    assert refused(catalog.checked, "t_other", "order.paid", {}).code is ErrorCode.EVENT_TYPE_NOT_FOUND
    assert refused(catalog.get, "t_other", "order.paid").code is ErrorCode.EVENT_TYPE_NOT_FOUND
    assert catalog.list("t_other") == ()


# ---------------------------------------------------------------- the catalog's changes


def test_create_writes_version_1_with_its_audit_entry(catalog: EventTypes, store: FakeEventTypeStore) -> None:
    created = create(catalog)
    assert (created.version, created.deprecated, created.archived) == (1, False, False)
    assert store.versions[(TENANT, "order.paid")][1].schema == ORDER_PAID
    [audit] = store.audit
    assert (audit.action, audit.target, audit.details) == (
        AuditAction.EVENT_TYPE_CREATED,
        "order.paid",
        {"version": "1"},
    )


def test_a_name_taken_is_refused_and_says_when_it_is_archived(catalog: EventTypes) -> None:
    create(catalog)
    error = refused(create, catalog)
    assert (error.code, error.message) == (
        ErrorCode.EVENT_TYPE_EXISTS,
        "There is already an event type order.paid.",
    )
    catalog.archive(TENANT, full_grant(), "order.paid")
    assert refused(create, catalog).message == (
        'There is already an event type order.paid (archived: PATCH it with {"archived": false} to use it again).'
    )


def test_the_catalog_is_capped_archived_types_counted(catalog: EventTypes, store: FakeEventTypeStore) -> None:
    for number in range(MAX_EVENT_TYPES):
        store.heads[(TENANT, f"t{number}")] = EventType(f"t{number}", "x", "x", archived=number % 2 == 0)
    error = refused(create, catalog)
    assert error.code is ErrorCode.EVENT_TYPE_LIMIT_REACHED
    assert error.message == "This account has 500 event types (archived ones count), the most it may have."


def test_a_new_schema_is_a_new_version_and_the_previous_is_kept(
    catalog: EventTypes, store: FakeEventTypeStore
) -> None:
    create(catalog)
    v2 = {**ORDER_PAID, "required": ["orderId"]}
    updated = catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(schema=v2))
    assert (updated.version, updated.schema) == (2, v2)
    assert catalog.get(TENANT, "order.paid", 1).schema == ORDER_PAID
    assert catalog.get(TENANT, "order.paid", 1).version == 1
    assert catalog.get(TENANT, "order.paid").schema == v2
    assert store.audit[-1].action is AuditAction.EVENT_TYPE_UPDATED
    assert store.audit[-1].details == {"version": "2"}
    assert catalog.checked(TENANT, "order.paid", {"orderId": "ord_1"}).version == 2


def test_the_same_schema_again_changes_nothing(catalog: EventTypes, store: FakeEventTypeStore) -> None:
    created = create(catalog)
    assert (
        catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(schema=dict(ORDER_PAID)))
        == created
    )
    assert len(store.audit) == 1


def test_description_and_deprecation_change_without_a_new_version(
    catalog: EventTypes, store: FakeEventTypeStore
) -> None:
    create(catalog)
    change = EventTypeChange(description="  Paid in full  ", deprecated=True)
    updated = catalog.update(TENANT, full_grant(), "order.paid", change)
    assert (updated.version, updated.description, updated.deprecated) == (1, "Paid in full", True)
    assert store.audit[-1].details == {"version": "1", "deprecated": "true", "description": "Paid in full"}
    cleared = catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(description=None))
    assert cleared.description is None


def test_a_schema_can_be_removed_as_a_new_version(catalog: EventTypes) -> None:
    create(catalog)
    updated = catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(schema=None))
    assert (updated.version, updated.schema) == (2, None)


def test_an_invalid_new_schema_is_refused_and_the_type_stays(catalog: EventTypes) -> None:
    created = create(catalog)
    error = refused(
        catalog.update,
        TENANT,
        full_grant(),
        "order.paid",
        EventTypeChange(schema={"$ref": "file:///etc/passwd"}),
    )
    assert error.code is ErrorCode.EVENT_TYPE_INVALID
    assert catalog.get(TENANT, "order.paid") == created


def test_only_the_last_versions_are_kept(catalog: EventTypes, store: FakeEventTypeStore) -> None:
    create(catalog)
    for number in range(2, MAX_VERSIONS_KEPT + 3):
        catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(schema={"title": f"v{number}"}))
    kept = store.versions[(TENANT, "order.paid")]
    assert sorted(kept) == list(range(3, MAX_VERSIONS_KEPT + 3))
    error = refused(catalog.get, TENANT, "order.paid", 2)
    assert error.message == "Event type order.paid keeps no version 2 (it keeps its last 20)."


def test_archive_and_unarchive(catalog: EventTypes, store: FakeEventTypeStore) -> None:
    create(catalog)
    archived = catalog.archive(TENANT, full_grant(), "order.paid")
    assert archived.archived
    assert store.audit[-1].action is AuditAction.EVENT_TYPE_ARCHIVED
    assert catalog.list(TENANT) == ()
    assert catalog.list(TENANT, include_archived=True) == (archived,)
    assert catalog.archive(TENANT, full_grant(), "order.paid") == archived  # twice: nothing more
    assert len(store.audit) == 2
    back = catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(archived=False))
    assert not back.archived
    assert (store.audit[-1].action, store.audit[-1].details) == (
        AuditAction.EVENT_TYPE_UPDATED,
        {"version": "1", "archived": "false"},
    )


def test_a_change_decided_from_a_stale_read_is_refused(
    catalog: EventTypes, store: FakeEventTypeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = create(catalog)
    catalog.update(TENANT, full_grant(), "order.paid", EventTypeChange(deprecated=True))
    monkeypatch.setattr(store, "get", lambda tenant_id, name: stale)
    error = refused(catalog.update, TENANT, full_grant(), "order.paid", EventTypeChange(description="x"))
    assert (error.code, error.message) == (
        ErrorCode.EVENT_TYPE_CHANGED,
        "The event type changed meanwhile (another edit or an archiving); read it again.",
    )


# ---------------------------------------------------------------- the OpenAPI webhooks


def test_the_catalog_document_has_one_webhook_per_live_type_with_its_schema(catalog: EventTypes) -> None:
    create(catalog)
    catalog.create(TENANT, full_grant(), "order.refunded", None, None)
    catalog.create(TENANT, full_grant(), "old.thing", None, None)
    catalog.archive(TENANT, full_grant(), "old.thing")
    catalog.update(TENANT, full_grant(), "order.refunded", EventTypeChange(deprecated=True))
    document = catalog_document(catalog.list(TENANT, include_archived=True))
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert set(document["webhooks"]) == {"order.paid", "order.refunded"}
    paid = document["webhooks"]["order.paid"]["post"]
    body = paid["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["id", "type", "timestamp", "data"]
    assert body["properties"]["type"] == {"const": "order.paid"}
    assert body["properties"]["data"] == {"$id": "urn:herald:event-type:order.paid:1", **ORDER_PAID}
    assert paid["description"] == "An order was paid"
    assert document["webhooks"]["order.refunded"]["post"]["deprecated"] is True
    assert document["webhooks"]["order.refunded"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["properties"]["data"] == {"type": "object"}
    assert {parameter["name"] for parameter in paid["parameters"]} == {
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "X-Webhook-Timestamp",
        "X-Webhook-Signature",
    }
    assert set(paid["responses"]) == {"2XX", "default"}


def test_the_api_document_webhook_is_the_delivery_body() -> None:
    [(name, item)] = api_webhooks().items()
    body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert name == "event"
    assert set(body["properties"]) == {"id", "type", "timestamp", "data"}
    assert body["properties"]["data"]["type"] == "object"
