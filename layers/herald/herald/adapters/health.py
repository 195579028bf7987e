"""GET /health: can this function reach its table and its queues?"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException

from herald.adapters.store.table import Table, response_code

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


class HealthCheck:
    def __init__(self, table: Table, queue_urls: Sequence[str], sqs: Callable[[], SQSClient]) -> None:
        self._table_items = table.item
        self._queue_urls = queue_urls
        self._sqs = sqs

    def __call__(self) -> tuple[bool, dict[str, str]]:
        checks = {"table": self._table(), "queues": self._queues()}
        return all(value == "ok" for value in checks.values()), checks

    def _table(self) -> str:
        try:
            self._table_items.describe_table()
        except PynamoDBException as exc:
            return f"unavailable ({response_code(exc)})"
        return "ok"

    def _queues(self) -> str:
        for url in self._queue_urls:
            try:
                self._sqs().get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
            except (ClientError, BotoCoreError) as exc:
                return f"unavailable ({url.rsplit('/', 1)[-1]}: {type(exc).__name__})"
        return "ok"
