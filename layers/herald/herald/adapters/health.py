"""GET /health: can this function reach its table and its queues?"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError
from pynamodb.exceptions import PynamoDBException

from herald.adapters import aws_clients
from herald.adapters.store.models import HeraldItem
from herald.settings import Settings


def check_health(settings: Settings) -> tuple[bool, dict[str, str]]:
    checks = {"table": _table(), "queues": _queues(settings)}
    return all(value == "ok" for value in checks.values()), checks


def _table() -> str:
    try:
        HeraldItem.describe_table()
    except PynamoDBException as exc:
        return f"unavailable ({exc.cause_response_code or type(exc).__name__})"
    return "ok"


def _queues(settings: Settings) -> str:
    for url in [*settings.queue_urls.values(), settings.dlq_url]:
        try:
            aws_clients.sqs().get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        except (ClientError, BotoCoreError) as exc:
            return f"unavailable ({url.rsplit('/', 1)[-1]}: {type(exc).__name__})"
    return "ok"
