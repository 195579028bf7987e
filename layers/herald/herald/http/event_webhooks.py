"""What a subscription receives, as OpenAPI 3.1 ``webhooks``: in the API's own document (one entry,
any event), and in an account's catalog document (one entry per event type, its payload that type's
schema), which a tenant hands to the customers who build the receiving endpoints.

A delivery is a POST of ``{id, type, timestamp, data}`` (``herald.domain.events.delivery_body``)
signed twice, as every Herald webhook is (docs/api.md, "Signatures of outbound webhooks"); the
receiver answers 2xx to acknowledge it, anything else (or nothing within the timeout) is retried.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from herald.domain.events import EventType

OPENAPI_VERSION = "3.1.0"
# The webhooks entry of the API's own document: any event type's delivery.
EVENT_WEBHOOK = "event"

_HEADERS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    (
        "webhook-id",
        "The delivery's id: the same on each retry of it, so a receiver can drop a repeat",
        {"type": "string"},
    ),
    (
        "webhook-timestamp",
        "Unix seconds when the delivery was signed (Standard Webhooks)",
        {"type": "string"},
    ),
    (
        "webhook-signature",
        "v1,<base64 HMAC-SHA256 of <webhook-id>.<webhook-timestamp>.<body>> keyed with the secret's bytes "
        "after whsec_; two, space-separated, while a rotated secret overlaps",
        {"type": "string"},
    ),
    (
        "X-Webhook-Timestamp",
        "Unix seconds when the delivery was signed (NotifyKit style)",
        {"type": "string"},
    ),
    (
        "X-Webhook-Signature",
        "t=<ts>,v1=<hex HMAC-SHA256 of <ts>.<body>> keyed with the whole secret string; the last v1 is "
        "the current secret's",
        {"type": "string", "pattern": "^t=[0-9]+(,v1=[0-9a-f]{64})+$"},
    ),
)
# The signatures are present when the subscription has its secret, which every subscription has.
_PARAMETERS = [
    {"name": name, "in": "header", "required": True, "description": description, "schema": schema}
    for name, description, schema in _HEADERS
]
_RESPONSES = {
    "2XX": {"description": "Received: the delivery is done"},
    "default": {"description": "Anything else, or no answer within the timeout: the delivery is retried"},
}


def delivery_body(type_schema: Mapping[str, Any], data_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of a delivery's body, given those of its ``type`` and its ``data``."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "type", "timestamp", "data"],
        "properties": {
            "id": {
                "type": "string",
                "description": "The event's id (evt_…), the same in every delivery of it",
            },
            "type": dict(type_schema),
            "timestamp": {"type": "string", "format": "date-time", "description": "When the event was sent"},
            "data": dict(data_schema),
        },
    }


def delivery(
    summary: str, body: Mapping[str, Any], description: str | None = None, deprecated: bool = False
) -> dict[str, Any]:
    """A webhooks entry (an OpenAPI Path Item): the POST a subscription's endpoint receives."""
    operation: dict[str, Any] = {
        "summary": summary,
        "parameters": _PARAMETERS,
        "requestBody": {"required": True, "content": {"application/json": {"schema": dict(body)}}},
        "responses": _RESPONSES,
    }
    if description:
        operation["description"] = description
    if deprecated:
        operation["deprecated"] = True
    return {"post": operation}


def api_webhooks() -> dict[str, Any]:
    """The API document's ``webhooks``: one delivery of any event type."""
    body = delivery_body(
        {"type": "string", "description": "The event type's name, as GET /api/v1/event-types lists it"},
        {"type": "object", "description": "The event's payload: it met the event type's schema when sent"},
    )
    description = (
        "Each subscription (POST /api/v1/subscriptions) receives every event of the types it names: "
        "GET /api/v1/event-types/openapi.json describes the account's own event types, one entry each."
    )
    return {EVENT_WEBHOOK: delivery("An event, delivered to a subscribed endpoint", body, description)}


def catalog_document(event_types: Iterable[EventType]) -> dict[str, Any]:
    """An OpenAPI 3.1 document of one account's event types (archived ones left out), each a webhooks
    entry whose ``data`` is the type's schema."""
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Events",
            "version": "1",
            "description": "The events this account sends to the endpoints subscribed to them.",
        },
        "webhooks": {
            kind.name: delivery(
                kind.name,
                delivery_body({"const": kind.name}, _data_schema(kind)),
                kind.description,
                kind.deprecated,
            )
            for kind in event_types
            if not kind.archived
        },
    }


def _data_schema(kind: EventType) -> dict[str, Any]:
    """The type's schema as a resource of its own (an ``$id``), so that its ``#/$defs/…``
    references resolve inside it, not against the document it is embedded in."""
    if kind.schema is None:
        return {"type": "object"}
    return {"$id": f"urn:herald:event-type:{kind.name}:{kind.version}", **kind.schema}
