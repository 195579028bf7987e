"""Sending job messages to the priority queues of their channel, or to its FIFO queue for jobs with an
ordering key (SQS), and the messages' JSON, which the workers decode."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from herald.adapters.store.conversions import request_document, request_from_document
from herald.domain.backoff import MAX_DELAY_SECONDS
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import DEFAULT_PRIORITY, Channel, QueuePriority
from herald.domain.ordering import ordering_group

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_sqs.type_defs import SendMessageBatchRequestEntryTypeDef

# Inline requests spare the worker a read; larger ones (long emails) are read from the table.
# SQS accepts 256 KiB per message by default; leave room for the envelope fields.
INLINE_PAYLOAD_LIMIT = 200 * 1024
MESSAGE_VERSION = 1
_BATCH_ENTRIES = 10


def encode_message(message: JobMessage) -> str:
    body: dict[str, Any] = {
        "v": MESSAGE_VERSION,
        "jobId": message.job_id,
        "tenantId": message.tenant_id,
        "type": message.channel.value,
        "plan": message.plan,
        "seenAttempts": message.seen_attempts,
        "priority": message.priority,
    }
    optional = {
        "createdAt": message.created_at,
        "correlationId": message.correlation_id,
        "sendAt": message.send_at,
        "orderingKey": message.ordering_key,
        "rateSlot": message.rate_slot,
    }
    body |= {name: value for name, value in optional.items() if value is not None}
    if message.request is not None:
        document = request_document(message.request)
        # Measured as the message carries it (JSON with ASCII escapes), which is what SQS counts.
        if len(json.dumps(document, separators=(",", ":"))) <= INLINE_PAYLOAD_LIMIT:
            body["payload"] = document
    return json.dumps(body, separators=(",", ":"))


def decode_message(raw: str) -> JobMessage:
    """Raises ValueError, KeyError or TypeError for a body no worker can use."""
    body = json.loads(raw)
    if not isinstance(body, dict):
        raise ValueError("a job message must be a JSON object")
    if body.get("v") != MESSAGE_VERSION:
        raise ValueError(f"unsupported job message version {body.get('v')!r}")
    channel = Channel(body["type"])
    document = body.get("payload")
    if document is not None and not isinstance(document, dict):
        raise ValueError("a job message payload must be a JSON object")
    created_at = body.get("createdAt")
    correlation = body.get("correlationId")
    send_at = body.get("sendAt")
    ordering_key = body.get("orderingKey")
    rate_slot = body.get("rateSlot")
    return JobMessage(
        job_id=str(body["jobId"]),
        tenant_id=str(body["tenantId"]),
        channel=channel,
        plan=str(body["plan"]),
        seen_attempts=int(body["seenAttempts"]),
        request=request_from_document(channel, document) if document is not None else None,
        priority=int(body.get("priority", DEFAULT_PRIORITY)),
        created_at=str(created_at) if created_at is not None else None,
        correlation_id=str(correlation) if correlation is not None else None,
        send_at=str(send_at) if send_at is not None else None,
        ordering_key=str(ordering_key) if ordering_key is not None else None,
        rate_slot=int(rate_slot) if rate_slot is not None else None,
    )


class SqsJobQueue:
    def __init__(
        self,
        queue_urls: Mapping[tuple[Channel, QueuePriority], str],
        sqs: Callable[[], SQSClient],
        ordered_urls: Mapping[Channel, str] | None = None,
    ) -> None:
        self._queue_urls = queue_urls
        self._ordered_urls = ordered_urls or {}
        self._sqs = sqs

    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None:
        if message.ordering_key is not None:
            self._enqueue_ordered(message, message.ordering_key)
            return
        url = self._queue_urls[(message.channel, priority)]
        try:
            self._sqs().send_message(
                QueueUrl=url,
                MessageBody=encode_message(message),
                # SQS fair queues: one tenant's backlog does not delay the others'.
                MessageGroupId=message.tenant_id,
                DelaySeconds=min(max(delay_seconds, 0), MAX_DELAY_SECONDS),
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(
                f"queue {message.channel.value}-{priority.value} unavailable: {exc}"
            ) from exc

    def enqueue_batch(self, messages: Sequence[JobMessage], priority: QueuePriority) -> None:
        """Unkeyed messages of one channel, ten per SendMessageBatch; DependencyError if SQS refused
        any of them (sending all again is safe: a job queued twice is claimed once)."""
        bodies = [(message.tenant_id, encode_message(message)) for message in messages]
        if not messages:
            return
        channel = messages[0].channel
        send_batches(
            self._sqs, self._queue_urls[(channel, priority)], bodies, f"{channel.value}-{priority.value}"
        )

    def _enqueue_ordered(self, message: JobMessage, key: str) -> None:
        """A keyed job joins its key's message group, behind the key's earlier jobs, whatever its
        priority. FIFO queues take no per-message delay: keyed jobs are only queued when due (a
        retry holds its message in flight instead of sending a new one)."""
        url = self._ordered_urls.get(message.channel)
        if url is None:
            raise DependencyError(f"no ordered queue for {message.channel.value} jobs")
        try:
            self._sqs().send_message(
                QueueUrl=url,
                MessageBody=encode_message(message),
                MessageGroupId=ordering_group(message.tenant_id, key),
                # The job and its attempt: a repeated send within SQS's 5 minutes is dropped, while a
                # manual retry's new message is not.
                MessageDeduplicationId=f"{message.job_id}.{message.seen_attempts}",
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"queue {message.channel.value}-ordered unavailable: {exc}") from exc


def send_batches(
    sqs: Callable[[], SQSClient], url: str, bodies: Sequence[tuple[str, str]], name: str
) -> None:
    """Send (message group, body) pairs to ``url`` ten at a time (SQS's batch size); DependencyError
    naming the queue if a call or any entry failed."""
    for start in range(0, len(bodies), _BATCH_ENTRIES):
        chunk = bodies[start : start + _BATCH_ENTRIES]
        entries: list[SendMessageBatchRequestEntryTypeDef] = [
            {"Id": str(number), "MessageBody": body, "MessageGroupId": group}
            for number, (group, body) in enumerate(chunk)
        ]
        try:
            failed = sqs().send_message_batch(QueueUrl=url, Entries=entries).get("Failed", [])
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"queue {name} unavailable: {exc}") from exc
        if failed:
            raise DependencyError(f"queue {name} refused {len(failed)} messages: {failed[0].get('Message')}")


class SqsMessageReturns:
    """Puts received messages back at once (visibility timeout 0), or after a while, by queue name."""

    def __init__(self, queue_urls: Iterable[str], sqs: Callable[[], SQSClient]) -> None:
        self._urls = {url.rstrip("/").rsplit("/", 1)[-1]: url for url in queue_urls}
        self._sqs = sqs

    def return_now(self, messages: Sequence[tuple[str, str]]) -> None:
        for queue_name, receipt_handle in messages:
            self.hold(queue_name, receipt_handle, 0)

    def hold(self, queue_name: str, receipt_handle: str, seconds: int) -> None:
        try:
            self._sqs().change_message_visibility(
                QueueUrl=self._urls[queue_name],
                ReceiptHandle=receipt_handle,
                VisibilityTimeout=min(max(seconds, 0), MAX_DELAY_SECONDS),
            )
        except (ClientError, BotoCoreError, KeyError) as exc:
            raise DependencyError(f"queue {queue_name} unavailable: {type(exc).__name__}") from exc


class SqsQueueDepths:
    """How many messages wait in a queue (the alert message's depth, the sweeper's backlog check)."""

    def __init__(self, sqs: Callable[[], SQSClient]) -> None:
        self._sqs = sqs

    def visible(self, queue_url: str) -> int:
        try:
            attributes = self._sqs().get_queue_attributes(
                QueueUrl=queue_url, AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(
                f"queue {queue_url.rsplit('/', 1)[-1]} unavailable: {type(exc).__name__}"
            ) from exc
        return int(attributes.get("ApproximateNumberOfMessages", 0))
