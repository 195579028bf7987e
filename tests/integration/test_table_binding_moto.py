"""Stores are handed their table: two tables in one process (the tests, the benchmark) never see each
other's items, and nothing rebinds the item classes for the whole process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.store.models import HeraldItem, JobItem
from herald.adapters.store.table import Table, TableAddress
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.services.outcomes import TenantNotFound
from herald.services.tenants import TenantAdmin
from herald_harness.in_moto import REGION, HeraldInMoto, client, herald_in_moto
from tests.fakes.common import OPERATOR


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def twin_of(table: Table) -> Table:
    """A second table with the same keys and indexes (as another stage of Herald would have)."""
    dynamodb = client("dynamodb")
    described: dict[str, Any] = dynamodb.describe_table(TableName=table.address.name)["Table"]
    name = f"{table.address.name}-twin"
    dynamodb.create_table(
        TableName=name,
        KeySchema=described["KeySchema"],
        AttributeDefinitions=described["AttributeDefinitions"],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index["IndexName"],
                "KeySchema": index["KeySchema"],
                "Projection": index["Projection"],
            }
            for index in described["GlobalSecondaryIndexes"]
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return Table(TableAddress(name, region=REGION, endpoint=None, max_attempts=1))


def test_a_tenant_created_through_one_table_is_absent_from_the_other(herald: HeraldInMoto) -> None:
    first = herald.table
    second = twin_of(first)

    issued = TenantAdmin(DynamoTenantStore(first)).create("Acme", "ops@acme.test", "startup", OPERATOR)

    assert DynamoTenantStore(first).profile(issued.tenant_id).name == "Acme"
    with pytest.raises(TenantNotFound):
        DynamoTenantStore(second).profile(issued.tenant_id)
    listed = client("dynamodb").scan(TableName=second.address.name)["Items"]
    assert listed == []


def test_binding_a_table_leaves_the_item_classes_themselves_unbound(herald: HeraldInMoto) -> None:
    bound = herald.table[JobItem]

    assert bound.Meta.table_name == herald.table.address.name
    assert issubclass(bound, JobItem)
    assert JobItem.Meta.table_name == HeraldItem.Meta.table_name == "herald-unbound"
