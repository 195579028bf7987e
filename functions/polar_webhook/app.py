"""Polar's payment webhook (Standard Webhooks with the platform's secret, either key derivation): verified, then applied to the tenant's plan and billing period."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.inbound import payment_webhooks
from herald.domain.inbound import Processor
from herald.http.inbound import platform_webhook
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    return platform_webhook(event, payment_webhooks(Processor.POLAR).receive)


startup.finish()
