"""ApiFunction: the NotifyKit-compatible HTTP API. Parses requests, calls the herald core, answers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from headers import IdempotencyHeader

import herald
from herald.composition import startup
from herald.composition.api import api
from herald.composition.common import public_origin
from herald.domain.access import Ability
from herald.domain.account import TenantContext
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.domain.notifications import NotificationRequest
from herald.domain.portal import PORTAL_API_PREFIX, PORTAL_SESSION_PATH
from herald.domain.search import SUBJECT_KEPT
from herald.domain.vendors import TENANT_PROVIDERS
from herald.http.answers import (
    PONG,
    AcceptedJob,
    Health,
    Job,
    JobPage,
    ListedJob,
    Pong,
    Recovery,
    RetriedJob,
    ServiceInfo,
    SupportedProvider,
    json_response,
)
from herald.http.contract import (
    AUTHENTICATED,
    JSON_BODY,
    PARAMETERS,
    PATH_PARAMETERS,
    PUBLIC_PATHS,
    SENDING,
    answers,
    download,
    errors,
    success,
)
from herald.http.credentials import credentials, stack_origin
from herald.http.error_handlers import install_error_handlers
from herald.http.errors import client_error
from herald.http.export import EXPORT_LIMIT, MEDIA_TYPES, exported
from herald.http.guards import ScreenedBodies, as_resolver_reads
from herald.http.requests import (
    SEARCHED_ADDRESS,
    SEARCHED_HOST,
    UTC_DAY,
    EmailRequest,
    RecoverRequest,
    WebhookRequest,
    WindowEdge,
    job_search,
)
from herald.http.resolver import HttpResolver
from herald.http.responses import error_response, validation_error
from herald.http.transport import secured
from herald.observability import logger, metrics, traced

DESCRIPTION = (
    "Multi-tenant email and webhook notifications, wire-compatible with the NotifyKit SDK v2: its "
    "baseUrl is this API's origin (the SDK adds /api/v1 itself)."
)
EMAIL_ROUTING = (
    ErrorCode.PLAN_REQUIRED,
    ErrorCode.PROVIDER_REQUIRED,
    ErrorCode.PROVIDER_NOT_CONFIGURED,
    ErrorCode.FROM_NOT_ALLOWED,
)
# A send that names a template: it must exist (published, unless a version is named) and render.
TEMPLATED = (
    ErrorCode.TEMPLATE_NOT_FOUND,
    ErrorCode.TEMPLATE_NOT_PUBLISHED,
    ErrorCode.TEMPLATE_RENDER_FAILED,
)

SERVICE_INFO = ServiceInfo(
    name="Herald",
    version=herald.__version__,
    description="Multi-tenant email and webhook notifications (NotifyKit-compatible API).",
    documentation="/api/v1/docs",
)


def _account_router() -> Router:
    """Imported on first need: no notification request takes an account route."""
    import access_routes  # noqa: F401 (registers the key, member and audit routes on the same router)
    import event_routes  # noqa: F401 (registers the event routes on the same router)
    import event_type_routes  # noqa: F401 (registers the event type routes on the same router)
    import portal_routes  # noqa: F401 (registers the portal link and the portal page's routes)
    import subscription_routes  # noqa: F401 (registers the subscription routes on the same router)
    import template_routes  # noqa: F401 (registers the template routes on the same router)
    from account_routes import router

    return router


bodies = ScreenedBodies()
app = HttpResolver(enable_validation=True, json_body_deserializer=bodies.deserialize)
install_error_handlers(app)
app.include_on_first_need(_account_router)


def tenant(ability: Ability | None) -> TenantContext:
    """The caller, if it may do ``ability`` (None: any authenticated caller)."""
    return api().callers.authenticate(credentials(app.current_event.raw_event, public_origin()), ability)


# ---------------------------------------------------------------- public, no key


@app.get("/api/v1/ping", summary="Liveness", responses=success(200, Pong, "pong"))
def ping() -> Response[str]:
    return json_response(200, PONG)


@app.get("/api/v1/info", summary="Service information", responses=success(200, ServiceInfo, "Herald"))
def info() -> Response[str]:
    return json_response(200, SERVICE_INFO)


@app.get(
    "/api/v1/providers",
    summary="The email providers a tenant can bring its own key for",
    responses=success(200, list[SupportedProvider], "The providers, with what each asks for"),
)
def supported_providers() -> Response[str]:
    return json_response(200, [SupportedProvider.of(name) for name in TENANT_PROVIDERS])


@app.get(
    "/api/v1/health",
    summary="Reachability of the table and the queues",
    responses={
        **success(200, Health, "Everything reachable"),
        **success(503, Health, "The table or a queue cannot be reached"),
    },
)
def health() -> Response[str]:
    healthy, checks = api().health()
    return json_response(200 if healthy else 503, Health.of(healthy, checks))


@lru_cache(maxsize=1)
def _openapi_document() -> str:
    from herald.http.openapi import finish

    generated = app.get_openapi_schema(
        title="Herald API", version=herald.__version__, description=DESCRIPTION
    )
    return json.dumps(finish(generated.model_dump(mode="json", by_alias=True, exclude_none=True)))


@app.get("/api/v1/openapi.json", include_in_schema=False)
def openapi_document() -> Response[str]:
    return Response(200, "application/json", _openapi_document())


@app.get("/api/v1/docs", include_in_schema=False)
def docs() -> Response[str]:
    """Swagger UI over the very document /openapi.json serves (also as ?format=json, its own link)."""
    if (app.current_event.query_string_parameters or {}).get("format") == "json":
        return openapi_document()
    page, policy = _docs_page()
    return Response(200, "text/html", page, headers={"Content-Security-Policy": policy})


@lru_cache(maxsize=1)
def _docs_page() -> tuple[str, str]:
    from herald.http.openapi import swagger_page, swagger_policy

    page = swagger_page(_openapi_document())
    return page, swagger_policy(page)


# ---------------------------------------------------------------- notifications


@app.post(
    "/api/v1/notifications/email",
    summary="Send an email",
    responses=answers(
        202, AcceptedJob, "Accepted", *AUTHENTICATED, *JSON_BODY, *SENDING, *EMAIL_ROUTING, *TEMPLATED
    ),
)
def send_email(request: Annotated[EmailRequest, Body()], key: IdempotencyHeader = None) -> Response[str]:
    return _accepted(request.to_request(), key)


@app.post(
    "/api/v1/notifications/webhook",
    summary="Send a webhook",
    responses=answers(
        202, AcceptedJob, "Accepted", *AUTHENTICATED, *JSON_BODY, *SENDING, ErrorCode.URL_NOT_ALLOWED
    ),
)
def send_webhook(request: Annotated[WebhookRequest, Body()], key: IdempotencyHeader = None) -> Response[str]:
    return _accepted(request.to_request(), key)


def _accepted(request: NotificationRequest, header_key: str | None) -> Response[str]:
    caller = credentials(app.current_event.raw_event, public_origin())
    return json_response(202, AcceptedJob.of(api().accept.accept(caller, request, header_key)))


# The jobs list's filters, shared by the list and its export.
TypeQuery = Annotated[Literal["email", "webhook"] | None, Query()]
StatusQuery = Annotated[
    Literal["scheduled", "pending", "processing", "completed", "failed", "cancelled"] | None, Query()
]
CursorQuery = Annotated[str | None, Query(max_length=512, description="nextCursor of the previous page")]
DayQuery = Annotated[
    str | None,
    Query(
        pattern=UTC_DAY,
        description="Only the jobs accepted on this UTC day (YYYY-MM-DD); since and until narrow it",
        json_schema_extra={"format": "date"},
    ),
]
RecipientQuery = Annotated[
    str | None,
    Query(
        max_length=320,
        pattern=SEARCHED_ADDRESS,
        description="Only the emails to this address (exact, case-insensitive)",
    ),
]
HostQuery = Annotated[
    str | None,
    Query(
        max_length=253,
        pattern=SEARCHED_HOST,
        description="Only the webhooks to this URL host (case-insensitive; IDN hosts as punycode)",
    ),
]
SubjectQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=SUBJECT_KEPT,
        description=f"Only the emails whose subject (its first {SUBJECT_KEPT} characters) contains this, "
        "case-insensitive",
    ),
]
SinceQuery = Annotated[
    WindowEdge | None, Query(description="Accepted at or after this RFC 3339 time with offset")
]
UntilQuery = Annotated[WindowEdge | None, Query(description="Accepted before this RFC 3339 time with offset")]
SEARCH_NOTE = (
    "With recipient, host, subject, since or until, the list is a search: it reads a bounded number "
    "of entries per call, so a page may hold fewer jobs than asked for while nextCursor goes on; "
    "total then counts the page's jobs."
)


@app.get(
    "/api/v1/notifications/jobs/export",
    summary="Export the filtered jobs list as CSV or JSON lines",
    description=f"The jobs the list's filters find, newest first, as a file: at most {EXPORT_LIMIT} rows "
    "per call; while more follow, X-Next-Cursor (and Link rel=next) names the next part. CSV cells "
    "that a spreadsheet would run as a formula (starting with = + - @) start with an apostrophe.",
    responses={
        **download(
            "The jobs, one row each",
            {
                MEDIA_TYPES["csv"]: "CSV with a header row",
                MEDIA_TYPES["jsonl"]: "One job (as listed) per line",
            },
        ),
        **errors(*AUTHENTICATED, *PARAMETERS, ErrorCode.INVALID_CURSOR),
    },
)
def export_jobs(
    *,
    format: Annotated[Literal["csv", "jsonl"], Query(description="csv or jsonl")] = "csv",  # noqa: A002
    type: TypeQuery = None,  # noqa: A002 (the query name)
    status: StatusQuery = None,
    cursor: CursorQuery = None,
    day: DayQuery = None,
    recipient: RecipientQuery = None,
    host: HostQuery = None,
    subject: SubjectQuery = None,
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> Response[str]:
    search = job_search(
        recipient=recipient,
        host=host,
        subject=subject,
        window=(since, until),
        day=_day(day) if day else None,
        channel=type,
        status=status,
    )
    found = api().jobs.search(tenant(Ability.READ).tenant_id, search, limit=EXPORT_LIMIT, cursor=cursor)
    jobs = [ListedJob.listed(state) for state in found.items]
    headers = {"Content-Disposition": f'attachment; filename="herald-jobs.{format}"'}
    if found.next_cursor:
        headers |= {
            "X-Next-Cursor": found.next_cursor,
            "Link": f'<{_next_part(found.next_cursor)}>; rel="next"',
        }
    return Response(200, f"{MEDIA_TYPES[format]}; charset=utf-8", exported(jobs, format), headers)


def _next_part(cursor: str) -> str:
    query = dict(app.current_event.query_string_parameters or {}) | {"cursor": cursor}
    return f"/api/v1/notifications/jobs/export?{urlencode(query)}"


@app.get(
    "/api/v1/notifications/jobs/<id>",
    summary="Get a job",
    responses=answers(200, Job, "The job", *AUTHENTICATED, *PATH_PARAMETERS, ErrorCode.JOB_NOT_FOUND),
)
def get_job(id: Annotated[str, Path(max_length=64)]) -> Response[str]:  # noqa: A002 (the route's {id})
    logger.append_keys(job_id=id)
    return json_response(200, Job.of_view(api().jobs.get(tenant(Ability.READ), id)))


@app.get(
    "/api/v1/notifications/jobs",
    summary="List or search jobs, newest first",
    description=SEARCH_NOTE,
    responses=answers(200, JobPage, "A page of jobs", *AUTHENTICATED, *PARAMETERS, ErrorCode.INVALID_CURSOR),
)
def list_jobs(
    *,
    page: Annotated[int, Query(ge=1)] = 1,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    type: TypeQuery = None,  # noqa: A002 (the query name)
    status: StatusQuery = None,
    cursor: CursorQuery = None,
    day: DayQuery = None,
    recipient: RecipientQuery = None,
    host: HostQuery = None,
    subject: SubjectQuery = None,
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> Response[str]:
    if recipient or host or subject or since or until:
        search = job_search(
            recipient=recipient,
            host=host,
            subject=subject,
            window=(since, until),
            day=_day(day) if day else None,
            channel=type,
            status=status,
        )
        found = api().jobs.search(tenant(Ability.READ).tenant_id, search, limit=limit, cursor=cursor)
        return json_response(200, JobPage.found(found, limit=limit))
    listing = api().jobs.list(
        tenant(Ability.READ),
        page=page,
        limit=limit,
        channel=Channel(type) if type else None,
        status=JobStatus(status) if status else None,
        cursor=cursor,
        day=_day(day) if day else None,
    )
    return json_response(200, JobPage.of(listing, page=page, limit=limit))


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise HeraldError(
            f"Invalid request: day: {value} is not a date.", ErrorCode.VALIDATION_ERROR
        ) from exc


@app.post(
    "/api/v1/notifications/jobs/<id>/retry",
    summary="Retry a failed job",
    responses=answers(
        201,
        RetriedJob,
        "Re-queued",
        *AUTHENTICATED,
        *PATH_PARAMETERS,
        ErrorCode.JOB_NOT_RETRYABLE,
        ErrorCode.QUEUE_UNAVAILABLE,
    ),
)
def retry_job(id: Annotated[str, Path(max_length=64)]) -> Response[str]:  # noqa: A002 (the route's {id})
    logger.append_keys(job_id=id)
    return json_response(201, RetriedJob.of(api().jobs.retry(tenant(Ability.SEND), id)))


@app.post(
    "/api/v1/notifications/jobs/<id>/cancel",
    summary="Cancel a scheduled job",
    responses=answers(
        200,
        Job,
        "Cancelled",
        *AUTHENTICATED,
        *PATH_PARAMETERS,
        ErrorCode.JOB_NOT_FOUND,
        ErrorCode.JOB_NOT_CANCELLABLE,
    ),
)
def cancel_job(id: Annotated[str, Path(max_length=64)]) -> Response[str]:  # noqa: A002 (the route's {id})
    logger.append_keys(job_id=id)
    return json_response(200, Job.of_view(api().jobs.cancel(tenant(Ability.SEND), id)))


@app.post(
    "/api/v1/notifications/jobs/recover",
    summary="Re-queue the failed jobs accepted in a time window",
    responses=answers(
        200,
        Recovery,
        "Re-queued (at most 1000; nextCursor continues)",
        *AUTHENTICATED,
        *JSON_BODY,
        ErrorCode.INVALID_CURSOR,
        ErrorCode.QUEUE_UNAVAILABLE,
    ),
)
def recover_jobs(request: Annotated[RecoverRequest, Body()]) -> Response[str]:
    until = request.until or datetime.now(UTC)
    channel = Channel(request.type) if request.type else None
    result = api().jobs.recover(tenant(Ability.SEND), (request.since, until), channel, request.cursor)
    return json_response(200, Recovery.of(result))


# ---------------------------------------------------------------- errors


@app.exception_handler(RequestValidationError)
def invalid_request(error: RequestValidationError) -> Response[str]:
    # The caller's identity is checked before their input: 401/403 win over body problems.
    if app.current_event.path not in PUBLIC_PATHS:
        try:
            _caller_of(app.current_event.path)
        except Exception as auth_error:  # noqa: BLE001 - answered like any failure of the route
            return error_response(client_error(auth_error))
    return error_response(validation_error(error.errors()))


def _caller_of(path: str) -> None:
    """Who the request is: a portal route's portal session (the link's exchange has none yet), any
    other route's key or console session."""
    if not path.startswith(f"{PORTAL_API_PREFIX}/"):
        tenant(None)
    elif path != PORTAL_SESSION_PATH or app.current_event.http_method != "POST":
        from portal_routes import portal_caller

        portal_caller(app.current_event.raw_event)


@traced
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    answer = bodies.admit(event) or app.resolve(as_resolver_reads(event), context)
    return secured(answer, stack_origin(event, public_origin()), api=True)


startup.finish()
