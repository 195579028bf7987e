"""WebhookWorker: delivers webhook jobs from the three webhook queues, signed and SSRF-guarded."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.batch.sqs import process_batch
from herald.composition import startup
from herald.composition.workers import webhook_worker
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_batch(event, context, webhook_worker())


startup.finish()
