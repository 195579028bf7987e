"""The one mapping from what a call into the core raised to what the client is told, for the API
function and the inbound functions alike: a ``HeraldError`` as it is, a dependency's failure as 503
(the client may retry), anything else as 500. Herald's own failures are logged here, once."""

from __future__ import annotations

from typing import Any

from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.http.envelope import failure, json_text
from herald.http.error_table import status_of
from herald.observability import logger

JSON = "application/json"


def client_error(exc: Exception) -> HeraldError:
    if isinstance(exc, HeraldError):
        return exc
    if isinstance(exc, DependencyError):
        # The table, a queue or KMS did not answer: the request changed nothing the client must undo.
        logger.error("dependency unavailable", extra={"reason": str(exc)})
        return HeraldError(
            "A service Herald depends on is unavailable; retry shortly.", ErrorCode.DEPENDENCY_UNAVAILABLE
        )
    logger.exception("unhandled error")
    return HeraldError("Something went wrong on our side.", ErrorCode.INTERNAL_ERROR)


def refusal(error: HeraldError) -> dict[str, Any]:
    """The error as an API Gateway v2 answer, for edges that answer without the API's resolver."""
    return {
        "statusCode": status_of(error.code),
        "headers": {"Content-Type": JSON},
        "body": json_text(failure(error)),
    }
