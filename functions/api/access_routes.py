"""Access routes: the account's named API keys (and, beside them, members and the audit log),
registered on the account routes' router (docs/api.md, "Keys, members and the audit log")."""

from __future__ import annotations

from typing import Annotated

from account_routes import _origin, _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from herald.composition.api import api
from herald.composition.common import public_origin
from herald.domain.access import Ability, ActorKind
from herald.domain.audit import MAX_AUDIT_PAGE, AuditAction
from herald.domain.errors import ErrorCode
from herald.http.access_answers import AuditLogPage, Key, Member, NewKey, NewMember
from herald.http.access_requests import CreateKeyRequest, InviteMemberRequest, MemberRoleRequest
from herald.http.account_requests import RotateKeyRequest
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PARAMETERS, PATH_PARAMETERS, answers
from herald.http.credentials import credentials
from herald.services.auth import require

KeyId = Annotated[str, Path(max_length=40, description="The key's id (key_…)")]
KEY_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.KEY_NOT_FOUND)
MemberId = Annotated[str, Path(max_length=40, description="The member's id (mem_…)")]
# A change to a member can meet a concurrent one (409 member_exists: list again and retry).
MEMBER_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.MEMBER_NOT_FOUND, ErrorCode.MEMBER_EXISTS)


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


@router.get(
    "/api/v1/account/members",
    summary="The account's members and pending invitations",
    responses=answers(200, list[Member], "The members, oldest first", *AUTHENTICATED),
)
def list_members() -> Response[str]:
    members = api().members.list(_tenant(Ability.READ).tenant_id)
    return json_response(200, [Member.of(member) for member in members])


@router.post(
    "/api/v1/account/members",
    summary="Invite a person by email with a role (they accept by signing in to the console)",
    description="Nobody gives a role with abilities they lack: only an owner invites an owner.",
    responses=answers(
        201,
        NewMember,
        "The invitation",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.MEMBER_EXISTS,
        ErrorCode.MEMBER_LIMIT_REACHED,
    ),
)
def invite_member(request: Annotated[InviteMemberRequest, Body()]) -> Response[str]:
    tenant = _tenant(Ability.MEMBERS)
    console = f"{_origin()}/console"
    invited = api().members.invite(tenant.tenant_id, tenant.grant, request.email, request.role, console)
    return json_response(201, NewMember.invited(invited))


@router.patch(
    "/api/v1/account/members/<id>",
    summary="Change a member's role (a lower role ends their sessions)",
    description="Only an owner makes or unmakes an owner; the last active owner keeps the role.",
    responses=answers(200, Member, "The member", *MEMBER_PATH, *JSON_BODY, ErrorCode.LAST_OWNER),
)
def change_member_role(id: MemberId, request: Annotated[MemberRoleRequest, Body()]) -> Response[str]:  # noqa: A002
    tenant = _tenant(Ability.MEMBERS)
    member = api().members.change_role(tenant.tenant_id, tenant.grant, id, request.role)
    return json_response(200, Member.of(member))


@router.delete(
    "/api/v1/account/members/<id>",
    summary="Remove a member or cancel an invitation; with your own id, leave the account",
    description="The last active owner cannot be removed or leave.",
    responses=answers(200, Member, "The removed member", *MEMBER_PATH, ErrorCode.LAST_OWNER),
)
def remove_member(id: MemberId) -> Response[str]:  # noqa: A002 (the route's {id})
    tenant = api().callers.authenticate(credentials(router.current_event.raw_event, public_origin()), None)
    if (tenant.grant.actor.kind, tenant.grant.actor.id) != (ActorKind.MEMBER, id):
        # Leaving needs no ability of the role; removing someone else does.
        require(tenant, Ability.MEMBERS)
    return json_response(200, Member.of(api().members.remove(tenant.tenant_id, tenant.grant, id)))


ActionQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="Only this action",
        json_schema_extra={"enum": [action.value for action in AuditAction]},
    ),
]
ActorQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=320,
        description="Only what this actor did: a key's or member's id or name (an email), exact",
    ),
]
AUDIT_NOTE = (
    "Every change to the account, newest first: who (a key, a member, the operator, a payment "
    "processor, Herald's schedules), what, the target, when and from which client address. Entries "
    "are kept 400 days and cannot be changed or deleted. Each call reads at most limit entries: with "
    "a filter a page may hold fewer while nextCursor goes on."
)


@router.get(
    "/api/v1/account/audit",
    summary="The account's audit log, newest first",
    description=AUDIT_NOTE,
    responses=answers(
        200, AuditLogPage, "A page of entries", *AUTHENTICATED, *PARAMETERS, ErrorCode.INVALID_CURSOR
    ),
)
def audit_log(
    *,
    action: ActionQuery = None,
    actor: ActorQuery = None,
    cursor: Annotated[
        str | None, Query(max_length=512, description="nextCursor of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE)] = 50,
) -> Response[str]:
    page = api().audit.page(_tenant(Ability.READ), action=action, actor=actor, limit=limit, cursor=cursor)
    return json_response(200, AuditLogPage.of(page))
