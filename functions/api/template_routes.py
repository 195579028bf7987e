"""Template routes: the account's email templates, their versions, publication and preview,
registered on the account routes' router (docs/api.md, "Templates")."""

from __future__ import annotations

from typing import Annotated

from account_routes import _tenant, router
from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path

from herald.composition.api import api
from herald.domain.access import Ability
from herald.domain.errors import ErrorCode
from herald.http.answers import json_response
from herald.http.contract import AUTHENTICATED, JSON_BODY, PATH_PARAMETERS, answers
from herald.http.template_answers import Preview, Template, TemplateSummary
from herald.http.template_requests import PreviewRequest, PublishRequest, TemplateBody, TemplateUpdate

TemplateId = Annotated[str, Path(max_length=40, description="The template's id (tpl_…)")]
TEMPLATE_PATH = (*AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.TEMPLATE_NOT_FOUND)
# A change decided from a template another request changed first.
CHANGE = (*TEMPLATE_PATH, ErrorCode.TEMPLATE_CHANGED)


@router.get(
    "/api/v1/templates",
    summary="The account's email templates, by name",
    responses=answers(200, list[TemplateSummary], "The templates", *AUTHENTICATED),
)
def list_templates() -> Response[str]:
    templates = api().templates.list(_tenant(Ability.READ).tenant_id)
    return json_response(200, [TemplateSummary.of(template) for template in templates])


@router.post(
    "/api/v1/templates",
    summary="Create a template (its version 1, a draft until published)",
    responses=answers(
        201,
        Template,
        "The template",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.TEMPLATE_INVALID,
        ErrorCode.TEMPLATE_LIMIT_REACHED,
    ),
)
def create_template(request: Annotated[TemplateBody, Body()]) -> Response[str]:
    tenant = _tenant(Ability.TEMPLATES)
    created = api().templates.create(tenant.tenant_id, tenant.grant, request.name, request.content())
    return json_response(201, Template.of_detail(created))


@router.get(
    "/api/v1/templates/<id>",
    summary="A template: its draft, its published version and every kept version",
    responses=answers(200, Template, "The template", *TEMPLATE_PATH),
)
def get_template(id: TemplateId) -> Response[str]:  # noqa: A002 (the route's {id})
    return json_response(200, Template.of_detail(api().templates.get(_tenant(Ability.READ).tenant_id, id)))


@router.put(
    "/api/v1/templates/<id>",
    summary="A new draft version (the published version stays until the next publication)",
    responses=answers(200, Template, "The template", *CHANGE, *JSON_BODY, ErrorCode.TEMPLATE_INVALID),
)
def update_template(id: TemplateId, request: Annotated[TemplateUpdate, Body()]) -> Response[str]:  # noqa: A002
    tenant = _tenant(Ability.TEMPLATES)
    updated = api().templates.update(tenant.tenant_id, tenant.grant, id, request.name, request.content())
    return json_response(200, Template.of_detail(updated))


@router.post(
    "/api/v1/templates/<id>/publish",
    summary="Publish a version (default: the latest): sends without a version use it",
    responses=answers(200, Template, "The template", *CHANGE, *JSON_BODY),
)
def publish_template(id: TemplateId, request: Annotated[PublishRequest, Body()]) -> Response[str]:  # noqa: A002
    tenant = _tenant(Ability.TEMPLATES)
    published = api().templates.publish(tenant.tenant_id, tenant.grant, id, request.version)
    return json_response(200, Template.of_detail(published))


@router.post(
    "/api/v1/templates/<id>/preview",
    summary="Render a version (default: the latest) with sample data, as a send would",
    responses=answers(
        200, Preview, "The rendered parts", *TEMPLATE_PATH, *JSON_BODY, ErrorCode.TEMPLATE_RENDER_FAILED
    ),
)
def preview_template(id: TemplateId, request: Annotated[PreviewRequest, Body()]) -> Response[str]:  # noqa: A002
    tenant = _tenant(Ability.READ)
    version, rendered = api().templates.preview(tenant.tenant_id, id, request.version, request.data)
    return json_response(200, Preview.of(version, rendered))


@router.delete(
    "/api/v1/templates/<id>",
    summary="Delete a template and its versions (sent jobs keep what they rendered)",
    responses=answers(200, TemplateSummary, "The deleted template", *CHANGE),
)
def delete_template(id: TemplateId) -> Response[str]:  # noqa: A002 (the route's {id})
    tenant = _tenant(Ability.TEMPLATES)
    return json_response(200, TemplateSummary.of(api().templates.delete(tenant.tenant_id, tenant.grant, id)))
