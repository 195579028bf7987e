"""DynamoDB's billing arithmetic (bench.capacity), checked against the worked examples and rules of the
AWS DynamoDB Developer Guide: item sizes, write and read units, transactions, updates, indexes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from bench.capacity import (
    IndexSpec,
    Item,
    TableSchema,
    charge_write,
    item_size,
    number_size,
    read_units,
    value_size,
    write_units,
)
from herald.adapters.store.models import (
    LINK_SK,
    SEEN_SK,
    BillingLinkItem,
    InboundMarkItem,
    JobEventItem,
    SuppressionItem,
    billing_link_pk,
    event_sk,
    inbound_pk,
    job_pk,
    suppression_pk,
)
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root

KEYS = ("pk", "sk")
NO_INDEX = TableSchema(KEYS)
GSI_KEYS = ({"AttributeName": "gsi1pk", "KeyType": "HASH"}, {"AttributeName": "gsi1sk", "KeyType": "RANGE"})


def herald_table() -> Any:
    """The properties of template.yaml's one table."""
    template = load_template(project_root() / "template.yaml")
    (table,) = [res for res in template["Resources"].values() if res["Type"] == "AWS::DynamoDB::Table"]
    return table["Properties"]


def item_of_size(size: int, **extra: str) -> Item:
    """An item of exactly ``size`` bytes: its keys, ``extra`` strings and a padding string."""
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, **{name: {"S": value} for name, value in extra.items()}}
    padding = size - item_size(item) - len("pad")
    assert padding >= 0
    return {**item, "pad": {"S": "x" * padding}}


def schema_with(projection: Mapping[str, object]) -> TableSchema:
    return TableSchema.from_template(
        {
            "KeySchema": [{"AttributeName": "pk"}, {"AttributeName": "sk"}],
            "GlobalSecondaryIndexes": [
                {"IndexName": "gsi1", "KeySchema": GSI_KEYS, "Projection": projection}
            ],
        }
    )


# ---------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": "hello"}, 5),
        ({"S": "héllo"}, 6),  # UTF-8 bytes, not characters
        ({"B": b"\x00\x01\x02"}, 3),  # raw bytes, not the base64 on the wire
        ({"BOOL": True}, 1),
        ({"NULL": True}, 1),
        ({"L": []}, 3),  # an empty list or map is 3 bytes
        ({"M": {}}, 3),
        ({"L": [{"S": "a"}, {"S": "b"}]}, 3 + 2 * (1 + 1)),  # + 1 byte per element
        ({"M": {"ab": {"S": "c"}}}, 3 + 1 + 2 + 1),  # a map element also counts its name
        ({"SS": ["ab", "c"]}, 3),
    ],
)
def test_attribute_values_are_sized_by_the_documented_rules(value: dict[str, object], size: int) -> None:
    assert value_size(value) == size


@pytest.mark.parametrize(
    ("number", "size"),
    [("7", 2), ("12", 2), ("123", 3), ("12345", 4), ("1000000", 2), ("0.00123", 3), ("-42", 2), ("0", 2)],
)
def test_numbers_cost_one_byte_per_two_significant_digits_plus_one(number: str, size: int) -> None:
    assert number_size(number) == size


def test_an_items_size_adds_up_attribute_names_and_values() -> None:
    item: Item = {"pk": {"S": "JOB#1"}, "attempts": {"N": "3"}, "tags": {"L": [{"S": "a"}]}}

    assert item_size(item) == (2 + 5) + (8 + 2) + (4 + 3 + 1 + 1)


# ---------------------------------------------------------------- writes


def test_given_a_1_5_kb_item_when_put_then_it_costs_2_write_units() -> None:
    assert charge_write(NO_INDEX, None, item_of_size(1536)).total == 2
    assert charge_write(NO_INDEX, None, item_of_size(1024)).total == 1


def test_given_a_500_byte_item_when_written_in_a_transaction_then_it_costs_2_write_units() -> None:
    assert charge_write(NO_INDEX, None, item_of_size(500)).total == 1
    assert charge_write(NO_INDEX, None, item_of_size(500), transactional=True).total == 2


def test_given_a_3_5_kb_item_when_an_update_shrinks_it_to_1_kb_then_it_costs_4_units_of_the_larger() -> None:
    assert charge_write(NO_INDEX, item_of_size(3584), item_of_size(1024)).total == 4


def test_given_a_write_whose_condition_fails_then_it_still_costs_the_checked_items_units() -> None:
    existing = item_of_size(2500, gsi1pk="T", gsi1sk="1")

    assert charge_write(NO_INDEX, existing, existing, applied=False).total == 3
    assert charge_write(schema_with({"ProjectionType": "ALL"}), existing, existing, applied=False).total == 3
    assert charge_write(NO_INDEX, None, None, applied=False).total == 1


def test_a_delete_costs_the_deleted_item_and_a_missing_item_one_unit() -> None:
    assert charge_write(NO_INDEX, item_of_size(2100), None).total == 3
    assert charge_write(NO_INDEX, None, None).total == 1


def test_a_condition_check_in_a_transaction_costs_double_the_checked_item() -> None:
    checked = item_of_size(1500)

    assert charge_write(NO_INDEX, checked, checked, transactional=True).total == 4


@pytest.mark.parametrize(("size", "units"), [(0, 1), (1, 1), (1024, 1), (1025, 2), (400 * 1024, 400)])
def test_write_units_round_up_per_kb_with_a_minimum_of_one(size: int, units: int) -> None:
    assert write_units(size) == units


# ---------------------------------------------------------------- index writes


def test_given_a_2_5_kb_item_entering_an_index_then_all_projects_it_whole_and_keys_only_its_keys() -> None:
    item = item_of_size(2560, gsi1pk="TENANT#1", gsi1sk="2026-11-30#job")

    all_projection = charge_write(schema_with({"ProjectionType": "ALL"}), None, item)
    keys_only = charge_write(schema_with({"ProjectionType": "KEYS_ONLY"}), None, item)

    assert (all_projection.table_units, all_projection.index_units) == (3, 3)
    assert (keys_only.table_units, keys_only.index_units) == (3, 1)


def test_an_item_without_every_index_key_attribute_is_not_in_the_index() -> None:
    payload = item_of_size(1200, gsi1pk="TENANT#1")

    assert charge_write(schema_with({"ProjectionType": "ALL"}), None, payload).index_units == 0


def test_given_an_indexed_item_when_its_index_key_changes_then_the_index_takes_a_delete_and_a_put() -> None:
    before = item_of_size(600, gsi1pk="T", gsi1sk="2026-11-30#a", status="pending")
    after = {**before, "gsi1sk": {"S": "2026-12-01#a"}}

    assert charge_write(schema_with({"ProjectionType": "KEYS_ONLY"}), before, after).index_units == 2


def test_given_an_indexed_item_when_only_projected_attributes_change_then_one_index_write() -> None:
    before = item_of_size(600, gsi1pk="T", gsi1sk="1", status="pending")
    after = {**before, "status": {"S": "completed"}}
    include = {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["status"]}

    assert charge_write(schema_with({"ProjectionType": "ALL"}), before, after).index_units == 1
    assert charge_write(schema_with(include), before, after).index_units == 1
    assert charge_write(schema_with({"ProjectionType": "KEYS_ONLY"}), before, after).index_units == 0


def test_an_index_entry_is_sized_like_an_item_and_billed_on_the_larger_of_before_and_after() -> None:
    before = item_of_size(1000, gsi1pk="T", gsi1sk="1")
    after = {**before, "log": {"S": "y" * 1500}}

    assert charge_write(schema_with({"ProjectionType": "ALL"}), before, after).index_units == 3


def test_given_an_item_leaving_the_index_then_one_write_removes_its_entry() -> None:
    before = item_of_size(600, gsi1pk="T", gsi1sk="1")
    after = {name: value for name, value in before.items() if name != "gsi1sk"}

    assert charge_write(schema_with({"ProjectionType": "ALL"}), before, after).index_units == 1


def test_index_writes_are_not_doubled_by_a_transaction() -> None:
    item = item_of_size(700, gsi1pk="T", gsi1sk="1")

    charge = charge_write(schema_with({"ProjectionType": "ALL"}), None, item, transactional=True)

    assert (charge.table_units, charge.index_units) == (2, 1)


def test_every_index_of_herald_table_is_read_from_the_template_with_its_projection() -> None:
    table = herald_table()
    declared = table["GlobalSecondaryIndexes"]

    schema = TableSchema.from_template(table)

    assert schema.key_attributes == KEYS
    assert [(index.name, index.projection, sorted(index.non_key_attributes)) for index in schema.indexes] == [
        (
            index["IndexName"],
            index["Projection"]["ProjectionType"],
            sorted(index["Projection"].get("NonKeyAttributes", [])),
        )
        for index in declared
    ]


def test_an_index_without_a_projection_keeps_only_keys() -> None:
    index = IndexSpec.from_template({"IndexName": "x", "KeySchema": GSI_KEYS, "Projection": {}})

    assert index.projection == "KEYS_ONLY"


# ---------------------------------------------------------------- reads


@pytest.mark.parametrize(
    ("size", "consistent", "units"),
    [(0, True, 1.0), (4096, True, 1.0), (4097, True, 2.0), (4096, False, 0.5), (8200, False, 1.5)],
)
def test_reads_cost_a_unit_per_started_4_kb_and_half_when_eventually_consistent(
    size: int, consistent: bool, units: float
) -> None:
    assert read_units(size, consistent=consistent) == units


def test_a_transactional_read_costs_twice_a_strongly_consistent_one() -> None:
    assert read_units(5000, consistent=True, transactional=True) == 4.0


def test_a_query_adds_up_its_items_before_rounding() -> None:
    three_items = 3 * item_size(item_of_size(1500))

    assert read_units(three_items, consistent=True) == 2.0


# ---------------------------------------------------------------- Herald's inbound items


TENANT = "6f1c2b4e-8d2a-4c47-9a57-3f1e0c9b2d71"
JOB = "0b7f9a52-3f0e-4f56-9a3c-6a2f1e7d1c11"


def herald_schema() -> TableSchema:
    return TableSchema.from_template(herald_table())


def test_a_sendgrid_delivered_event_item_is_202_bytes_one_write_unit_and_no_index_entry() -> None:
    item = JobEventItem(
        job_pk(TENANT, JOB),
        event_sk("SENDGRID", "ZGVsaXZlcmVkLTEyMzQ1"),
        type="delivered",
        occurred_at="2026-11-30T08:00:00.000Z",
        provider="SENDGRID",
        expires_at=1798617600,
    ).serialize()
    # pk 2+77, sk 2+35, kind 4+5, type 4+9, occurredAt 10+24, provider 8+8, expiresAt 9+(8 digits: 5)
    assert item_size(item) == 79 + 37 + 9 + 13 + 34 + 16 + 14 == 202

    charge = charge_write(herald_schema(), None, item)
    retried = charge_write(herald_schema(), item, item, applied=False)  # the duplicate's failed put

    assert (charge.table_units, charge.index_units, retried.total) == (1, 0, 1)


def test_a_bounced_recipients_suppression_item_is_180_bytes_and_one_write_unit() -> None:
    address = "ada.lovelace@example.org"
    item = SuppressionItem(
        suppression_pk(TENANT),
        address,
        address=address,
        reason="bounced",
        source="RESEND",
        created_at="2026-11-30T07:59:59.003Z",
    ).serialize()
    # pk 2+48, sk 2+24, address 7+24, createdAt 9+24, kind 4+11, reason 6+7, source 6+6
    assert item_size(item) == 50 + 26 + 31 + 33 + 15 + 13 + 12 == 180
    assert charge_write(herald_schema(), None, item).total == 1


def test_a_payment_events_mark_and_billing_link_are_69_and_117_bytes_one_write_unit_each() -> None:
    event_id, subscription = "evt_" + "0" * 32, "d7a3c2f1-5b6e-4c8d-9a0b-1c2d3e4f5a6b"
    mark = InboundMarkItem(inbound_pk(f"POLAR#{event_id}"), SEEN_SK).serialize()
    link = BillingLinkItem(billing_link_pk("POLAR", subscription), LINK_SK, tenant_id=TENANT).serialize()

    # mark: pk 2+50, sk 2+4, kind 4+7; link: pk 2+50, sk 2+4, kind 4+11, tenantId 8+36
    assert (item_size(mark), item_size(link)) == (52 + 6 + 11, 52 + 6 + 15 + 44) == (69, 117)
    assert [charge_write(herald_schema(), None, item).total for item in (mark, link)] == [1, 1]
