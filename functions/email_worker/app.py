"""EmailWorker: delivers email jobs from the three email queues through the tenant's providers."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.batch.sqs import process_batch
from herald.composition import startup
from herald.composition.workers import email_worker
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_batch(event, context, email_worker())


startup.finish()
