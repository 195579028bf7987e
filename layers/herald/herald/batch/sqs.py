"""The SQS side of the workers: a batch in, partial failures out (Powertools batch processing).

A record that raises is reported in ``batchItemFailures`` and comes back after the visibility
timeout; records the invocation has no time left for are reported too, without being touched. The
day counts of the jobs a batch finishes are kept from the table's stream (TallyFunction), not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.domain.dead_letters import UnreadableMessage
from herald.domain.errors import DependencyError
from herald.domain.job_records import JobMessage
from herald.observability import logger, metrics
from herald.services.delivery import HOLDING, DeliveryEngine, Handled
from herald.services.ports.jobs import DeadLetters, MessageReturns
from herald.services.ports.platform import CacheStats


class OutOfTime(Exception):
    """Not started: too little time left in this invocation; SQS will deliver it again."""


class HeldInFlight(Exception):
    """A keyed job's message stays in flight (its retry's delay, or the rest of its wait): reported
    as a failure, so that it is not deleted, with its visibility set to when it is due again."""


class Worker(msgspec.Struct, frozen=True):
    """What a worker function's batches are handled with."""

    engine: DeliveryEngine
    dead_letters: DeadLetters
    returns: MessageReturns
    # A record's body as a job message; raises ValueError, KeyError or TypeError for one no worker
    # can use (the queue adapter's codec: this edge never imports adapters).
    decode: Callable[[str], JobMessage]
    # A record is only started with this much time left: its attempt (a full provider pass, or one
    # webhook exchange) must finish before Lambda stops the invocation.
    record_budget_millis: int
    key_cache: CacheStats | None = None


def process_batch(event: dict[str, Any], context: LambdaContext, worker: Worker) -> dict[str, Any]:
    # A batch whose every record failed (or was skipped for time) is reported like any other:
    # raising would return the same messages to the queue, but as a failed invocation (an error in
    # the function's metrics and alarms) and with a stack trace for what is often just a timeout.
    processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
    engine, dead_letters, key_cache = worker.engine, worker.dead_letters, worker.key_cache
    not_started: list[SQSRecord] = []

    def handle(record: SQSRecord) -> str:
        if context.get_remaining_time_in_millis() < worker.record_budget_millis:
            not_started.append(record)
            raise OutOfTime(record.message_id)
        message = _parse(record, worker.decode, dead_letters)
        if message is None:
            return "malformed"
        # Every line about this record names its job and tenant, and carries the id of the request
        # that queued the job (the API's request id), so one search finds the job's whole story.
        logger.append_keys(job_id=message.job_id, tenant_id=message.tenant_id)
        logger.set_correlation_id(message.correlation_id or record.message_id)
        try:
            handled: Handled = engine.handle(message)
            logger.info("job handled", extra=_handled_line(handled))
            if handled.result == HOLDING:
                _hold(worker.returns, record, handled.delay_seconds or 0)
        except HeldInFlight:
            raise
        except Exception:
            # Reported as a batch item failure (the message returns); logged here, or nowhere.
            logger.exception("job message failed")
            raise
        finally:
            logger.remove_keys(["job_id", "tenant_id"])
            logger.set_correlation_id(None)
        return handled.result

    before = (key_cache.hits, key_cache.misses) if key_cache is not None else (0, 0)
    response: dict[str, Any] = dict(
        process_partial_response(event=event, record_handler=handle, processor=processor, context=context)
    )
    _return_now(worker.returns, not_started)
    if key_cache is not None:
        # The data key cache's hit rate, observable in CloudWatch: misses are KMS Decrypt calls.
        metrics.add_metric(name="DataKeyCacheHits", unit="Count", value=key_cache.hits - before[0])
        metrics.add_metric(name="DataKeyCacheMisses", unit="Count", value=key_cache.misses - before[1])
    return response


def _handled_line(handled: Handled) -> dict[str, Any]:
    """What the "job handled" line says; when the message comes back later (a retry's backoff, a
    deferral, a hold, a scheduled job's early message), also in how many seconds, so an operator
    sees each retry's delay."""
    line: dict[str, Any] = {"result": handled.result, "attempt": handled.attempt}
    if handled.delay_seconds is not None:
        line["delay_seconds"] = handled.delay_seconds
    return line


def _return_now(returns: MessageReturns, records: list[SQSRecord]) -> None:
    """Messages this invocation had no time to start go back to their queue at once, instead of
    waiting out the visibility timeout (minutes) behind a slow batch; if that fails they still
    come back after it."""
    if not records:
        return
    try:
        returns.return_now(
            [(record.event_source_arn.rsplit(":", 1)[-1], record.receipt_handle) for record in records]
        )
    except DependencyError as exc:
        logger.warning(
            "could not return unstarted messages early", extra={"count": len(records), "reason": str(exc)}
        )


def _hold(returns: MessageReturns, record: SQSRecord, seconds: int) -> None:
    try:
        returns.hold(record.event_source_arn.rsplit(":", 1)[-1], record.receipt_handle, seconds)
    except DependencyError as exc:
        # It comes back after the queue's visibility timeout instead: later, still in order.
        logger.warning("could not hold a keyed job's message", extra={"reason": str(exc)})
    raise HeldInFlight(record.message_id)


def _parse(
    record: SQSRecord, decode: Callable[[str], JobMessage], dead_letters: DeadLetters
) -> JobMessage | None:
    """A message no worker can read goes straight to the operator instead of looping."""
    try:
        return decode(record.body)
    except (ValueError, KeyError, TypeError) as exc:
        logger.error("malformed job message", extra={"message_id": record.message_id, "reason": str(exc)})
        dead_letters.send(UnreadableMessage(record.message_id, f"malformed job message: {exc}", record.body))
        return None
