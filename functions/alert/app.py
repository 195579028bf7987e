"""AlertFunction: every message of the alert topic (alarm changes, dead-lettered jobs) to Slack."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.data_classes import SNSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.alert import alert_relay
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    relay = alert_relay()
    outcomes = []
    for record in SNSEvent(event).records:
        logger.set_correlation_id(record.sns.message_id)
        outcomes.append(relay.relay(record.sns.subject, record.sns.message).value)
    return {"outcomes": outcomes}


startup.finish()
