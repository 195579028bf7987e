"""DispatcherFunction: every minute, queues the scheduled jobs whose sendAt comes before the next run."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.dispatcher import dispatcher
from herald.observability import logger, metrics, traced


class DispatchIncomplete(Exception):
    """Some jobs could not be queued (each logged, each left scheduled): the Errors alarm goes off."""


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(_event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id(context.aws_request_id)
    report = dispatcher().dispatch(context.get_remaining_time_in_millis)
    if report.errors:
        raise DispatchIncomplete(f"{report.errors} scheduled job(s) not dispatched; see the log lines above")
    return report.as_dict()


startup.finish()
