"""bench.table_meter against the table template.yaml creates in moto: writes billed from the items as
stored before and after each request, reads from the items read, whichever client makes the call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from bench.rig import table_schemas
from bench.table_meter import TableMeter
from herald_harness.in_moto import client, herald_in_moto
from herald_local.aws.sdk_calls import observing
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root

PADDING = "x" * 1400  # with the keys, an item of about 1.5 KB


@pytest.fixture
def meter(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TableMeter, str]]:
    with herald_in_moto(monkeypatch):
        schemas = table_schemas(load_template(project_root() / "template.yaml"))
        (table,) = schemas
        yield TableMeter(schemas, client("dynamodb")), table


def _key(job: str) -> dict[str, Any]:
    return {"pk": {"S": f"JOB#{job}"}, "sk": {"S": "STATE"}}


def test_given_a_1_5_kb_item_when_put_then_2_write_units_and_no_index_entry(
    meter: tuple[TableMeter, str],
) -> None:
    table_meter, table = meter
    with observing(table_meter):
        client("dynamodb").put_item(TableName=table, Item={**_key("a1"), "pad": {"S": PADDING}})

    (write,) = table_meter.writes
    assert (write.request, write.item, write.size_before) == ("PutItem", "JOB#* STATE", 0)
    assert (write.charge.table_units, write.charge.index_units) == (2, 0)


def test_given_an_item_when_an_update_gives_it_the_index_keys_then_the_index_takes_one_write(
    meter: tuple[TableMeter, str],
) -> None:
    table_meter, table = meter
    dynamodb = client("dynamodb")
    dynamodb.put_item(TableName=table, Item={**_key("b1"), "pad": {"S": PADDING}})

    with observing(table_meter):
        dynamodb.update_item(
            TableName=table,
            Key=_key("b1"),
            UpdateExpression="SET gsi1pk = :p, gsi1sk = :s REMOVE #pad",
            ExpressionAttributeNames={"#pad": "pad"},
            ExpressionAttributeValues={":p": {"S": "JOBS#t"}, ":s": {"S": "2026#B"}},
        )

    (write,) = table_meter.writes
    assert write.size_before > 1024 > write.size_after
    assert (write.charge.table_units, write.charge.index_units) == (2, 1)  # the larger of before and after


def test_given_a_put_whose_condition_fails_then_it_is_billed_on_the_existing_item(
    meter: tuple[TableMeter, str],
) -> None:
    table_meter, table = meter
    dynamodb = client("dynamodb")
    dynamodb.put_item(TableName=table, Item={**_key("c1"), "pad": {"S": PADDING}})

    with observing(table_meter), pytest.raises(ClientError):
        dynamodb.put_item(TableName=table, Item=_key("c1"), ConditionExpression="attribute_not_exists(pk)")

    (write,) = table_meter.writes
    assert not write.applied
    assert (write.charge.table_units, write.charge.index_units) == (2, 0)


def test_a_transaction_bills_every_item_it_names_twice(meter: tuple[TableMeter, str]) -> None:
    table_meter, table = meter
    with observing(table_meter):
        client("dynamodb").transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": table,
                        "Item": {**_key("d1"), "gsi1pk": {"S": "p"}, "gsi1sk": {"S": "s"}},
                    }
                },
                {
                    "Update": {
                        "TableName": table,
                        "Key": _key("e1"),
                        "UpdateExpression": "SET n = :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
            ]
        )

    assert [(w.action, w.charge.table_units, w.charge.index_units) for w in table_meter.writes] == [
        ("Put", 2, 1),
        ("Update", 2, 0),
    ]


def test_a_query_is_billed_on_the_items_it_read_not_on_those_its_filter_kept(
    meter: tuple[TableMeter, str],
) -> None:
    table_meter, table = meter
    dynamodb = client("dynamodb")
    for sk in ("1", "2", "3"):
        dynamodb.put_item(TableName=table, Item={"pk": {"S": "Q"}, "sk": {"S": sk}, "pad": {"S": PADDING}})

    with observing(table_meter):
        answer = dynamodb.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            FilterExpression="#pad = :nothing",
            ExpressionAttributeNames={"#pad": "pad"},
            ExpressionAttributeValues={":pk": {"S": "Q"}, ":nothing": {"S": "-"}},
        )

    assert answer["Items"] == []
    (read,) = table_meter.reads
    assert read.size > 3 * 1400
    assert read.units == 1.0  # 4.3 KB rounds up to 2 units of 4 KB, eventually consistent


def test_a_get_item_of_some_attributes_is_billed_on_the_whole_item(meter: tuple[TableMeter, str]) -> None:
    table_meter, table = meter
    dynamodb = client("dynamodb")
    dynamodb.put_item(TableName=table, Item={**_key("f1"), "pad": {"S": "x" * 5000}})

    with observing(table_meter):
        answer = dynamodb.get_item(TableName=table, Key=_key("f1"), ProjectionExpression="pk")

    assert answer["Item"] == {"pk": {"S": "JOB#f1"}}
    (read,) = table_meter.reads
    assert read.size > 5000
    assert read.units == 1.0  # two started 4 KB blocks, eventually consistent
