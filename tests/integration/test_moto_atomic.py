"""The local stack's moto DynamoDB: a transaction is all or nothing, and one whose condition fails
costs no more than one that commits (moto's whole-table backup is never made); a Query reads only
its partition or its index key's items, never the whole table, and answers as moto does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models.table import Table

from herald_local.aws.atomic_dynamodb import make_dynamodb_atomic

TABLE = "atomic-test"
FILLER_ITEMS = 3000


def _key(pk: str, sk: str = "A") -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


@pytest.fixture
def patched_moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """moto in this process, with the local stack's patch applied: its DynamoDB client."""
    for variable in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    with mock_aws():
        make_dynamodb_atomic()
        yield boto3.client("dynamodb", region_name="us-east-1")


def _table_with_filler(
    client: Any, name: str, indexed_attributes: tuple[str, ...] = (), **indexes: Any
) -> Any:
    """A (pk, sk) table of ``FILLER_ITEMS`` items, with the string attributes its ``indexes`` (the
    ``GlobalSecondaryIndexes`` argument, if any) are keyed on: its resource, for more items."""
    client.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": attribute, "AttributeType": "S"}
            for attribute in ("pk", "sk", *indexed_attributes)
        ],
        BillingMode="PAY_PER_REQUEST",
        **indexes,
    )
    table = boto3.resource("dynamodb", region_name="us-east-1").Table(name)
    with table.batch_writer() as batch:
        for number in range(FILLER_ITEMS):
            batch.put_item(Item={"pk": f"filler-{number}", "sk": "A", "n": number})
    return table


@pytest.fixture
def dynamodb(patched_moto: Any) -> Any:
    """A table of a few thousand items."""
    client = patched_moto
    _table_with_filler(client, TABLE)
    client.put_item(TableName=TABLE, Item={**_key("counter"), "n": {"N": "1"}})
    client.put_item(TableName=TABLE, Item={**_key("doomed"), "n": {"N": "1"}})
    return client


@pytest.fixture
def table_copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every deep copy of a whole moto table, by table name; making one fails the request."""
    copies: list[str] = []

    def refuse_copy(table: Table, memo: dict[int, Any]) -> Table:
        copies.append(table.name)
        raise AssertionError("the whole table was copied")

    monkeypatch.setattr(Table, "__deepcopy__", refuse_copy, raising=False)
    return copies


def _counter_plus_one() -> dict[str, Any]:
    return {
        "Update": {
            "TableName": TABLE,
            "Key": _key("counter"),
            "UpdateExpression": "SET n = n + :one",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    }


def _new_item() -> dict[str, Any]:
    return {
        "Put": {
            "TableName": TABLE,
            "Item": {**_key("new"), "n": {"N": "7"}},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def _delete_doomed() -> dict[str, Any]:
    return {"Delete": {"TableName": TABLE, "Key": _key("doomed")}}


def _failing_check() -> dict[str, Any]:
    return {
        "ConditionCheck": {
            "TableName": TABLE,
            "Key": _key("filler-1"),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }


def _item(client: Any, pk: str) -> dict[str, Any] | None:
    item: dict[str, Any] | None = client.get_item(TableName=TABLE, Key=_key(pk)).get("Item")
    return item


def test_given_a_failing_condition_then_the_transaction_is_cancelled_without_copying_the_table(
    dynamodb: Any, table_copies: list[str]
) -> None:
    with pytest.raises(ClientError) as cancelled:
        dynamodb.transact_write_items(TransactItems=[_counter_plus_one(), _new_item(), _failing_check()])

    assert cancelled.value.response["Error"]["Code"] == "TransactionCanceledException"
    reasons = [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "None", "ConditionalCheckFailed"]
    assert table_copies == []


def test_given_a_failing_condition_then_no_write_of_the_transaction_remains(
    dynamodb: Any, table_copies: list[str]
) -> None:
    transaction = [_counter_plus_one(), _new_item(), _delete_doomed(), _failing_check()]

    with pytest.raises(ClientError, match="TransactionCanceledException"):
        dynamodb.transact_write_items(TransactItems=transaction)

    assert _item(dynamodb, "counter") == {**_key("counter"), "n": {"N": "1"}}
    assert _item(dynamodb, "new") is None
    assert _item(dynamodb, "doomed") == {**_key("doomed"), "n": {"N": "1"}}
    assert dynamodb.scan(TableName=TABLE, Select="COUNT")["Count"] == FILLER_ITEMS + 2


def test_given_the_same_item_twice_then_nothing_is_written(dynamodb: Any, table_copies: list[str]) -> None:
    with pytest.raises(ClientError, match="ValidationException"):
        dynamodb.transact_write_items(TransactItems=[_new_item(), _counter_plus_one(), _counter_plus_one()])

    assert _item(dynamodb, "new") is None
    assert _item(dynamodb, "counter") == {**_key("counter"), "n": {"N": "1"}}


def test_given_conditions_that_hold_then_every_write_commits(dynamodb: Any, table_copies: list[str]) -> None:
    dynamodb.transact_write_items(TransactItems=[_counter_plus_one(), _new_item(), _delete_doomed()])

    assert _item(dynamodb, "counter") == {**_key("counter"), "n": {"N": "2"}}
    assert _item(dynamodb, "new") == {**_key("new"), "n": {"N": "7"}}
    assert _item(dynamodb, "doomed") is None
    assert table_copies == []


# ---------------------------------------------------------------- queries read their candidates only

INDEXED = "indexed-test"


@pytest.fixture
def indexed(patched_moto: Any) -> Any:
    """Filler items, a partition of five, and two owners' items in an index (owner, sk)."""
    table = _table_with_filler(
        patched_moto,
        INDEXED,
        ("owner",),
        GlobalSecondaryIndexes=[
            {
                "IndexName": "byOwner",
                "KeySchema": [
                    {"AttributeName": "owner", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
    )
    with table.batch_writer() as batch:
        for number in (3, 1, 5, 2, 4):
            batch.put_item(Item={"pk": "partition", "sk": f"s{number}"})
        for number in range(12):
            batch.put_item(Item={"pk": f"ann-{number}", "sk": f"a{number:02d}", "owner": "ann"})
        batch.put_item(Item={"pk": "bob-0", "sk": "a05", "owner": "bob"})
    return patched_moto


@pytest.fixture
def whole_table_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every time moto lists (and sorts) all items of a table; a Query must not."""
    reads: list[str] = []
    listing = Table.all_items

    def all_items(table: Table) -> list[Any]:
        reads.append(table.name)
        return listing(table)

    monkeypatch.setattr(Table, "all_items", all_items)
    return reads


def _sort_keys(answer: dict[str, Any]) -> list[str]:
    return [item["sk"]["S"] for item in answer["Items"]]


def test_a_partition_query_reads_the_partition_only_and_answers_in_key_order(
    indexed: Any, whole_table_reads: list[str]
) -> None:
    query = {"TableName": INDEXED, "KeyConditionExpression": "pk = :pk"}
    values = {":pk": {"S": "partition"}}

    ascending = indexed.query(**query, ExpressionAttributeValues=values)
    descending = indexed.query(**query, ExpressionAttributeValues=values, ScanIndexForward=False)
    ranged = indexed.query(
        TableName=INDEXED,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
        ExpressionAttributeValues={**values, ":low": {"S": "s2"}, ":high": {"S": "s4"}},
    )
    missing = indexed.query(**query, ExpressionAttributeValues={":pk": {"S": "nobody"}})

    assert _sort_keys(ascending) == ["s1", "s2", "s3", "s4", "s5"]
    assert _sort_keys(descending) == ["s5", "s4", "s3", "s2", "s1"]
    assert _sort_keys(ranged) == ["s2", "s3", "s4"]
    assert missing["Items"] == []
    assert whole_table_reads == []


def test_an_index_query_reads_the_index_keys_items_only_and_pages_as_moto_does(
    indexed: Any, whole_table_reads: list[str]
) -> None:
    pages, start = [], None
    while True:
        page = indexed.query(
            TableName=INDEXED,
            IndexName="byOwner",
            KeyConditionExpression="#owner = :owner AND sk >= :from",
            ExpressionAttributeNames={"#owner": "owner"},
            ExpressionAttributeValues={":owner": {"S": "ann"}, ":from": {"S": "a03"}},
            Limit=4,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        pages.append(_sort_keys(page))
        start = page.get("LastEvaluatedKey")
        if start is None:
            break

    assert pages == [["a03", "a04", "a05", "a06"], ["a07", "a08", "a09", "a10"], ["a11"]]
    assert whole_table_reads == []
