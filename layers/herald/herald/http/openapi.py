"""The API's OpenAPI document, finished from what Powertools generates out of the routes.

Powertools describes each route's parameters and request model, and the responses each route
declares through ``herald.http.contract``. This module adds what those declarations name: the
schemas of the success bodies (inside the success envelope) and of the error envelope, the two ways
to present an API key, ``security: []`` on the public routes, and the links between operations
(what a client does next with an answer: fetch the job it sent, reorder the provider it stored),
which a stateful test follows. It also takes out the 422 ``HTTPValidationError`` Powertools adds to
every route: Herald answers invalid input with 400 in its error envelope.

Imported only when the document is first asked for, so no send pays for these models.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi import swagger_ui
from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html
from pydantic import BaseModel, ConfigDict, Field, RootModel, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue, SkipJsonSchema, models_json_schema

from herald.domain.billing import BillingStatus
from herald.domain.errors import ErrorCode
from herald.http.contract import ENVELOPE_SUFFIX, PUBLIC_PATHS, SCHEMAS, ref

SECURITY_SCHEMES = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "bearer": {"type": "http", "scheme": "bearer", "description": "The API key as a bearer token"},
}
# Either way of presenting the key; X-API-Key wins when a request has both.
SECURITY: list[dict[str, list[str]]] = [{"apiKey": []}, {"bearer": []}]
_POWERTOOLS_422 = {"$ref": SCHEMAS + "HTTPValidationError"}
_POWERTOOLS_SCHEMAS = ("HTTPValidationError", "ValidationError", "ResponseValidationError")

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Channel = Literal["email", "webhook"]
JobStatus = Literal["scheduled", "pending", "processing", "completed", "failed", "cancelled"]
Priority = Annotated[int, WithJsonSchema({"type": "integer", "enum": [1, 5, 10]})]
# A field that is left out when it does not apply (never null).
Absent = SkipJsonSchema[None]


def _no_null_defaults(schema: JsonSchemaValue) -> None:
    properties = schema.get("properties")
    for field in properties.values() if isinstance(properties, dict) else ():
        if isinstance(field, dict) and "default" in field and field["default"] is None:
            del field["default"]


class _Shape(BaseModel):
    # Every field a body has is here: an undocumented field fails the contract checks.
    model_config = ConfigDict(extra="forbid", json_schema_extra=_no_null_defaults)


# ---------------------------------------------------------------- public


class Pong(_Shape):
    message: Literal["pong"]


class ServiceInfo(_Shape):
    name: str
    version: str
    description: str
    documentation: str


class HealthChecks(_Shape):
    table: str = Field(description='"ok", or why the table cannot be reached')
    queues: str = Field(description='"ok", or which queue cannot be reached')


class Health(_Shape):
    status: Literal["ok", "degraded"]
    checks: HealthChecks


# ---------------------------------------------------------------- notifications


class AcceptedJob(_Shape):
    jobId: str  # noqa: N815 (the API's field names)
    status: Literal["pending", "scheduled"] = Field(description="scheduled: it waits for its sendAt")
    type: Channel
    createdAt: Timestamp  # noqa: N815
    sendAt: Timestamp | Absent = Field(default=None, description="When the request asked for a sendAt")  # noqa: N815


class JobSummary(_Shape):
    id: str
    type: Channel
    status: JobStatus
    priority: Priority
    attempts: int
    maxAttempts: int  # noqa: N815
    errorMessage: str | None  # noqa: N815
    createdAt: Timestamp  # noqa: N815
    startedAt: Timestamp | None  # noqa: N815
    completedAt: Timestamp | None  # noqa: N815


class ProviderTry(_Shape):
    """One provider call of an attempt: delivered (with the provider's message id) or failed."""

    provider: str
    outcome: str = Field(description="delivered, provider_permanent, message_permanent or transient")
    messageId: str | None = None  # noqa: N815
    status: int | None = Field(default=None, description="the provider's HTTP status")
    code: str | None = Field(default=None, description="the provider's error code")
    error: str | None = None


class DeliveryLog(_Shape):
    id: str
    attempt: int
    status: Literal["success", "failed"]
    usedProvider: str | None  # noqa: N815
    errorMessage: str | None  # noqa: N815
    createdAt: Timestamp  # noqa: N815
    providers: list[ProviderTry]


class DeliveryEvent(_Shape):
    type: str
    occurredAt: Timestamp  # noqa: N815
    provider: str | None


class Job(JobSummary):
    sendAt: Timestamp | None = Field(description="When it is (or was) to be sent; null: at once")  # noqa: N815
    orderingKey: str | None = Field(description="Its ordering key; null: none")  # noqa: N815
    payload: dict[str, Any] | None = Field(description="The accepted request, until retention ends")
    deliveryLogs: list[DeliveryLog]  # noqa: N815
    events: list[DeliveryEvent]


class Pagination(_Shape):
    total: int
    page: int
    limit: int
    totalPages: int  # noqa: N815
    nextCursor: str | None = Field(description="Pass as cursor for the next page; null on the last")  # noqa: N815
    totalIsLowerBound: bool | Absent = Field(  # noqa: N815
        default=None, description="Present (true) when a status filter counted only part of the jobs"
    )


class JobPage(_Shape):
    data: list[JobSummary]
    pagination: Pagination


class RetriedJob(_Shape):
    jobId: str  # noqa: N815
    status: Literal["pending"]
    message: str


class Recovery(_Shape):
    requeued: int = Field(description="Failed jobs re-queued by this call")
    nextCursor: str | None = Field(description="Pass as cursor to re-queue the rest; null when done")  # noqa: N815


# ---------------------------------------------------------------- account


class RateLimit(_Shape):
    requestsPerMinute: int  # noqa: N815


class Limits(_Shape):
    monthlyEmails: int | None  # noqa: N815
    monthlyWebhooks: int | None  # noqa: N815
    sharedQuota: bool  # noqa: N815


class Usage(_Shape):
    emails: int
    webhooks: int
    total: int


class Billing(_Shape):
    status: BillingStatus | None = Field(description="Set by the payment processor's events; null before any")
    paidUntil: Timestamp | None  # noqa: N815


class Account(_Shape):
    tenantId: str  # noqa: N815
    name: str
    email: str
    plan: str
    status: str
    rateLimit: RateLimit  # noqa: N815
    limits: Limits
    usage: Usage
    periodStart: Timestamp  # noqa: N815
    periodEnd: Timestamp  # noqa: N815
    retentionDays: int  # noqa: N815
    billing: Billing


class ActivityTotals(_Shape):
    accepted: int
    completed: int
    failed: int


class ActivityDay(ActivityTotals):
    day: str = Field(description="The UTC day (YYYY-MM-DD) the jobs were accepted on")


class Activity(_Shape):
    from_: str = Field(alias="from", description="The first day of the range")
    to: str = Field(description="The last day of the range (today, UTC)")
    totals: ActivityTotals
    successRate: float | None = Field(description="Completed of finished jobs; null before any finished")  # noqa: N815
    days: list[ActivityDay] = Field(description="Every day of the range, oldest first")


class Checkout(_Shape):
    url: str = Field(description="The processor's hosted checkout page; it returns to the console")


class RotatedApiKey(_Shape):
    apiKey: str = Field(description="The new key, shown this once")  # noqa: N815
    previousKeyValidUntil: Timestamp | None = Field(  # noqa: N815
        description="Until when the old key works; null: it and every earlier key stopped at once"
    )


class Provider(_Shape):
    provider: str
    priority: int
    lastFour: str  # noqa: N815
    addedAt: Timestamp  # noqa: N815
    hasWebhookSecret: bool  # noqa: N815
    hasAccountToken: bool  # noqa: N815
    webhookUrl: str = Field(description="Where this provider posts its event webhooks")  # noqa: N815


class ProviderList(RootModel[list[Provider]]):
    pass


class DnsNeed(_Shape):
    type: str
    purpose: str


class SupportedProvider(_Shape):
    provider: str = Field(description="The name the provider routes and the email fields take")
    label: str
    apiKey: str = Field(description="What the provider calls the key to store as apiKey")  # noqa: N815
    keyExample: str = Field(description="What such a key looks like")  # noqa: N815
    accountToken: str | None = Field(description="What its accountToken is for; null: it has none")  # noqa: N815
    webhookSecret: str = Field(description="What to store as webhookSecret to verify its events")  # noqa: N815
    regions: list[str] = Field(
        description="Where an account may live, the first the default; for another, write its name and a "
        "colon before the key (eu:…). Empty: the provider has one API"
    )
    dnsRecords: list[DnsNeed] = Field(description="The kinds of DNS records it asks a sending domain for")  # noqa: N815


class SupportedProviderList(RootModel[list[SupportedProvider]]):
    pass


class Deleted(_Shape):
    deleted: Literal[True]


class NewSigningSecret(_Shape):
    secret: str = Field(description="whsec_…, shown this once")
    createdAt: Timestamp  # noqa: N815


class RotatedSigningSecret(NewSigningSecret):
    previousValidUntil: Timestamp = Field(description="The old secret signs too until then")  # noqa: N815


class SigningSecretStatus(_Shape):
    hasSecret: bool  # noqa: N815
    createdAt: Timestamp | None  # noqa: N815
    previousValidUntil: Timestamp | None  # noqa: N815


class DnsRecord(_Shape):
    type: str
    host: str
    value: str
    purpose: str
    priority: int | None


class DomainAtProvider(_Shape):
    provider: str
    verified: bool
    error: str | None
    records: list[DnsRecord]


class Domain(_Shape):
    domain: str
    createdAt: Timestamp  # noqa: N815
    verified: bool
    providers: list[DomainAtProvider]


class DomainList(RootModel[list[Domain]]):
    pass


class Suppression(_Shape):
    email: str
    reason: str
    source: str
    createdAt: Timestamp  # noqa: N815


class SuppressionList(RootModel[list[Suppression]]):
    pass


class Endpoint(_Shape):
    origin: str = Field(description="scheme://host[:port] of the webhook URLs it serves")
    state: Literal["closed", "open", "disabled"] = Field(
        description="open: its jobs wait for the cool-down; disabled: its jobs fail with endpoint_disabled"
    )
    since: Timestamp | None = Field(description="When the state last changed")
    lastError: str | None  # noqa: N815


class EndpointList(RootModel[list[Endpoint]]):
    pass


# ---------------------------------------------------------------- errors


class FieldProblem(_Shape):
    field: str
    message: str


class ErrorEnvelope(_Shape):
    success: Literal[False]
    error: str = Field(description="One sentence for a person; for invalid input it names every problem")
    code: ErrorCode
    timestamp: Timestamp
    details: list[FieldProblem] | Absent = Field(default=None, description="Every invalid field")
    message: list[str] | Absent = Field(default=None, description="The same problems, one line each")
    retryAfter: int | Absent = Field(default=None, description="On 429: seconds to wait, as Retry-After")  # noqa: N815
    jobId: str | Absent = Field(default=None, description="On duplicate_request and queue_unavailable")  # noqa: N815
    usage: int | Absent = Field(default=None, description="On quota_exceeded: used this period")
    limit: int | Absent = Field(default=None, description="On quota_exceeded: the period's quota")
    resetsAt: Timestamp | Absent = Field(default=None, description="On quota_exceeded: the period's end")  # noqa: N815


BODIES: tuple[type[BaseModel], ...] = (
    Pong,
    ServiceInfo,
    Health,
    SupportedProviderList,
    AcceptedJob,
    Job,
    JobPage,
    RetriedJob,
    Recovery,
    Account,
    Activity,
    Checkout,
    RotatedApiKey,
    Provider,
    ProviderList,
    Deleted,
    NewSigningSecret,
    RotatedSigningSecret,
    SigningSecretStatus,
    Domain,
    DomainList,
    SuppressionList,
    Endpoint,
    EndpointList,
)


def _envelope(body: str) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["success", "data", "timestamp"],
        "properties": {
            "success": {"const": True},
            "data": ref(body),
            "timestamp": {"type": "string", "format": "date-time"},
        },
    }


def _schemas() -> dict[str, Any]:
    """Every body's schema, its success envelope, and the error envelope, by component name."""
    models: list[type[BaseModel]] = [*BODIES, ErrorEnvelope]
    _, top = models_json_schema([(model, "validation") for model in models], ref_template=SCHEMAS + "{model}")
    schemas: dict[str, Any] = top["$defs"]
    schemas.update({body.__name__ + ENVELOPE_SUFFIX: _envelope(body.__name__) for body in BODIES})
    return schemas


def _without_default_422(operation: dict[str, Any]) -> None:
    responses = operation["responses"]
    default = responses.get("422", {}).get("content", {}).get("application/json", {}).get("schema")
    if default == _POWERTOOLS_422:
        del responses["422"]


# ---------------------------------------------------------------- links

JOB = "/api/v1/notifications/jobs/{id}"
RETRY = "/api/v1/notifications/jobs/{id}/retry"
CANCEL = "/api/v1/notifications/jobs/{id}/cancel"
PROVIDER = "/api/v1/account/providers/{provider}"
DOMAIN = "/api/v1/account/domains/{domain}"
VERIFY_DOMAIN = "/api/v1/account/domains/{domain}/verify"
SIGNING_PATH = "/api/v1/account/webhook-secret"
SIGNING_ROTATION_PATH = "/api/v1/account/webhook-secret/rotate"
# A link: the operation (method, path) it leads to, and where its path parameters come from.
Link = tuple[str, str, dict[str, str]]


def _job(job_id: str) -> dict[str, Link]:
    return {
        "GetJob": ("get", JOB, {"id": job_id}),
        "RetryJob": ("post", RETRY, {"id": job_id}),
        "CancelJob": ("post", CANCEL, {"id": job_id}),
    }


def _provider(name: str) -> dict[str, Link]:
    return {
        "SetProviderPriority": ("patch", PROVIDER, {"provider": name}),
        "DeleteProvider": ("delete", PROVIDER, {"provider": name}),
    }


def _domain(name: str) -> dict[str, Link]:
    return {
        "VerifyDomain": ("post", VERIFY_DOMAIN, {"domain": name}),
        "DeleteDomain": ("delete", DOMAIN, {"domain": name}),
    }


_SIGNING_SECRET_LINKS: dict[str, Link] = {
    "SigningSecretStatus": ("get", SIGNING_PATH, {}),
    "RotateSigningSecret": ("post", SIGNING_ROTATION_PATH, {}),
    "DeleteSigningSecret": ("delete", SIGNING_PATH, {}),
}
# What a client does next with what an answer gave it (OpenAPI links): the sequences a stateful
# test follows, so that every operation on a resource is reached with a resource that exists.
LINKS: dict[tuple[str, str, str], dict[str, Link]] = {
    ("post", "/api/v1/notifications/email", "202"): _job("$response.body#/data/jobId"),
    ("post", "/api/v1/notifications/webhook", "202"): _job("$response.body#/data/jobId"),
    ("get", "/api/v1/notifications/jobs", "200"): _job("$response.body#/data/data/0/id"),
    ("get", JOB, "200"): {"RetryJob": ("post", RETRY, {"id": "$response.body#/data/id"})},
    ("post", RETRY, "201"): {"GetJob": ("get", JOB, {"id": "$response.body#/data/jobId"})},
    ("post", CANCEL, "200"): {"GetJob": ("get", JOB, {"id": "$response.body#/data/id"})},
    ("put", PROVIDER, "201"): _provider("$response.body#/data/provider"),
    ("put", PROVIDER, "200"): _provider("$response.body#/data/provider"),
    ("get", "/api/v1/account/providers", "200"): _provider("$response.body#/data/0/provider"),
    ("patch", PROVIDER, "200"): {
        "DeleteProvider": ("delete", PROVIDER, {"provider": "$request.path.provider"})
    },
    ("post", "/api/v1/account/domains", "201"): _domain("$response.body#/data/domain"),
    ("get", "/api/v1/account/domains", "200"): _domain("$response.body#/data/0/domain"),
    ("post", VERIFY_DOMAIN, "200"): {"DeleteDomain": ("delete", DOMAIN, {"domain": "$request.path.domain"})},
    ("get", "/api/v1/account/suppressions", "200"): {
        "DeleteSuppression": (
            "delete",
            "/api/v1/account/suppressions/{email}",
            {"email": "$response.body#/data/0/email"},
        )
    },
    ("post", SIGNING_PATH, "201"): _SIGNING_SECRET_LINKS,
    ("post", SIGNING_ROTATION_PATH, "200"): _SIGNING_SECRET_LINKS,
}


def _add_links(paths: dict[str, Any]) -> None:
    operation_ids = {
        (method, path): operation["operationId"]
        for path, item in paths.items()
        for method, operation in item.items()
    }
    for (method, path, status), links in LINKS.items():
        response = paths[path][method]["responses"][status]
        response["links"] = {
            name: {"operationId": operation_ids[(target, target_path)], "parameters": parameters}
            for name, (target, target_path, parameters) in links.items()
        }


def finish(generated: dict[str, Any]) -> dict[str, Any]:
    """The document Powertools generated, made to describe what Herald answers."""
    document: dict[str, Any] = json.loads(json.dumps(generated))  # a copy of the caller's
    for path, item in document["paths"].items():
        for operation in item.values():
            _without_default_422(operation)
            if path in PUBLIC_PATHS:
                operation["security"] = []
    _add_links(document["paths"])
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in _POWERTOOLS_SCHEMAS:
        schemas.pop(name, None)
    schemas.update(_schemas())
    components["securitySchemes"] = SECURITY_SCHEMES
    document["security"] = SECURITY
    return document


@lru_cache(maxsize=1)
def _swagger_assets() -> tuple[str, str]:
    folder = Path(swagger_ui.__file__).parent
    return (
        (folder / "swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        (folder / "swagger-ui.min.css").read_text(encoding="utf-8"),
    )


def swagger_page(document: str) -> str:
    """Swagger UI (Powertools' bundled copy) showing exactly ``document``."""
    script, style = _swagger_assets()
    # "</" would close the page's script element early.
    return generate_swagger_html(document.replace("</", "<\\/"), script, style, "", None)
