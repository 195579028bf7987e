"""The HTTP side of the inbound webhook functions: an API Gateway v2 event in, its answer out.

These functions answer without the API function's router (a provider posts to one route only, and
the router's import would weigh on every cold start), in the same envelopes: 200 with what the
request brought, 401 for an unverified request, 404 where no webhook is configured, 413 for a body
over the limit, 503 when a dependency fails (the sender retries).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from herald.domain.errors import ErrorCode, HeraldError
from herald.http.envelope import json_text, success
from herald.http.errors import JSON, client_error, refusal
from herald.http.guards import raw_body
from herald.services.inbound import InboundRequest, Receipt

# Some providers post their events in batches; none sends more than this in one request.
MAX_BODY_BYTES = 1024 * 1024
TENANT_PARAMETER = "tenantId"
# Tenant ids are UUIDs: anything else is answered without a lookup.
_TENANT_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _received(receipt: Receipt) -> dict[str, object]:
    return {"received": True, **{outcome.value: number for outcome, number in receipt.outcomes.items()}}


def _request(event: Mapping[str, Any]) -> InboundRequest:
    headers = {str(name): str(value) for name, value in (event.get("headers") or {}).items()}
    return InboundRequest(headers, raw_body(event))


def _answered(event: Mapping[str, Any], receive: Callable[[InboundRequest], Receipt]) -> dict[str, Any]:
    try:
        request = _request(event)
    except ValueError:
        return refusal(HeraldError("The request body is not valid base64.", ErrorCode.VALIDATION_ERROR))
    if len(request.raw_body) > MAX_BODY_BYTES:
        return refusal(
            HeraldError(f"The body is larger than {MAX_BODY_BYTES} bytes.", ErrorCode.PAYLOAD_TOO_LARGE)
        )
    try:
        receipt = receive(request)
    except Exception as exc:  # noqa: BLE001 - one mapping for every failure (the sender retries a 5xx)
        return refusal(client_error(exc))
    return {
        "statusCode": 200,
        "headers": {"Content-Type": JSON},
        "body": json_text(success(_received(receipt))),
    }


def tenant_webhook(
    event: Mapping[str, Any], receive: Callable[[str, InboundRequest], Receipt]
) -> dict[str, Any]:
    """An email provider's webhook for the tenant the URL names."""
    tenant_id = str((event.get("pathParameters") or {}).get(TENANT_PARAMETER, ""))
    if not _TENANT_ID.match(tenant_id):
        return refusal(HeraldError("No webhook is configured at this URL.", ErrorCode.WEBHOOK_NOT_FOUND))
    return _answered(event, lambda request: receive(tenant_id, request))


def platform_webhook(
    event: Mapping[str, Any], receive: Callable[[InboundRequest], Receipt]
) -> dict[str, Any]:
    """A payment processor's webhook to the platform."""
    return _answered(event, receive)
