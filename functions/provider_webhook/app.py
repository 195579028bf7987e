"""An email provider's event webhook for the tenant in the URL: verified with the tenant's stored
secret, then recorded against the tenant's jobs and suppression list. Every provider's function in
template.yaml runs this handler; its HERALD_WEBHOOK_PROVIDER says which provider it serves."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.inbound import provider_webhooks
from herald.http.inbound import tenant_webhook
from herald.observability import logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    return tenant_webhook(event, provider_webhooks().receive)


startup.finish()
