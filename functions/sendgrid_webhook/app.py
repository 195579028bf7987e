"""SendGrid's signed event webhook (ECDSA P-256) for the tenant in the URL: verified, then recorded against the tenant's jobs and suppression list."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.inbound import delivery_webhooks
from herald.domain.providers import ProviderName
from herald.http.inbound import tenant_webhook
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    return tenant_webhook(event, delivery_webhooks(ProviderName.SENDGRID).receive)


startup.finish()
