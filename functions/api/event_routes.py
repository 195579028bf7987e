"""Event routes: send an event to every subscription of its type, list the events, read one with
its deliveries; registered on the account routes' router (docs/api.md, "Events")."""

from __future__ import annotations

from typing import Annotated

from account_routes import _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from headers import IdempotencyHeader

from herald.composition.api import api
from herald.composition.common import public_origin
from herald.domain.access import Ability
from herald.domain.errors import ErrorCode
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PARAMETERS, PATH_PARAMETERS, SENDING, answers
from herald.http.credentials import credentials
from herald.http.event_answers import AcceptedEvent, EventDocument, EventPage, EventSummary
from herald.http.event_requests import EventBody

EventId = Annotated[
    str, Path(max_length=40, pattern="^evt_[0-9a-f]{32}$", description="The event's id (evt_…)")
]
Cursor = Annotated[str | None, Query(max_length=512, description="nextCursor of the previous page")]
Limit = Annotated[int, Query(ge=1, le=100, description="Events per page")]
# What the catalog says of an event's type and payload.
CHECKED = (ErrorCode.EVENT_TYPE_NOT_FOUND, ErrorCode.EVENT_TYPE_ARCHIVED, ErrorCode.EVENT_PAYLOAD_INVALID)


@router.post(
    "/api/v1/events",
    summary="Send an event to every enabled subscription of its type (one delivery job each)",
    responses=answers(
        202, AcceptedEvent, "Accepted and queued for fan-out", *AUTHENTICATED, *JSON_BODY, *SENDING, *CHECKED
    ),
)
def send_event(request: Annotated[EventBody, Body()], key: IdempotencyHeader = None) -> Response[str]:
    caller = credentials(router.current_event.raw_event, public_origin())
    return json_response(202, AcceptedEvent.of(api().events.send(caller, request.to_request(), key)))


@router.get(
    "/api/v1/events",
    summary="The account's events, newest first",
    responses=answers(
        200, EventPage, "A page of events", *AUTHENTICATED, *PARAMETERS, ErrorCode.INVALID_CURSOR
    ),
)
def list_events(cursor: Cursor = None, limit: Limit = 20) -> Response[str]:
    events, next_cursor = api().events.listing(_tenant(Ability.READ).tenant_id, cursor, limit)
    return json_response(
        200, EventPage(data=[EventSummary.of(event) for event in events], next_cursor=next_cursor)
    )


@router.get(
    "/api/v1/events/<id>",
    summary="An event and its deliveries: one per subscription, with each job's state",
    responses=answers(
        200,
        EventDocument,
        "The event",
        *AUTHENTICATED,
        *PATH_PARAMETERS,
        *PARAMETERS,
        ErrorCode.EVENT_NOT_FOUND,
    ),
)
def get_event(id: EventId, cursor: Cursor = None) -> Response[str]:  # noqa: A002 (the route's {id})
    detail = api().events.get(_tenant(Ability.READ).tenant_id, id, cursor)
    return json_response(200, EventDocument.of(detail))
