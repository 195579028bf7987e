"""SweeperFunction: on its schedule, re-queues (or fails) the jobs that lost their queue message."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.sweeper import sweeper
from herald.observability import logger, metrics, traced


class SweepIncomplete(Exception):
    """Some steps failed (each logged): the invocation fails, so the Errors alarm goes off."""


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(_event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id(context.aws_request_id)
    report = sweeper().sweep(context.get_remaining_time_in_millis)
    if report.errors:
        raise SweepIncomplete(f"{report.errors} sweep step(s) failed; see the log lines above")
    return report.as_dict()


startup.finish()
