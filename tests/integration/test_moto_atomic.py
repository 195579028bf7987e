"""The local stack's moto DynamoDB: a transaction is all or nothing, and one whose condition fails
costs no more than one that commits (moto's whole-table backup is never made)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models.table import Table

from herald_local.moto_atomic import make_dynamodb_atomic

TABLE = "atomic-test"
FILLER_ITEMS = 3000


def _key(pk: str, sk: str = "A") -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A table of a few thousand items in moto, with the local stack's patch applied."""
    for variable in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(variable, raising=False)
    with mock_aws():
        make_dynamodb_atomic()
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        table = boto3.resource("dynamodb", region_name="us-east-1").Table(TABLE)
        with table.batch_writer() as batch:
            for number in range(FILLER_ITEMS):
                batch.put_item(Item={"pk": f"filler-{number}", "sk": "A", "n": number})
        client.put_item(TableName=TABLE, Item={**_key("counter"), "n": {"N": "1"}})
        client.put_item(TableName=TABLE, Item={**_key("doomed"), "n": {"N": "1"}})
        yield client


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
