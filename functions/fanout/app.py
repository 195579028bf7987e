"""FanoutFunction: each fan-out page (one SQS message) becomes the delivery jobs of its subscriptions."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.adapters.fanout_queue import decode_page
from herald.composition import startup
from herald.composition.fanout import fanout_worker
from herald.observability import logger, metrics, traced

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def _page(record: SQSRecord) -> None:
    # A body that is no page fails here on every receive and reaches the dead-letter queue by its
    # redrive policy, where the operator sees it (nothing else could make it readable).
    page = decode_page(record.body)
    logger.append_keys(event_id=page.event_id, tenant_id=page.tenant_id)
    logger.set_correlation_id(page.correlation_id or record.message_id)
    done = fanout_worker().run(page)
    logger.info("fan-out page done", extra={"deliveries": done.deliveries, "queued": done.queued})


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> PartialItemFailureResponse:
    return process_partial_response(event=event, record_handler=_page, processor=processor, context=context)


startup.finish()
