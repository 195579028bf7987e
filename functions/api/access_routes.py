"""Access routes: the account's named API keys (and, beside them, members and the audit log),
registered on the account routes' router (docs/api.md, "Keys, members and the audit log")."""

from __future__ import annotations

from typing import Annotated

from account_routes import _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from herald.composition.api import api
from herald.domain.access import Ability
from herald.domain.errors import ErrorCode
from herald.http.access_answers import Key, NewKey
from herald.http.access_requests import CreateKeyRequest
from herald.http.account_requests import RotateKeyRequest
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PATH_PARAMETERS, answers

KeyId = Annotated[str, Path(max_length=40, description="The key's id (key_…)")]
KEY_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.KEY_NOT_FOUND)


@router.get(
    "/api/v1/account/keys",
    summary="The account's API keys (never their secrets)",
    responses=answers(200, list[Key], "The keys, oldest first", *AUTHENTICATED),
)
def list_keys() -> Response[str]:
    return json_response(200, [Key.of(key) for key in api().keys.list(_tenant(Ability.READ).tenant_id)])


@router.post(
    "/api/v1/account/keys",
    summary="Create a named key with scopes (its secret is shown this once)",
    responses=answers(201, NewKey, "The new key", *AUTHENTICATED, *JSON_BODY, ErrorCode.KEY_LIMIT_REACHED),
)
def create_key(request: Annotated[CreateKeyRequest, Body()]) -> Response[str]:
    tenant = _tenant(Ability.KEYS)
    issued = api().keys.create(
        tenant.tenant_id,
        tenant.grant,
        request.name,
        request.scopes,
        domains=request.domains,
        expires_at=request.expiresAt,
    )
    return json_response(201, NewKey.of(issued))


@router.delete(
    "/api/v1/account/keys/<id>",
    summary="Revoke a key: it stops working with the next request",
    responses=answers(200, Key, "The revoked key", *KEY_PATH, ErrorCode.KEY_ROTATED),
)
def revoke_key(id: KeyId) -> Response[str]:  # noqa: A002 (the route's {id})
    tenant = _tenant(Ability.KEYS)
    return json_response(200, Key.of(api().keys.revoke(tenant.tenant_id, tenant.grant, id)))


@router.post(
    "/api/v1/account/keys/<id>/rotate",
    summary="A new secret for a key (shown once); the old one works for graceSeconds",
    responses=answers(200, NewKey, "The key's new secret", *KEY_PATH, *JSON_BODY, ErrorCode.KEY_ROTATED),
)
def rotate_key(id: KeyId, request: Annotated[RotateKeyRequest, Body()]) -> Response[str]:  # noqa: A002
    tenant = _tenant(Ability.KEYS)
    issued = api().keys.rotate(tenant.tenant_id, tenant.grant, id, request.graceSeconds)
    return json_response(200, NewKey.of(issued))
