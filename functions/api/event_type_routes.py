"""Event type routes: the account's catalog of event types and their payload schemas, and the
catalog as an OpenAPI document of webhooks, registered on the account routes' router (docs/api.md,
"Event types")."""

from __future__ import annotations

import json
from typing import Annotated, Any

from account_routes import _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from herald.composition.api import api
from herald.domain.access import Ability
from herald.domain.errors import ErrorCode
from herald.domain.events import MAX_EVENT_TYPE_NAME
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON, JSON_BODY, PARAMETERS, PATH_PARAMETERS, answers, errors
from herald.http.event_type_answers import EventType
from herald.http.event_type_requests import EventTypeBody, EventTypeUpdate
from herald.http.event_webhooks import OPENAPI_VERSION, catalog_document

Name = Annotated[
    str, Path(max_length=MAX_EVENT_TYPE_NAME, description="The event type's name, like order.paid")
]
EVENT_TYPE_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.EVENT_TYPE_NOT_FOUND)
# A change decided from an event type another request changed first.
CHANGE = (*EVENT_TYPE_PATH, ErrorCode.EVENT_TYPE_CHANGED)
_CATALOG_DOCUMENT: dict[Any, Any] = {
    200: {
        "description": f"An OpenAPI {OPENAPI_VERSION} document: one webhooks entry per event type",
        "content": {JSON: {"schema": {"type": "object", "required": ["openapi", "info", "webhooks"]}}},
    },
    **errors(*AUTHENTICATED),
}


@router.get(
    "/api/v1/event-types",
    summary="The account's event types, by name",
    responses=answers(200, list[EventType], "The event types", *AUTHENTICATED, *PARAMETERS),
)
def list_event_types(
    include_archived: Annotated[
        bool, Query(alias="includeArchived", description="Archived types too (each flagged archived)")
    ] = False,
) -> Response[str]:
    kinds = api().event_types.list(_tenant(Ability.READ).tenant_id, include_archived)
    return json_response(200, [EventType.of(kind) for kind in kinds])


@router.post(
    "/api/v1/event-types",
    summary="Declare an event type, with the JSON Schema its payloads must meet",
    responses=answers(
        201,
        EventType,
        "The event type (version 1)",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.EVENT_TYPE_INVALID,
        ErrorCode.EVENT_TYPE_EXISTS,
        ErrorCode.EVENT_TYPE_LIMIT_REACHED,
    ),
)
def create_event_type(request: Annotated[EventTypeBody, Body()]) -> Response[str]:
    tenant = _tenant(Ability.WEBHOOKS)
    created = api().event_types.create(
        tenant.tenant_id, tenant.grant, request.name, request.description, request.event_schema
    )
    return json_response(201, EventType.of(created))


# Registered before /event-types/<name>, which would take it as a name (a reserved one).
@router.get(
    "/api/v1/event-types/openapi.json",
    summary="The account's event types as an OpenAPI 3.1 document of webhooks, for its subscribers",
    responses=_CATALOG_DOCUMENT,
)
def event_types_document() -> Response[str]:
    kinds = api().event_types.list(_tenant(Ability.READ).tenant_id)
    return Response(200, JSON, json.dumps(catalog_document(kinds)))


@router.get(
    "/api/v1/event-types/<name>",
    summary="An event type (with version: that kept version's schema)",
    responses=answers(200, EventType, "The event type", *EVENT_TYPE_PATH, *PARAMETERS),
)
def get_event_type(
    name: Name,
    version: Annotated[
        int | None, Query(ge=1, le=999_999, description="A kept schema version; default: the current one")
    ] = None,
) -> Response[str]:
    return json_response(
        200, EventType.of(api().event_types.get(_tenant(Ability.READ).tenant_id, name, version))
    )


@router.patch(
    "/api/v1/event-types/<name>",
    summary="Change an event type: a new schema is a new version; deprecate; un-archive",
    responses=answers(200, EventType, "The event type", *CHANGE, *JSON_BODY, ErrorCode.EVENT_TYPE_INVALID),
)
def update_event_type(name: Name, request: Annotated[EventTypeUpdate, Body()]) -> Response[str]:
    tenant = _tenant(Ability.WEBHOOKS)
    updated = api().event_types.update(tenant.tenant_id, tenant.grant, name, request.change())
    return json_response(200, EventType.of(updated))


@router.delete(
    "/api/v1/event-types/<name>",
    summary="Archive an event type: no new events; subscriptions keep naming it",
    responses=answers(200, EventType, "The archived event type", *CHANGE),
)
def archive_event_type(name: Name) -> Response[str]:
    tenant = _tenant(Ability.WEBHOOKS)
    return json_response(200, EventType.of(api().event_types.archive(tenant.tenant_id, tenant.grant, name)))
