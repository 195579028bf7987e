"""The local SQS pollers serve a queue's tenants fairly, as SQS fair queues do: one tenant's backlog
does not hold back the messages of the others."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from herald_local.awslambda.functions import Invocation
from herald_local.cloudformation.topology import QueueSourceSpec
from herald_local.event_sources.pollers import QueuePoller, fair_order

WAIT_SECONDS = 10.0


def _message(body: str, group: str | None) -> dict[str, Any]:
    attributes = {"ApproximateReceiveCount": "1"} | ({"MessageGroupId": group} if group else {})
    return {
        "MessageId": f"id-{body}",
        "ReceiptHandle": f"rh-{body}",
        "Body": body,
        "MD5OfBody": "",
        "Attributes": attributes,
    }


def _bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [message["Body"] for message in messages]


def test_given_one_tenants_backlog_then_the_others_are_served_in_turn_with_it() -> None:
    received = [_message(f"a{n}", "tenant-a") for n in range(4)]
    received += [_message("b0", "tenant-b"), _message("b1", "tenant-b"), _message("c0", "tenant-c")]

    assert _bodies(fair_order(received)) == ["a0", "b0", "c0", "a1", "b1", "a2", "a3"]


def test_given_messages_without_a_group_then_each_takes_its_own_turn() -> None:
    received = [
        _message("a0", "tenant-a"),
        _message("a1", "tenant-a"),
        _message("x", None),
        _message("y", None),
    ]

    assert _bodies(fair_order(received)) == ["a0", "x", "y", "a1"]


@dataclass
class FakeQueue:
    """Holds messages in the order sent and hands them out as moto does for a standard queue."""

    messages: list[dict[str, Any]]
    deleted: list[str] = field(default_factory=list)

    def receive_message(self, MaxNumberOfMessages: int, **_: Any) -> dict[str, Any]:  # noqa: N803 - boto3's names
        taken, self.messages = self.messages[:MaxNumberOfMessages], self.messages[MaxNumberOfMessages:]
        return {"Messages": taken} if taken else {}

    def delete_message_batch(self, Entries: list[dict[str, str]], **_: Any) -> dict[str, Any]:  # noqa: N803
        self.deleted += [entry["ReceiptHandle"] for entry in Entries]
        return {"Successful": Entries}


@dataclass
class RecordingFunction:
    batches: list[list[str]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    expected: int = 0
    # Sent to the queue while the first batch is being processed.
    arriving: list[dict[str, Any]] = field(default_factory=list)
    queue: FakeQueue | None = None

    def invoke(self, event: dict[str, Any]) -> Invocation:
        self.batches.append([record["body"] for record in event["Records"]])
        if self.queue is not None and len(self.batches) == 1:
            self.queue.messages += self.arriving
        if sum(map(len, self.batches)) >= self.expected:
            self.done.set()
        return Invocation("request", json.dumps({"batchItemFailures": []}).encode(), None)


def _serve(queue: FakeQueue, function: RecordingFunction) -> None:
    """Polls ``queue`` in batches of 5, one batch at a time, until ``function`` saw every message."""
    source = QueueSourceSpec("Source", "Worker", "arn:aws:sqs:us-east-1:1:q", 5, 0, 1, True)
    poller = QueuePoller(source, queue, "url", function.invoke, "us-east-1")
    poller.start()
    try:
        assert function.done.wait(WAIT_SECONDS)
    finally:
        poller.stop()


def test_given_a_backlog_sent_first_then_the_first_batch_already_holds_every_tenant() -> None:
    """Given 12 messages of tenant A sent before one each of B and C, When the poller serves the
    queue in batches of 5, one at a time, Then B and C are in the first batch, and every message
    is delivered once and deleted."""
    queue = FakeQueue(
        [_message(f"a{n}", "A") for n in range(12)] + [_message("b0", "B"), _message("c0", "C")]
    )
    function = RecordingFunction(expected=14)
    _serve(queue, function)

    assert function.batches[0] == ["a0", "b0", "c0", "a1", "a2"]
    assert all(len(batch) <= 5 for batch in function.batches)
    assert sorted(sum(function.batches, [])) == sorted(f"a{n}" for n in range(12)) + ["b0", "c0"]
    assert len(queue.deleted) == 14


def test_given_a_message_arriving_behind_a_backlog_then_it_is_served_in_the_next_batch() -> None:
    queue = FakeQueue([_message(f"a{n}", "A") for n in range(20)])
    function = RecordingFunction(expected=21, arriving=[_message("d0", "D")], queue=queue)
    _serve(queue, function)

    assert function.batches[:2] == [["a0", "a1", "a2", "a3", "a4"], ["a5", "d0", "a6", "a7", "a8"]]
