"""The dead-letter queue: where the workers put the operator's copy of an undeliverable job, and what
the operator CLI reads, redrives and deletes."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from herald.adapters.store.conversions import request_document
from herald.domain.clock import iso
from herald.domain.dead_letters import FailedJobCopy, HeldMessage, UnreadableMessage
from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import ChangeMessageVisibilityBatchRequestEntryTypeDef

# What an operator sees of a message no worker could read (its start is enough to tell what it was).
UNREADABLE_BODY_CHARS = 4096


def letter_document(letter: FailedJobCopy | UnreadableMessage) -> dict[str, Any]:
    """The letter as the queue holds it (``herald.domain.dead_letters.read_dead_letter`` reads it)."""
    if isinstance(letter, UnreadableMessage):
        return {
            "error": letter.reason,
            "messageId": letter.message_id,
            "body": letter.body[:UNREADABLE_BODY_CHARS],
        }
    message, request = letter.message, letter.request
    return {
        "jobId": message.job_id,
        "tenantId": message.tenant_id,
        "type": message.channel.value,
        "priority": message.priority,
        "error": letter.reason,
        "attempts": letter.attempts,
        "maxAttempts": letter.max_attempts,
        "failedAt": letter.failed_at,
        "createdAt": message.created_at,
        # Custom headers often carry the receiver's credentials: the copy names them only.
        "payload": request_document(request.redacted()) if request is not None else None,
    }


class SqsDeadLetters:
    def __init__(self, queue_url: str, sqs: Callable[[], SQSClient]) -> None:
        self._queue_url = queue_url
        self._sqs = sqs

    def send(self, letter: FailedJobCopy | UnreadableMessage) -> None:
        try:
            self._sqs().send_message(
                QueueUrl=self._queue_url, MessageBody=json.dumps(letter_document(letter), default=str)
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc


class SqsDeadLetterInbox:
    """The operator's side of the dead-letter queues (the standard one, and the FIFO one the ordered
    queues give up into): messages are received and held invisible while the CLI looks at them, then
    deleted (redriven) or released at once for the next look."""

    def __init__(self, queue_urls: Sequence[str], sqs: Callable[[], SQSClient]) -> None:
        self._queue_urls = queue_urls
        self._sqs = sqs
        # Which queue each held message came from (by receipt handle), to delete or release it there.
        self._queue_of: dict[str, str] = {}

    def take(self, limit: int | None, hold_seconds: int) -> list[HeldMessage]:
        """Everything visible (up to ``limit``), queue after queue: receives until SQS has nothing
        more to hand out. A FIFO queue hands out a message group's later messages only once its
        earlier ones are gone, so a group may show in parts."""
        held: dict[str, HeldMessage] = {}
        for queue_url in self._queue_urls:
            self._take_from(queue_url, held, limit, hold_seconds)
        return list(held.values())

    def _take_from(
        self, queue_url: str, held: dict[str, HeldMessage], limit: int | None, hold_seconds: int
    ) -> None:
        while limit is None or len(held) < limit:
            try:
                batch = (
                    self._sqs()
                    .receive_message(
                        QueueUrl=queue_url,
                        MaxNumberOfMessages=10 if limit is None else min(10, limit - len(held)),
                        VisibilityTimeout=hold_seconds,
                        MessageSystemAttributeNames=["SentTimestamp"],
                    )
                    .get("Messages", [])
                )
            except (ClientError, BotoCoreError) as exc:
                self.release(list(held.values()))
                raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc
            if not batch:
                return
            for message in batch:
                sent = int(message.get("Attributes", {}).get("SentTimestamp", "0"))
                self._queue_of[message["ReceiptHandle"]] = queue_url
                held[message["MessageId"]] = HeldMessage(
                    message["MessageId"],
                    message["ReceiptHandle"],
                    message.get("Body", ""),
                    iso(datetime.fromtimestamp(sent / 1000, tz=UTC)),
                )

    def delete(self, message: HeldMessage) -> None:
        try:
            self._sqs().delete_message(
                QueueUrl=self._queue_of[message.receipt], ReceiptHandle=message.receipt
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc

    def release(self, messages: list[HeldMessage]) -> None:
        """Visible again now, for the next look (best effort: otherwise they return after the hold)."""
        by_queue: dict[str, list[HeldMessage]] = {}
        for message in messages:
            by_queue.setdefault(self._queue_of[message.receipt], []).append(message)
        for queue_url, held in by_queue.items():
            for start in range(0, len(held), 10):
                entries: list[ChangeMessageVisibilityBatchRequestEntryTypeDef] = [
                    {"Id": str(index), "ReceiptHandle": message.receipt, "VisibilityTimeout": 0}
                    for index, message in enumerate(held[start : start + 10])
                ]
                try:
                    self._sqs().change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)
                except (ClientError, BotoCoreError) as exc:
                    raise DependencyError(f"dead-letter queue unavailable: {type(exc).__name__}") from exc
