"""Sending job messages to the priority queues of their channel, or to its FIFO queue for jobs with an
ordering key (SQS)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.backoff import MAX_DELAY_SECONDS
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel, QueuePriority
from herald.domain.ordering import ordering_group

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient


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
                MessageBody=message.to_json(),
                # SQS fair queues: one tenant's backlog does not delay the others'.
                MessageGroupId=message.tenant_id,
                DelaySeconds=min(max(delay_seconds, 0), MAX_DELAY_SECONDS),
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(
                f"queue {message.channel.value}-{priority.value} unavailable: {exc}"
            ) from exc

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
                MessageBody=message.to_json(),
                MessageGroupId=ordering_group(message.tenant_id, key),
                # The job and its attempt: a repeated send within SQS's 5 minutes is dropped, while a
                # manual retry's new message is not.
                MessageDeduplicationId=f"{message.job_id}.{message.seen_attempts}",
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"queue {message.channel.value}-ordered unavailable: {exc}") from exc


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
