"""DynamoDB stream event sources, played as Lambda plays them.

Per event source: the stream's records read from its StartingPosition, only those that match one of
its FilterCriteria patterns (Lambda drops the others unbilled), gathered up to BatchSize for up to
MaximumBatchingWindowInSeconds, then one invocation. A failed invocation blocks the shard: the
same batch is retried (with backoff) until it succeeds or MaximumRetryAttempts is spent, as Lambda
does for streams; records are never skipped past a failure otherwise.

Filter patterns: what the template uses is played (nested objects, lists of exact values); a
pattern with content filters (prefix, numeric, exists, ...) is refused when the source is read, so
nothing matches differently here than in AWS without saying so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import StreamSourceSpec
from herald_local.host.loops import BackgroundLoop

log = logging.getLogger(__name__)

# GetRecords returns at most 1 000 records a call; an empty stream is read again after this.
_RECORDS_PER_CALL = 1000
_IDLE_SECONDS = 0.25
_RETRY_SECONDS = (1, 2, 4, 8, 16, 30)

Invoke = Callable[[dict[str, Any]], Invocation]


class UnsupportedPattern(ValueError):
    """A filter pattern this runtime does not play."""


def check_pattern(pattern: Any, path: str = "") -> None:
    """Refuses patterns other than nested objects whose leaves are lists of exact values."""
    if not isinstance(pattern, Mapping):
        raise UnsupportedPattern(f"filter pattern {path or '(root)'}: an object was expected")
    for key, value in pattern.items():
        where = f"{path}.{key}" if path else key
        if isinstance(value, Mapping):
            check_pattern(value, where)
        elif not isinstance(value, list) or any(isinstance(each, (Mapping, list)) for each in value):
            raise UnsupportedPattern(
                f"filter pattern {where}: only lists of exact values are played locally, not {value!r}"
            )


def matches(pattern: Mapping[str, Any], event: Any) -> bool:
    """Whether ``event`` has, for every key of the pattern, a value the pattern lists."""
    if not isinstance(event, Mapping):
        return False
    for key, wanted in pattern.items():
        if key not in event:
            return False
        value = event[key]
        if isinstance(wanted, Mapping):
            if not matches(wanted, value):
                return False
        elif value not in wanted:
            return False
    return True


class StreamReader:
    """One stream event source's records, read in order: the shard iterators of its stream (moto
    has one shard per stream), each kept from read to read."""

    def __init__(self, source: StreamSourceSpec, streams: Any, region: str) -> None:
        for pattern in source.filters:
            check_pattern(pattern)
        self.source = source
        self._streams = streams
        self._region = region
        self._iterators: dict[str, str | None] = {}

    def read(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` new records that pass the filters, shaped as Lambda's event records."""
        if not self._iterators:
            self._open()
        found: list[dict[str, Any]] = []
        for shard in list(self._iterators):
            while self._iterators[shard] is not None and len(found) < limit:
                page = self._streams.get_records(
                    ShardIterator=self._iterators[shard], Limit=_RECORDS_PER_CALL
                )
                self._iterators[shard] = page.get("NextShardIterator")
                records = page.get("Records", [])
                found += [self._event_record(record) for record in records if self._wanted(record)]
                if not records:
                    break
        return found

    def _open(self) -> None:
        stream = self._streams.describe_stream(StreamArn=self.source.stream_arn)["StreamDescription"]
        for shard in stream.get("Shards", []):
            self._iterators[shard["ShardId"]] = self._streams.get_shard_iterator(
                StreamArn=self.source.stream_arn,
                ShardId=shard["ShardId"],
                ShardIteratorType=self.source.starting_position,
            )["ShardIterator"]

    def _wanted(self, record: Mapping[str, Any]) -> bool:
        return not self.source.filters or any(matches(pattern, record) for pattern in self.source.filters)

    def _event_record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        stream = dict(record["dynamodb"])
        created = stream.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):  # boto3 parses it; Lambda's event carries epoch seconds
            stream["ApproximateCreationDateTime"] = created.timestamp()
        return {
            **record,
            "dynamodb": stream,
            "awsRegion": self._region,
            "eventSourceARN": self.source.stream_arn,
        }


class StreamPoller(BackgroundLoop):
    """A reading thread per stream event source; one batch in flight at a time (one shard)."""

    def __init__(self, source: StreamSourceSpec, streams: Any, invoke: Invoke, region: str) -> None:
        super().__init__(f"{source.logical_id}-poller", join_seconds=5)
        self.source = source
        self._reader = StreamReader(source, streams, region)
        self._invoke = invoke
        self._pending: list[dict[str, Any]] = []

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                batch = self._next_batch()
                if batch:
                    self._deliver(batch)
                else:
                    self._stop.wait(_IDLE_SECONDS)
            except Exception:  # noqa: BLE001 - moto down or stopping; the loop decides
                if not self._stop.is_set():
                    log.exception("%s: reading %s failed", self.source.logical_id, self.source.stream_arn)
                    self._stop.wait(1)

    def _next_batch(self) -> list[dict[str, Any]]:
        """What is waiting, and for up to the batching window after the first record, more."""
        size = self.source.batch_size
        self._pending += self._reader.read(size - len(self._pending))
        deadline = time.monotonic() + self.source.batching_window_seconds
        while self._pending and len(self._pending) < size and time.monotonic() < deadline:
            if self._stop.wait(_IDLE_SECONDS):
                break
            self._pending += self._reader.read(size - len(self._pending))
        batch, self._pending = self._pending[:size], self._pending[size:]
        return batch

    def _deliver(self, batch: list[dict[str, Any]]) -> None:
        """Invokes until the batch succeeds, its retries are spent, or the stack stops."""
        attempt = 0
        while not self._stop.is_set():
            if self._succeeded(batch):
                return
            if 0 <= self.source.max_retry_attempts <= attempt:
                log.error(
                    "%s: a batch of %d records failed %d retries; it is skipped",
                    self.source.logical_id,
                    len(batch),
                    attempt,
                )
                return
            self._stop.wait(_RETRY_SECONDS[min(attempt, len(_RETRY_SECONDS) - 1)])
            attempt += 1

    def _succeeded(self, batch: list[dict[str, Any]]) -> bool:
        try:
            invocation = self._invoke({"Records": batch})
        except FunctionUnavailable as exc:
            log.error("%s: %s; the batch is retried", self.source.logical_id, exc)
            return False
        if invocation.failed:
            log.error(
                "%s: the batch failed (%s); it is retried", self.source.logical_id, invocation.function_error
            )
        return not invocation.failed
