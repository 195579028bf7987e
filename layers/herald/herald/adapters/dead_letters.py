"""The operator's view of undeliverable jobs: an enriched copy in the dead-letter queue."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


class SqsDeadLetters:
    def __init__(self, queue_url: str, sqs: Callable[[], SQSClient]) -> None:
        self._queue_url = queue_url
        self._sqs = sqs

    def send(self, record: dict[str, Any]) -> None:
        try:
            self._sqs().send_message(QueueUrl=self._queue_url, MessageBody=json.dumps(record, default=str))
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc
