"""What each route of the API answers, as its OpenAPI document states it: the success status and
the answer model (``herald.http.answers``) it serialises, and every error code the route can
answer, under the status the one error table gives it.

Only names, small dicts and the models the routes name live here, so the send path's cold start
pays nothing for the document: the schemas are built from the models by ``herald.http.openapi``
when the document is first asked for.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING, Any, cast, get_args

from herald.domain.errors import ErrorCode
from herald.http.error_table import status_of

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseHeader

    from herald.http.envelope import Answer

JSON = "application/json"
SCHEMAS = "#/components/schemas/"
# The error envelope's schema, and the suffix of each success body's envelope schema.
ERROR_ENVELOPE = "ErrorEnvelope"
ENVELOPE_SUFFIX = "Response"

# Routes that need no API key: liveness, service information, the providers a tenant can bring and
# the API's own documentation.
PUBLIC_PATHS = frozenset(
    {
        "/api/v1/ping",
        "/api/v1/info",
        "/api/v1/health",
        "/api/v1/providers",
        "/api/v1/openapi.json",
        "/api/v1/docs",
    }
)

# Every route with an API key answers these; every route that reads the table may find it away.
AUTHENTICATED = (
    ErrorCode.MISSING_API_KEY,
    ErrorCode.MALFORMED_API_KEY,
    ErrorCode.INVALID_API_KEY,
    ErrorCode.TENANT_DISABLED,
    ErrorCode.INSUFFICIENT_SCOPE,
    ErrorCode.DEPENDENCY_UNAVAILABLE,
    # Without an API key, the console's session cookie authenticates (docs/console.md).
    ErrorCode.INVALID_SESSION,
    ErrorCode.CROSS_ORIGIN_REQUEST,
)
# A route with query or header parameters answers a value outside their rules with this.
PARAMETERS = (ErrorCode.VALIDATION_ERROR,)
# A path parameter is refused like any other when too long; one with a character no route's pattern
# takes (outside word characters and URI punctuation) matches no route at all.
PATH_PARAMETERS = (ErrorCode.VALIDATION_ERROR, ErrorCode.NOT_FOUND)
# A route that reads a JSON body answers these for a body it cannot take.
JSON_BODY = (
    ErrorCode.VALIDATION_ERROR,
    ErrorCode.INVALID_JSON,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
)
# Sending a notification, beyond its body's rules.
SENDING = (
    ErrorCode.RATE_LIMIT_EXCEEDED,
    ErrorCode.QUOTA_EXCEEDED,
    ErrorCode.DUPLICATE_REQUEST,
    ErrorCode.IDEMPOTENCY_KEY_REUSED,
    ErrorCode.IDEMPOTENCY_KEY_MISMATCH,
    ErrorCode.SEND_AT_OUT_OF_RANGE,
    ErrorCode.STORAGE_UNAVAILABLE,
    ErrorCode.QUEUE_UNAVAILABLE,
)


def ref(name: str) -> dict[str, str]:
    return {"$ref": SCHEMAS + name}


# Every success body a route declares, by its schema's name: the bodies the document describes.
BODIES: dict[str, type[Answer] | type[list[Any]]] = {}


def body_name(body: type[Answer] | type[list[Any]]) -> str:
    """A model's schema name; a list of a model's is named after it: ``list[Provider]``, ProviderList."""
    listed = get_args(body)
    return f"{listed[0].__name__}List" if listed else body.__name__


def success(
    status: int, body: type[Answer] | type[list[Any]], description: str
) -> dict[int, OpenAPIResponse]:
    """``status`` with ``body`` (an answer model, or a list of one) as ``data`` of the success envelope."""
    name = body_name(body)
    BODIES[name] = body
    return {status: {"description": description, "content": {JSON: {"schema": ref(name + ENVELOPE_SUFFIX)}}}}


# Powertools' type of a response header leaves out "required", which the document keeps.
_RETRY_AFTER = cast(
    "OpenAPIResponseHeader",
    {
        "description": "Seconds until the next minute's budget (also retryAfter in the body)",
        "required": True,
        "schema": {"type": "integer", "minimum": 0},
    },
)


def errors(*codes: ErrorCode) -> dict[int, OpenAPIResponse]:
    """One response per status these codes have, each naming its codes (the envelope's ``code``)."""
    answers: dict[int, OpenAPIResponse] = {}
    ordered = sorted(set(codes), key=lambda code: (status_of(code), code.value))
    for status, group in groupby(ordered, key=status_of):
        names = [code.value for code in group]
        schema: dict[str, Any] = {"allOf": [ref(ERROR_ENVELOPE), {"properties": {"code": {"enum": names}}}]}
        answers[status] = {"description": ", ".join(names), "content": {JSON: {"schema": schema}}}
        if ErrorCode.RATE_LIMIT_EXCEEDED in names:
            answers[status]["headers"] = {"Retry-After": _RETRY_AFTER}
    return answers


def download(description: str, media_types: dict[str, str]) -> dict[int, OpenAPIResponse]:
    """A 200 whose body is a file to save (``media_types``: each type with what its body holds)."""
    headers = cast(
        "dict[str, OpenAPIResponseHeader]",
        {
            "Content-Disposition": {
                "description": "attachment, with a file name",
                "schema": {"type": "string"},
            },
            "X-Next-Cursor": {
                "description": "Present while more rows follow: pass it as cursor for the next part",
                "schema": {"type": "string"},
            },
            "Link": {
                "description": 'The next part\'s URL, rel="next", while more rows follow',
                "schema": {"type": "string"},
            },
        },
    )
    content: dict[str, Any] = {
        media_type: {"schema": {"type": "string", "description": holds}}
        for media_type, holds in media_types.items()
    }
    return {200: {"description": description, "content": content, "headers": headers}}


def answers(
    status: int, body: type[Answer] | type[list[Any]], description: str, *codes: ErrorCode
) -> dict[int, OpenAPIResponse]:
    """A route's ``responses``: its success and its errors."""
    return {**success(status, body, description), **errors(*codes)}
