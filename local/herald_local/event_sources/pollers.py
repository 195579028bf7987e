"""SQS event sources, played as Lambda's pollers play them.

Per event source: batches of up to BatchSize (gathered for up to MaximumBatchingWindowInSeconds),
at most MaximumConcurrency invocations at once, and after each invocation the records that
succeeded are deleted: with ReportBatchItemFailures all but those listed in ``batchItemFailures``
(an invalid answer fails the whole batch), without it all or nothing; a function error fails the
batch. Failed records are left alone: they come back after the visibility timeout and moto
redrives them to the dead-letter queue after maxReceiveCount, as SQS does.

Fair queues: moto hands out a standard queue's messages in the order they were sent, so one
tenant's backlog would delay every other tenant's messages behind it. SQS fair queues do not, for
messages sent with a ``MessageGroupId`` (the tenant). The poller plays that: it holds a window of
what the queue has (up to 100 messages, topped up before each batch) and serves it round-robin over
message groups, so each batch takes turns between the tenants in the window, and a tenant whose
message arrives behind another's backlog is served in the next batch.

FIFO queues: SQS (and moto) hand out a message group's next message only once the one before it
is deleted or visible again, and Lambda never runs two batches of one group at once. Holding a
window would break that (two of a group's messages received together would run side by side), so
the poller of a FIFO queue receives only the batch it is about to invoke, in the order received.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import QueueSourceSpec
from herald_local.host.loops import BackgroundLoop

log = logging.getLogger(__name__)

# Short long-polls keep Ctrl-C prompt; moto answers a long poll as soon as a message arrives.
RECEIVE_WAIT_SECONDS = 1
_SQS_MAX_MESSAGES = 10
# Messages held for fair serving; each stays invisible on the queue meanwhile (visibility timeout).
_WINDOW = 100
_EVENT_ATTRIBUTES = (
    "ApproximateReceiveCount",
    "SentTimestamp",
    "SenderId",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageGroupId",
    "MessageDeduplicationId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
)

Invoke = Callable[[dict[str, Any]], Invocation]


def _message_attribute(value: dict[str, Any]) -> dict[str, Any]:
    attribute: dict[str, Any] = {
        "stringListValues": [],
        "binaryListValues": [],
        "dataType": value["DataType"],
    }
    if "StringValue" in value:
        attribute["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        attribute["binaryValue"] = base64.b64encode(value["BinaryValue"]).decode()
    return attribute


def sqs_record(message: dict[str, Any], source: QueueSourceSpec, region: str) -> dict[str, Any]:
    """One record of the event Lambda sends for an SQS batch."""
    attributes = message.get("Attributes") or {}
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {name: attributes[name] for name in _EVENT_ATTRIBUTES if name in attributes},
        "messageAttributes": {
            name: _message_attribute(value)
            for name, value in (message.get("MessageAttributes") or {}).items()
        },
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": source.queue_arn,
        "awsRegion": region,
    }
    if "MD5OfMessageAttributes" in message:
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record


def fair_order(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` round-robin over their message groups (first seen, first served), each group's
    own messages in the order received; messages without a group each count as a group of one."""
    groups: dict[str, deque[dict[str, Any]]] = {}
    for message in messages:
        group = (message.get("Attributes") or {}).get("MessageGroupId") or f"no-group:{message['MessageId']}"
        groups.setdefault(group, deque()).append(message)
    ordered: list[dict[str, Any]] = []
    while groups:
        for group in list(groups):
            ordered.append(groups[group].popleft())
            if not groups[group]:
                del groups[group]
    return ordered


def _reported_failures(answer: Any, ids: list[str]) -> set[str] | None:
    """The ids a ReportBatchItemFailures answer lists as failed; None when the answer is invalid.

    As Lambda: no answer, an empty object or a null/empty list mean success; anything that is not an
    object, or an itemIdentifier that is missing, empty or not in the batch, fails the whole batch.
    """
    if answer is None:
        return set()
    if not isinstance(answer, dict):
        return None
    failures = answer.get("batchItemFailures") or []
    if not isinstance(failures, list):
        return None
    identifiers = [
        failure.get("itemIdentifier") if isinstance(failure, dict) else None for failure in failures
    ]
    if not all(isinstance(identifier, str) and identifier in ids for identifier in identifiers):
        return None
    return {str(identifier) for identifier in identifiers}


def succeeded_message_ids(
    records: list[dict[str, Any]], invocation: Invocation, report_batch_item_failures: bool
) -> list[str]:
    """The ids of the records Lambda deletes after this invocation."""
    ids = [record["messageId"] for record in records]
    if invocation.failed:
        return []
    if not report_batch_item_failures:
        return ids
    try:
        failed = _reported_failures(invocation.document(), ids)
    except ValueError:
        failed = None
    if failed is None:
        return []
    return [message_id for message_id in ids if message_id not in failed]


class QueuePoller(BackgroundLoop):
    """One event source: a receiving thread and up to MaximumConcurrency invocations in flight."""

    def __init__(
        self,
        source: QueueSourceSpec,
        sqs: Any,
        queue_url: str,
        invoke: Invoke,
        region: str,
        *,
        fair: bool = True,
    ) -> None:
        super().__init__(f"{source.logical_id}-poller", join_seconds=RECEIVE_WAIT_SECONDS + 5)
        self.source = source
        fifo = source.queue_name.endswith(".fifo")
        self._fair = fair and not fifo
        self._window = source.batch_size if fifo else _WINDOW
        self._sqs = sqs
        self._queue_url = queue_url
        self._invoke = invoke
        self._region = region
        self._slots = threading.Semaphore(source.max_concurrency)
        self._pending: deque[dict[str, Any]] = deque()  # received, fairly ordered, not yet invoked
        self._workers = ThreadPoolExecutor(source.max_concurrency, thread_name_prefix=source.logical_id)

    def stop(self) -> None:
        super().stop()
        self._workers.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self._slots.acquire(timeout=0.5):
                continue
            batch = self._next_batch()
            if not batch:
                self._slots.release()
                continue
            self._workers.submit(self._process, batch)

    def _next_batch(self) -> list[dict[str, Any]]:
        try:
            received = self._receive_window()
        except Exception:  # noqa: BLE001 - moto down or stopping; the loop decides
            received = []
            if not self._stop.is_set():
                log.exception("%s: receiving from %s failed", self.source.logical_id, self.source.queue_name)
                self._stop.wait(1)
        if received:
            waiting = [*self._pending, *received]
            self._pending = deque(fair_order(waiting) if self._fair else waiting)
        count = min(self.source.batch_size, len(self._pending))
        return [self._pending.popleft() for _ in range(count)]

    def _receive(self, count: int, wait_seconds: int) -> list[dict[str, Any]]:
        response = self._sqs.receive_message(
            QueueUrl=self._queue_url,
            MaxNumberOfMessages=min(count, _SQS_MAX_MESSAGES),
            WaitTimeSeconds=wait_seconds,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages: list[dict[str, Any]] = response.get("Messages", [])
        return messages

    def _receive_window(self) -> list[dict[str, Any]]:
        """What the queue holds beyond the messages already here, up to the window. With nothing
        here it long-polls; for MaximumBatchingWindowInSeconds it waits for more while the first
        batch is not full."""
        room = self._window - len(self._pending)
        if room <= 0:
            return []
        window = self._receive(room, 0 if self._pending else RECEIVE_WAIT_SECONDS)
        if not window:
            return window
        deadline = time.monotonic() + self.source.batching_window_seconds
        while len(window) < room and not self._stop.is_set():
            short = len(self._pending) + len(window) < self.source.batch_size
            waiting = short and time.monotonic() < deadline
            more = self._receive(room - len(window), RECEIVE_WAIT_SECONDS if waiting else 0)
            if not more and not waiting:
                break
            window += more
        return window

    def _process(self, messages: list[dict[str, Any]]) -> None:
        try:
            records = [sqs_record(message, self.source, self._region) for message in messages]
            try:
                invocation = self._invoke({"Records": records})
            except FunctionUnavailable as exc:
                log.error("%s: %s; the batch stays on the queue", self.source.logical_id, exc)
                return
            done = set(succeeded_message_ids(records, invocation, self.source.report_batch_item_failures))
            self._delete([m for m in messages if m["MessageId"] in done])
        except Exception:  # noqa: BLE001 - an executor would swallow it silently
            log.exception("%s: processing a batch failed", self.source.logical_id)
        finally:
            self._slots.release()

    def _delete(self, messages: list[dict[str, Any]]) -> None:
        for start in range(0, len(messages), _SQS_MAX_MESSAGES):
            chunk = messages[start : start + _SQS_MAX_MESSAGES]
            entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)]
            response = self._sqs.delete_message_batch(QueueUrl=self._queue_url, Entries=entries)
            for failure in response.get("Failed", []):
                log.error(
                    "%s: could not delete a message: %s", self.source.logical_id, failure.get("Message")
                )
