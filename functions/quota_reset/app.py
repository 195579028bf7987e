"""QuotaResetFunction: the daily billing-period run (EventBridge schedule)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.schedules import quota_reset
from herald.observability import count, logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, Any]:
    logger.info(
        "quota reset started", extra={"schedule": event.get("resources"), "fired_at": event.get("time")}
    )
    summary = quota_reset().run()
    for outcome, tenants in summary.outcomes.items():
        count("TenantPeriods", {"outcome": outcome}, value=tenants)
    logger.info("quota reset done", extra={"tenants": summary.tenants, "outcomes": summary.outcomes})
    return {"tenants": summary.tenants, "outcomes": summary.outcomes}


startup.finish()
