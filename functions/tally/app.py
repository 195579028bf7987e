"""TallyFunction: the jobs' status changes from the table's stream, added to their day counts."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.adapters.store.status_stream import UnreadableChange, status_change
from herald.composition import startup
from herald.composition.tally import tally
from herald.domain.activity import StatusChange
from herald.observability import count, logger, metrics, traced


@traced
@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], _context: LambdaContext) -> dict[str, int]:
    changes = _changes(event.get("Records") or [])
    # A failed write raises: the event source retries the batch, and what was added is not again.
    writes = tally().add(changes)
    logger.info("day counts added", extra={"changes": len(changes), "writes": writes})
    return {"changes": len(changes), "writes": writes}


def _changes(records: list[dict[str, Any]]) -> list[StatusChange]:
    changes = []
    for record in records:
        try:
            change = status_change(record)
        except UnreadableChange as exc:
            # Retrying would not make it readable: it is logged and counted, the batch goes on.
            logger.error("status change not counted", extra={"reason": str(exc)})
            count("StatusChangesUnreadable")
            continue
        if change is not None:
            changes.append(change)
    return changes


startup.finish()
