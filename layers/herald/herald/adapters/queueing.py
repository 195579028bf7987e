"""Sending job messages to the priority queues of their channel (SQS)."""

from __future__ import annotations

from typing import Protocol

from botocore.exceptions import BotoCoreError, ClientError

from herald.adapters import aws_clients
from herald.domain.errors import DependencyError
from herald.domain.jobs import JobMessage
from herald.settings import QueuePriority, Settings

# SQS caps DelaySeconds at 15 minutes; longer backoffs are clamped to it.
MAX_DELAY_SECONDS = 900


class JobQueue(Protocol):
    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None: ...


class SqsJobQueue:
    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None:
        url = self._settings.queue_url(message.channel, priority)
        try:
            aws_clients.sqs().send_message(
                QueueUrl=url,
                MessageBody=message.to_json(),
                # SQS fair queues: one tenant's backlog does not delay the others'.
                MessageGroupId=message.tenant_id,
                DelaySeconds=min(max(delay_seconds, 0), MAX_DELAY_SECONDS),
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(
                f"queue {message.channel.value}-{priority.value} unavailable: {exc}"
            ) from exc
