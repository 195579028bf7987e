"""Subscription routes: the endpoints registered to receive the account's events, their breakers,
signing secrets, test sends and delivery history, registered on the account routes' router
(docs/api.md, "Subscriptions")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from account_routes import _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from herald.composition.api import api
from herald.domain.access import Ability
from herald.domain.clock import iso
from herald.domain.errors import ErrorCode
from herald.http.account_answers import DELETED, Deleted
from herald.http.answers import JobPage, Recovery, json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PARAMETERS, PATH_PARAMETERS, answers
from herald.http.subscription_answers import NewSubscription, Subscription, TestDelivery
from herald.http.subscription_requests import (
    SubscriptionBody,
    SubscriptionPatch,
    SubscriptionRecoverRequest,
    TestRequest,
)

SubscriptionId = Annotated[str, Path(max_length=40, description="The subscription's id (sub_…)")]
SUBSCRIPTION_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.SUBSCRIPTION_NOT_FOUND)
# A change decided from a subscription another request changed first.
CHANGE = (*SUBSCRIPTION_PATH, ErrorCode.SUBSCRIPTION_CHANGED)


@router.get(
    "/api/v1/subscriptions",
    summary="The account's subscriptions (registered endpoints), by id",
    responses=answers(200, list[Subscription], "The subscriptions", *AUTHENTICATED),
)
def list_subscriptions() -> Response[str]:
    views = api().subscriptions.list(_tenant(Ability.READ).tenant_id)
    return json_response(200, [Subscription.of(view) for view in views])


@router.post(
    "/api/v1/subscriptions",
    summary="Register an endpoint for some event types; its signing secret is shown this once",
    responses=answers(
        201,
        NewSubscription,
        "The subscription, with its secret",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.URL_NOT_ALLOWED,
        ErrorCode.SUBSCRIPTION_LIMIT_REACHED,
    ),
)
def create_subscription(request: Annotated[SubscriptionBody, Body()]) -> Response[str]:
    created = api().subscriptions.create(_tenant(Ability.WEBHOOKS), request.draft())
    return json_response(201, NewSubscription.created(created))


@router.get(
    "/api/v1/subscriptions/<id>",
    summary="A subscription and its breaker",
    responses=answers(200, Subscription, "The subscription", *SUBSCRIPTION_PATH),
)
def get_subscription(id: SubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    return json_response(200, Subscription.of(api().subscriptions.get(_tenant(Ability.READ).tenant_id, id)))


@router.patch(
    "/api/v1/subscriptions/<id>",
    summary="Change a subscription: the fields given (null clears an optional one)",
    responses=answers(200, Subscription, "The subscription", *CHANGE, *JSON_BODY, ErrorCode.URL_NOT_ALLOWED),
)
def update_subscription(id: SubscriptionId, request: Annotated[SubscriptionPatch, Body()]) -> Response[str]:  # noqa: A002
    changed = api().subscriptions.update(_tenant(Ability.WEBHOOKS), id, request.change())
    return json_response(200, Subscription.of(changed))


@router.delete(
    "/api/v1/subscriptions/<id>",
    summary="Delete a subscription and its breaker (its delivery jobs stay for their retention)",
    responses=answers(200, Deleted, "Deleted", *CHANGE),
)
def delete_subscription(id: SubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    api().subscriptions.delete(_tenant(Ability.WEBHOOKS), id)
    return json_response(200, DELETED)


@router.post(
    "/api/v1/subscriptions/<id>/enable",
    summary="Enable a subscription (its breaker closes with a clean record)",
    responses=answers(200, Subscription, "The subscription, enabled", *SUBSCRIPTION_PATH),
)
def enable_subscription(id: SubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    return json_response(200, Subscription.of(api().subscriptions.enable(_tenant(Ability.WEBHOOKS), id)))


@router.post(
    "/api/v1/subscriptions/<id>/disable",
    summary="Disable a subscription: its deliveries fail at once until it is enabled",
    responses=answers(200, Subscription, "The subscription, disabled", *SUBSCRIPTION_PATH),
)
def disable_subscription(id: SubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    return json_response(200, Subscription.of(api().subscriptions.disable(_tenant(Ability.WEBHOOKS), id)))


@router.post(
    "/api/v1/subscriptions/<id>/test",
    summary="Send a signed example event to the endpoint now and show its answer",
    responses=answers(
        200,
        TestDelivery,
        "How the test went (a failing endpoint is a 200 with ok: false)",
        *SUBSCRIPTION_PATH,
        *JSON_BODY,
        ErrorCode.RATE_LIMIT_EXCEEDED,
    ),
)
def test_subscription(id: SubscriptionId, request: Annotated[TestRequest, Body()]) -> Response[str]:  # noqa: A002
    outcome = api().subscriptions.test(_tenant(Ability.WEBHOOKS), id, event_type=request.eventType)
    return json_response(200, TestDelivery.of(outcome))


@router.post(
    "/api/v1/subscriptions/<id>/secret/rotate",
    summary="A new signing secret, shown this once; the previous one keeps signing for 24 hours",
    responses=answers(200, NewSubscription, "The subscription, with its new secret", *CHANGE),
)
def rotate_subscription_secret(id: SubscriptionId) -> Response[str]:  # noqa: A002 (the route's {id})
    rotated = api().subscriptions.rotate_secret(_tenant(Ability.WEBHOOKS), id)
    return json_response(200, NewSubscription.created(rotated))


@router.get(
    "/api/v1/subscriptions/<id>/deliveries",
    summary="The subscription's deliveries (its delivery jobs), newest first",
    responses=answers(
        200, JobPage, "A page of delivery jobs", *SUBSCRIPTION_PATH, *PARAMETERS, ErrorCode.INVALID_CURSOR
    ),
)
def subscription_deliveries(
    id: SubscriptionId,  # noqa: A002 (the route's {id})
    *,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[
        str | None, Query(max_length=512, description="nextCursor of the previous page")
    ] = None,
) -> Response[str]:
    tenant_id = _tenant(Ability.READ).tenant_id
    page = api().subscriptions.deliveries(tenant_id, id, cursor=cursor, limit=limit)
    return json_response(200, JobPage.found(page, limit=limit))


@router.post(
    "/api/v1/subscriptions/<id>/recover",
    summary="Re-queue the subscription's failed deliveries accepted in a time window",
    responses=answers(
        200,
        Recovery,
        "Re-queued (at most 1000; nextCursor continues)",
        *SUBSCRIPTION_PATH,
        *JSON_BODY,
        ErrorCode.INVALID_CURSOR,
        ErrorCode.QUEUE_UNAVAILABLE,
    ),
)
def recover_subscription(
    id: SubscriptionId, request: Annotated[SubscriptionRecoverRequest, Body()]
) -> Response[str]:  # noqa: A002
    # The ability of POST /notifications/jobs/recover: a key that may re-queue every failed job may
    # re-queue one subscription's.
    tenant = _tenant(Ability.SEND)
    until = iso(request.until or datetime.now(UTC))
    result = api().subscriptions.recover(tenant, id, iso(request.since), until, cursor=request.cursor)
    return json_response(200, Recovery.of(result))
