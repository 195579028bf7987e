"""Account routes: the tenant manages its key, provider keys, signing secret, domains and
suppressions with its own API key (docs/api.md, "Account routes")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from herald.composition.api import api
from herald.composition.common import public_origin
from herald.domain.access import Ability, ActorKind, Scope
from herald.domain.account import TenantContext
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.inbound import Processor
from herald.domain.plans import Plan
from herald.domain.providers import StoredProvider
from herald.domain.vendors import tenant_provider_names
from herald.http.account_answers import (
    DELETED,
    Account,
    Activity,
    Checkout,
    Deleted,
    Domain,
    Endpoint,
    NewSigningSecret,
    OfferedPlan,
    Portal,
    Provider,
    RotatedApiKey,
    RotatedSigningSecret,
    SigningSecretStatus,
    Suppression,
    UnsubscribePage,
)
from herald.http.account_requests import (
    CheckoutRequest,
    DomainRequest,
    PriorityRequest,
    ProviderKeyRequest,
    RotateKeyRequest,
)
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PARAMETERS, PATH_PARAMETERS, answers, success
from herald.http.credentials import credentials, session_cookie, signed_in_by_session, stack_origin
from herald.http.requests import SEARCHED_ADDRESS, UNSUBSCRIBE_TOPIC

if TYPE_CHECKING:
    from herald.services.account import AccountService

router = Router()
ProviderName = Annotated[str, Path(max_length=16, description=tenant_provider_names())]
DomainName = Annotated[str, Path(max_length=253)]
# Every route that names a provider or a domain in its path.
PROVIDER_PATH = (*PATH_PARAMETERS, ErrorCode.UNKNOWN_PROVIDER)
DOMAIN_PATH = (*PATH_PARAMETERS, ErrorCode.DOMAIN_NOT_FOUND, ErrorCode.PROVIDER_KEY_UNREADABLE)
EndpointOrigin = Annotated[
    str, Path(max_length=300, description="The endpoint's host[:port], or its origin URL-encoded")
]
ENDPOINT_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.ENDPOINT_NOT_FOUND)


def _tenant(ability: Ability) -> TenantContext:
    """The caller, if it may do ``ability`` (else 403 ``insufficient_scope``)."""
    return api().callers.authenticate(credentials(router.current_event.raw_event, public_origin()), ability)


def _origin() -> str:
    """The base of every URL these routes write for the tenant (never the request's Host)."""
    return stack_origin(router.current_event.raw_event, public_origin())


def _account() -> AccountService:
    return api().account


def _providers(tenant: TenantContext, items: tuple[StoredProvider, ...]) -> list[Provider]:
    return [_provider(tenant, item) for item in items]


def _provider(tenant: TenantContext, item: StoredProvider) -> Provider:
    return Provider.of(item, tenant.tenant_id, f"{_origin()}/api/v1")


@router.get(
    "/api/v1/account",
    summary="Plan, limits, usage this period and rate limit",
    responses=answers(200, Account, "The account", *AUTHENTICATED),
)
def account() -> Response[str]:
    return json_response(200, Account.of(_account().overview(_tenant(Ability.READ))))


@router.get(
    "/api/v1/account/activity",
    summary="Jobs accepted, completed and failed by day (the last 7, 30 or 90 days)",
    responses=answers(200, Activity, "The activity", *AUTHENTICATED, *PARAMETERS),
)
def activity(
    days: Annotated[int, Query(description="7, 30 or 90", json_schema_extra={"enum": [7, 30, 90]})] = 30,
) -> Response[str]:
    return json_response(200, Activity.of(api().activity.activity(_tenant(Ability.READ), days)))


@router.post(
    "/api/v1/account/checkout",
    summary="Start a checkout to upgrade the plan (the payment webhook moves the plan)",
    responses=answers(
        201,
        Checkout,
        "The processor's checkout page",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.PROCESSOR_NOT_AVAILABLE,
        ErrorCode.ALREADY_SUBSCRIBED,
        ErrorCode.PROVIDER_UNAVAILABLE,
    ),
)
def start_checkout(request: Annotated[CheckoutRequest, Body()]) -> Response[str]:
    url = api().checkout.start(
        _tenant(Ability.BILLING),
        Plan(request.plan),
        Processor(request.processor.upper()) if request.processor else None,
        f"{_origin()}/console",
    )
    return json_response(201, Checkout(url=url))


@router.get(
    "/api/v1/account/plans",
    summary="The plans: limits, prices at each processor, and which are upgrades for this account",
    responses=answers(200, list[OfferedPlan], "Every plan, from the smallest", *AUTHENTICATED),
)
def plans() -> Response[str]:
    return json_response(
        200, [OfferedPlan.of(offer) for offer in api().checkout.offers(_tenant(Ability.READ))]
    )


@router.post(
    "/api/v1/account/billing/portal",
    summary="Open the payment processor's customer portal (change or cancel the plan)",
    responses=answers(
        201,
        Portal,
        "The customer portal's address",
        *AUTHENTICATED,
        ErrorCode.NOT_SUBSCRIBED,
        ErrorCode.PROVIDER_UNAVAILABLE,
    ),
)
def billing_portal() -> Response[str]:
    return json_response(201, Portal(url=api().checkout.portal(_tenant(Ability.BILLING))))


@router.post(
    "/api/v1/account/api-key/rotate",
    summary="Issue a new API key (shown once)",
    responses=answers(
        200,
        RotatedApiKey,
        "The new key",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.KEY_ROTATED,
        ErrorCode.KEY_NOT_FOUND,
    ),
)
def rotate_api_key(request: Annotated[RotateKeyRequest, Body()]) -> Response[str]:
    caller = _tenant(Ability.KEYS)
    issued = api().keys.rotate(
        caller.tenant_id, caller.grant, _rotated_key(caller), request.graceSeconds, end_sessions=True
    )
    answer = json_response(200, RotatedApiKey.of(issued))
    if request.graceSeconds == 0 and signed_in_by_session(router.current_event.raw_event):
        # Without grace every session ended with the old key; the browser that rotated gets a new one.
        answer.cookies.append(session_cookie(api().sessions.start(caller.tenant_id, caller.actor.id).token))
    return answer


def _rotated_key(caller: TenantContext) -> str:
    """What this route rotates: the calling key; from the console, the account's first full key."""
    if caller.actor.kind is ActorKind.KEY:
        return caller.actor.id
    first = next((key for key in api().keys.list(caller.tenant_id) if Scope.FULL in key.scopes), None)
    if first is None:
        raise HeraldError(
            "This account has no full key to rotate; rotate one of its keys instead.", ErrorCode.KEY_NOT_FOUND
        )
    return first.key_id


@router.get(
    "/api/v1/account/providers",
    summary="Configured providers, by priority (keys masked)",
    responses=answers(200, list[Provider], "The providers", *AUTHENTICATED),
)
def list_providers() -> Response[str]:
    tenant = _tenant(Ability.READ)
    return json_response(200, _providers(tenant, _account().providers(tenant)))


@router.put(
    "/api/v1/account/providers/<provider>",
    summary="Store a provider key after a live check",
    responses={
        **answers(
            201,
            Provider,
            "Stored",
            *AUTHENTICATED,
            *JSON_BODY,
            *PROVIDER_PATH,
            ErrorCode.PLAN_REQUIRED,
            ErrorCode.PROVIDER_KEY_INVALID,
            ErrorCode.PROVIDER_UNAVAILABLE,
        ),
        **success(200, Provider, "Replaced"),
    },
)
def put_provider(provider: ProviderName, request: Annotated[ProviderKeyRequest, Body()]) -> Response[str]:
    tenant = _tenant(Ability.PROVIDERS)
    created, stored = _account().put_provider(
        tenant,
        provider,
        api_key=request.apiKey,
        account_token=request.accountToken,
        webhook_secret=request.webhookSecret,
    )
    return json_response(201 if created else 200, _provider(tenant, stored))


@router.patch(
    "/api/v1/account/providers/<provider>",
    summary="Change a provider's priority (swaps)",
    responses=answers(
        200,
        list[Provider],
        "The providers in their new order",
        *AUTHENTICATED,
        *JSON_BODY,
        *PROVIDER_PATH,
        ErrorCode.PLAN_REQUIRED,
        ErrorCode.PROVIDER_NOT_FOUND,
        ErrorCode.INVALID_PRIORITY,
    ),
)
def set_priority(provider: ProviderName, request: Annotated[PriorityRequest, Body()]) -> Response[str]:
    tenant = _tenant(Ability.PROVIDERS)
    return json_response(200, _providers(tenant, _account().set_priority(tenant, provider, request.priority)))


@router.delete(
    "/api/v1/account/providers/<provider>",
    summary="Remove a provider key",
    responses=answers(200, Deleted, "Removed", *AUTHENTICATED, *PROVIDER_PATH, ErrorCode.PROVIDER_NOT_FOUND),
)
def delete_provider(provider: ProviderName) -> Response[str]:
    _account().delete_provider(_tenant(Ability.PROVIDERS), provider)
    return json_response(200, DELETED)


@router.post(
    "/api/v1/account/webhook-secret",
    summary="Create the signing secret (shown once)",
    responses=answers(201, NewSigningSecret, "Created", *AUTHENTICATED, ErrorCode.SIGNING_SECRET_EXISTS),
)
def create_signing_secret() -> Response[str]:
    return json_response(
        201, NewSigningSecret.of(_account().create_signing_secret(_tenant(Ability.SETTINGS)))
    )


@router.get(
    "/api/v1/account/webhook-secret",
    summary="Signing secret status",
    responses=answers(200, SigningSecretStatus, "The status", *AUTHENTICATED),
)
def signing_secret_status() -> Response[str]:
    return json_response(200, SigningSecretStatus.of(_account().signing_secret_status(_tenant(Ability.READ))))


@router.post(
    "/api/v1/account/webhook-secret/rotate",
    summary="Rotate the signing secret (old one valid 24 h)",
    responses=answers(
        200, RotatedSigningSecret, "The new secret", *AUTHENTICATED, ErrorCode.SIGNING_SECRET_NOT_FOUND
    ),
)
def rotate_signing_secret() -> Response[str]:
    return json_response(
        200, NewSigningSecret.of(_account().rotate_signing_secret(_tenant(Ability.SETTINGS)))
    )


@router.delete(
    "/api/v1/account/webhook-secret",
    summary="Delete the signing secret",
    responses=answers(200, Deleted, "Deleted", *AUTHENTICATED, ErrorCode.SIGNING_SECRET_NOT_FOUND),
)
def delete_signing_secret() -> Response[str]:
    _account().delete_signing_secret(_tenant(Ability.SETTINGS))
    return json_response(200, DELETED)


@router.post(
    "/api/v1/account/domains",
    summary="Register a sending domain with every configured provider",
    responses=answers(
        201,
        Domain,
        "Registered",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.PLAN_REQUIRED,
        ErrorCode.PROVIDER_NOT_CONFIGURED,
        ErrorCode.DOMAIN_TAKEN,
        ErrorCode.PROVIDER_KEY_UNREADABLE,
    ),
)
def add_domain(request: Annotated[DomainRequest, Body()]) -> Response[str]:
    return json_response(201, Domain.of(_account().add_domain(_tenant(Ability.DOMAINS), request.domain)))


@router.get(
    "/api/v1/account/domains",
    summary="Sending domains and their DNS records",
    responses=answers(200, list[Domain], "The domains", *AUTHENTICATED),
)
def list_domains() -> Response[str]:
    return json_response(200, [Domain.of(item) for item in _account().domains(_tenant(Ability.READ))])


@router.post(
    "/api/v1/account/domains/<domain>/verify",
    summary="Ask every provider to verify the domain",
    responses=answers(200, Domain, "The domain as the providers see it", *AUTHENTICATED, *DOMAIN_PATH),
)
def verify_domain(domain: DomainName) -> Response[str]:
    return json_response(200, Domain.of(_account().verify_domain(_tenant(Ability.DOMAINS), domain)))


@router.delete(
    "/api/v1/account/domains/<domain>",
    summary="Remove a sending domain",
    responses=answers(200, Deleted, "Removed", *AUTHENTICATED, *DOMAIN_PATH),
)
def delete_domain(domain: DomainName) -> Response[str]:
    _account().delete_domain(_tenant(Ability.DOMAINS), domain)
    return json_response(200, DELETED)


@router.get(
    "/api/v1/account/suppressions",
    summary="The suppression list",
    responses=answers(200, list[Suppression], "The suppressed addresses", *AUTHENTICATED),
)
def list_suppressions() -> Response[str]:
    return json_response(
        200, [Suppression.of(item) for item in _account().suppressions(_tenant(Ability.READ))]
    )


@router.delete(
    "/api/v1/account/suppressions/<email>",
    summary="Remove an address from the suppression list",
    responses=answers(
        200, Deleted, "Removed", *AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.SUPPRESSION_NOT_FOUND
    ),
)
def delete_suppression(email: Annotated[str, Path(max_length=320)]) -> Response[str]:
    _account().delete_suppression(_tenant(Ability.SETTINGS), unquote(email))
    return json_response(200, DELETED)


# A topic as sends name it, or * (the unsubscribes from every topic).
TopicQuery = Annotated[
    str,
    Query(
        pattern=UNSUBSCRIBE_TOPIC,
        description="A topic as sends name it (1-64 of a-z 0-9 . _ -), or * for every topic",
    ),
]


@router.get(
    "/api/v1/account/unsubscribes",
    summary="The recipients' unsubscribes, by topic",
    responses=answers(
        200, UnsubscribePage, "A page of unsubscribes", *AUTHENTICATED, *PARAMETERS, ErrorCode.INVALID_CURSOR
    ),
)
def list_unsubscribes(
    *,
    topic: TopicQuery | None = None,
    email: Annotated[str | None, Query(max_length=320, pattern=SEARCHED_ADDRESS)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[
        str | None, Query(max_length=512, description="nextCursor of the previous page")
    ] = None,
) -> Response[str]:
    tenant = _tenant(Ability.READ)
    page = api().unsubscribes.page(tenant, topic=topic, address=email, limit=limit, cursor=cursor)
    return json_response(200, UnsubscribePage.of(page))


@router.delete(
    "/api/v1/account/unsubscribes/<email>",
    summary="Take back a recipient's unsubscribe from a topic (mail of it goes to them again)",
    responses=answers(
        200, Deleted, "Removed", *AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.UNSUBSCRIBE_NOT_FOUND
    ),
)
def delete_unsubscribe(email: Annotated[str, Path(max_length=320)], topic: TopicQuery) -> Response[str]:
    api().unsubscribes.remove(_tenant(Ability.SETTINGS), unquote(email), topic)
    return json_response(200, DELETED)


@router.get(
    "/api/v1/account/endpoints",
    summary="The webhook endpoints as the circuit breakers see them",
    responses=answers(200, list[Endpoint], "Endpoints that ever failed, by origin", *AUTHENTICATED),
)
def list_endpoints() -> Response[str]:
    return json_response(
        200, [Endpoint.of(item) for item in api().endpoints.list(_tenant(Ability.READ).tenant_id)]
    )


def _chosen(origin: str) -> str:
    return unquote(origin).strip().lower().rstrip("/")


@router.post(
    "/api/v1/account/endpoints/<origin>/enable",
    summary="Re-enable a webhook endpoint (its breaker closes)",
    responses=answers(200, Endpoint, "The endpoint, closed", *ENDPOINT_PATH),
)
def enable_endpoint(origin: EndpointOrigin) -> Response[str]:
    return json_response(200, Endpoint.of(api().endpoints.enable(_tenant(Ability.SETTINGS), _chosen(origin))))


@router.post(
    "/api/v1/account/endpoints/<origin>/disable",
    summary="Disable a webhook endpoint: its webhooks fail with endpoint_disabled until it is enabled",
    responses=answers(200, Endpoint, "The endpoint, disabled", *ENDPOINT_PATH),
)
def disable_endpoint(origin: EndpointOrigin) -> Response[str]:
    return json_response(
        200, Endpoint.of(api().endpoints.disable(_tenant(Ability.SETTINGS), _chosen(origin)))
    )
