"""Portal routes: the tenant makes a one-time portal link (``POST /api/v1/portal-links``, its key or
a member's session), and the portal page's own routes under ``/api/v1/portal``, which its customer's
browser calls with the portal cookie, registered on the account routes' router (docs/api.md,
"Portal").

A portal route takes the portal cookie and nothing else: no API key, no console session. Every other
route of the API never takes the portal cookie (``herald.http.credentials`` reads the console's
cookie only), and the browser sends it to this path alone. The page's routes are the page's own, not
part of the OpenAPI document, as the console's sign-in routes are not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from account_routes import _origin, _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from herald.composition.api import api
from herald.composition.common import public_origin
from herald.domain.access import Ability
from herald.domain.portal import PORTAL_API_PREFIX, PORTAL_SESSION_PATH
from herald.http.account_answers import DELETED, SignedOut
from herald.http.answers import JobPage, json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, answers
from herald.http.credentials import (
    UNSAFE_METHODS,
    client_ip,
    portal_cookie,
    portal_token,
    require_same_origin,
    stack_origin,
)
from herald.http.portal_answers import PortalEventType, PortalLink, PortalSession
from herald.http.portal_requests import PortalLinkRequest, PortalSessionRequest
from herald.http.subscription_answers import NewSubscription, Subscription, TestDelivery
from herald.http.subscription_requests import SubscriptionBody, SubscriptionPatch, TestRequest
from herald.services.portal import PortalCaller, portal_ended


@router.post(
    "/api/v1/portal-links",
    summary="A one-time link to the portal, where a customer manages its own subscriptions",
    responses=answers(201, PortalLink, "The link (shown this once)", *AUTHENTICATED, *JSON_BODY),
)
def create_portal_link(request: Annotated[PortalLinkRequest, Body()]) -> Response[str]:
    tenant = _tenant(Ability.WEBHOOKS)
    link = api().portal.create_link(tenant, request.subscriberId, request.ttlSeconds, _origin())
    return json_response(201, PortalLink.of(link))


def portal_caller(event: Mapping[str, Any]) -> PortalCaller:
    """The request's portal session (its cookie; a state change must come from the portal's own
    origin). Also asked by the body validation, which answers who before what."""
    token = portal_token(event)
    if token is None:
        raise portal_ended()
    _same_origin_for_changes(event)
    return api().portal.authenticate(token, client_ip(event))


def _caller() -> PortalCaller:
    return portal_caller(router.current_event.raw_event)


def _same_origin_for_changes(event: Mapping[str, Any]) -> None:
    if str(event["requestContext"]["http"]["method"]).upper() in UNSAFE_METHODS:
        require_same_origin(event, stack_origin(event, public_origin()))


@router.post(PORTAL_SESSION_PATH, include_in_schema=False)
def open_portal(request: Annotated[PortalSessionRequest, Body()]) -> Response[str]:
    """The page exchanges its link's token for the session cookie; the link is used up."""
    _same_origin_for_changes(router.current_event.raw_event)
    opened = api().portal.open(request.token)
    answer = json_response(200, PortalSession.of(opened.session))
    answer.cookies.append(portal_cookie(opened.token))
    return answer


@router.get(PORTAL_SESSION_PATH, include_in_schema=False)
def portal_session() -> Response[str]:
    """Who the page is for, and until when (a reload of the page after the link was opened)."""
    return json_response(200, PortalSession.of(_caller().session))


@router.delete(PORTAL_SESSION_PATH, include_in_schema=False)
def close_portal() -> Response[str]:
    event = router.current_event.raw_event
    token = portal_token(event)
    if token is not None:
        _same_origin_for_changes(event)
        api().portal.end(token)
    answer = json_response(200, SignedOut(signed_out=True))
    answer.cookies.append(portal_cookie("", max_age=-1))
    return answer


@router.get(f"{PORTAL_API_PREFIX}/event-types", include_in_schema=False)
def portal_event_types() -> Response[str]:
    """The account's event types a new subscription may choose (not archived), by name."""
    catalog = api().event_types.list(_caller().tenant.tenant_id)
    return json_response(200, [PortalEventType.of(event_type) for event_type in catalog])


# ---------------------------------------------------------------- the session's subscriptions
# The answers and bodies of /api/v1/subscriptions, with the session's subscriber id passed to every
# call: the service finds no other subscriber's subscription (404 subscription_not_found).

PortalSubscriptionId = Annotated[str, Path(max_length=40)]
SUBSCRIPTIONS = f"{PORTAL_API_PREFIX}/subscriptions"
ONE = f"{SUBSCRIPTIONS}/<id>"


@router.get(SUBSCRIPTIONS, include_in_schema=False)
def portal_subscriptions() -> Response[str]:
    caller = _caller()
    views = api().subscriptions.list(caller.tenant.tenant_id, subscriber_id=caller.subscriber_id)
    return json_response(200, [Subscription.of(view) for view in views])


@router.post(SUBSCRIPTIONS, include_in_schema=False)
def portal_create_subscription(request: Annotated[SubscriptionBody, Body()]) -> Response[str]:
    caller = _caller()
    created = api().subscriptions.create(caller.tenant, request.draft(), subscriber_id=caller.subscriber_id)
    return json_response(201, NewSubscription.created(created))


@router.get(ONE, include_in_schema=False)
def portal_subscription(id: PortalSubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    caller = _caller()
    view = api().subscriptions.get(caller.tenant.tenant_id, id, subscriber_id=caller.subscriber_id)
    return json_response(200, Subscription.of(view))


@router.patch(ONE, include_in_schema=False)
def portal_update_subscription(
    id: PortalSubscriptionId,  # noqa: A002 (the route's {id})
    request: Annotated[SubscriptionPatch, Body()],
) -> Response[str]:
    caller = _caller()
    changed = api().subscriptions.update(
        caller.tenant, id, request.change(), subscriber_id=caller.subscriber_id
    )
    return json_response(200, Subscription.of(changed))


@router.delete(ONE, include_in_schema=False)
def portal_delete_subscription(id: PortalSubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    caller = _caller()
    api().subscriptions.delete(caller.tenant, id, subscriber_id=caller.subscriber_id)
    return json_response(200, DELETED)


@router.post(f"{ONE}/enable", include_in_schema=False)
def portal_enable_subscription(id: PortalSubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    caller = _caller()
    enabled = api().subscriptions.enable(caller.tenant, id, subscriber_id=caller.subscriber_id)
    return json_response(200, Subscription.of(enabled))


@router.post(f"{ONE}/disable", include_in_schema=False)
def portal_disable_subscription(id: PortalSubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    caller = _caller()
    disabled = api().subscriptions.disable(caller.tenant, id, subscriber_id=caller.subscriber_id)
    return json_response(200, Subscription.of(disabled))


@router.post(f"{ONE}/test", include_in_schema=False)
def portal_test_subscription(
    id: PortalSubscriptionId,  # noqa: A002 (the route's {id})
    request: Annotated[TestRequest, Body()],
) -> Response[str]:
    caller = _caller()
    outcome = api().subscriptions.test(
        caller.tenant, id, event_type=request.eventType, subscriber_id=caller.subscriber_id
    )
    return json_response(200, TestDelivery.of(outcome))


@router.post(f"{ONE}/secret/rotate", include_in_schema=False)
def portal_rotate_secret(id: PortalSubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    caller = _caller()
    rotated = api().subscriptions.rotate_secret(caller.tenant, id, subscriber_id=caller.subscriber_id)
    return json_response(200, NewSubscription.created(rotated))


@router.get(f"{ONE}/deliveries", include_in_schema=False)
def portal_deliveries(
    id: PortalSubscriptionId,  # noqa: A002 (the route's {id})
    *,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> Response[str]:
    caller = _caller()
    page = api().subscriptions.deliveries(
        caller.tenant.tenant_id, id, cursor=cursor, limit=limit, subscriber_id=caller.subscriber_id
    )
    return json_response(200, JobPage.found(page, limit=limit))
