"""The local DynamoDB stream event sources: FilterCriteria as Lambda applies them, batches gathered
for the batching window, and a failed batch retried (never skipped) as Lambda does for streams."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from herald_local.awslambda.functions import Invocation
from herald_local.cloudformation.topology import StreamSourceSpec
from herald_local.event_sources.streams import StreamPoller, StreamReader, UnsupportedPattern, matches

STATUS_ONLY = {"eventName": ["INSERT", "MODIFY"], "dynamodb": {"Keys": {"sk": {"S": ["STATUS"]}}}}
WAIT_SECONDS = 10.0


def stream_record(sequence: int, sk: str = "STATUS", event: str = "MODIFY") -> dict[str, Any]:
    return {
        "eventID": str(sequence),
        "eventName": event,
        "eventSource": "aws:dynamodb",
        "dynamodb": {"Keys": {"pk": {"S": "JOB#t#j"}, "sk": {"S": sk}}, "SequenceNumber": str(sequence)},
    }


class FakeStream:
    """One shard; ``get_records`` hands out what was added since the iterator's position."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    def describe_stream(self, StreamArn: str) -> dict[str, Any]:  # noqa: N803
        return {"StreamDescription": {"StreamArn": StreamArn, "Shards": [{"ShardId": "shard-1"}]}}

    def get_shard_iterator(self, ShardIteratorType: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        start = 0 if ShardIteratorType == "TRIM_HORIZON" else len(self.records)
        return {"ShardIterator": str(start)}

    def get_records(self, ShardIterator: str, Limit: int) -> dict[str, Any]:  # noqa: N803
        start = int(ShardIterator)
        taken = self.records[start : start + Limit]
        return {"Records": taken, "NextShardIterator": str(start + len(taken))}


def source(filters: tuple[dict[str, Any], ...] = (STATUS_ONLY,), **changes: Any) -> StreamSourceSpec:
    settings: dict[str, Any] = {
        "logical_id": "TallyFunctionStatusChanges",
        "function": "TallyFunction",
        "stream_arn": "arn:aws:dynamodb:us-east-1:1:table/t/stream/label",
        "batch_size": 100,
        "batching_window_seconds": 0,
        "starting_position": "TRIM_HORIZON",
        "filters": filters,
        "max_retry_attempts": -1,
    }
    return StreamSourceSpec(**{**settings, **changes})


def test_a_pattern_passes_only_records_with_one_of_its_values_at_every_key() -> None:
    assert matches(STATUS_ONLY, stream_record(1))
    assert matches(STATUS_ONLY, stream_record(1, event="INSERT"))
    assert not matches(STATUS_ONLY, stream_record(1, event="REMOVE"))
    assert not matches(STATUS_ONLY, stream_record(1, sk="DAY#2026-12-01"))
    assert not matches(STATUS_ONLY, {"eventName": "MODIFY"})


def test_the_reader_hands_out_each_wanted_record_once_shaped_as_lambdas_event_records() -> None:
    stream = FakeStream([stream_record(1), stream_record(2, sk="JOB"), stream_record(3)])
    reader = StreamReader(source(), stream, "us-east-1")
    first = reader.read(100)
    assert [record["eventID"] for record in first] == ["1", "3"]
    assert first[0]["eventSourceARN"] == source().stream_arn
    assert first[0]["awsRegion"] == "us-east-1"
    assert reader.read(100) == []
    stream.records.append(stream_record(4))
    assert [record["eventID"] for record in reader.read(100)] == ["4"]


@pytest.mark.parametrize("pattern", [{"eventName": [{"prefix": "MOD"}]}, {"eventName": "MODIFY"}])
def test_a_pattern_the_runtime_does_not_play_is_refused_with_where_it_is(pattern: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedPattern, match="filter pattern eventName: only lists of exact values"):
        StreamReader(source((pattern,)), FakeStream([]), "us-east-1")


class FailingFirst:
    """Fails its first invocation, then records each batch it gets."""

    def __init__(self, expected: int) -> None:
        self.calls: list[list[str]] = []
        self.done = threading.Event()
        self._expected = expected

    def invoke(self, event: dict[str, Any]) -> Invocation:
        self.calls.append([record["eventID"] for record in event["Records"]])
        if len(self.calls) == self._expected:
            self.done.set()
        error = "Unhandled" if len(self.calls) == 1 else None
        return Invocation("request", b"null", error)


def test_a_failed_batch_is_retried_whole_before_anything_after_it() -> None:
    stream = FakeStream([stream_record(n) for n in range(3)])
    function = FailingFirst(expected=2)
    poller = StreamPoller(source(batch_size=2), stream, function.invoke, "us-east-1")
    poller.start()
    try:
        assert function.done.wait(WAIT_SECONDS)
    finally:
        poller.stop()
    assert function.calls[:2] == [["0", "1"], ["0", "1"]]
