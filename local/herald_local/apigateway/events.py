"""API Gateway HTTP API, payload format 2.0: the event a Lambda integration receives for a request,
and the HTTP response API Gateway makes of the function's answer.

Facts followed (AWS docs and captures of real events): header names lower-cased, repeated headers
and query parameters comma-joined; cookies moved out of the headers; ``rawPath`` and the parameters
percent-decoded while ``rawQueryString`` stays as sent; bodies of any type but ``text/*``,
``application/json``, ``application/xml`` and ``application/javascript`` (a missing type included)
base64-encoded (and, as docs/security.md decides under "Bodies that are not UTF-8", a body of a
text type whose bytes are not UTF-8); empty parts absent rather than null.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, unquote

from herald_local.apigateway.routes import RouteMatch
from herald_local.config import ACCOUNT_ID, LOOPBACK

TEXT_MEDIA_TYPES = frozenset({"application/json", "application/xml", "application/javascript"})
PAYLOAD_LIMIT_BYTES = 10 * 1024 * 1024
STAGE = "$default"


@dataclass(frozen=True)
class HttpRequest:
    method: str
    target: str  # path and query exactly as sent
    headers: Sequence[tuple[str, str]]
    body: bytes
    source_ip: str
    protocol: str = "HTTP/1.1"
    server_port: int = 80

    @property
    def raw_path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def raw_query(self) -> str:
        return self.target.split("?", 1)[1] if "?" in self.target else ""

    @property
    def path(self) -> str:
        return unquote(self.raw_path)


@dataclass
class HttpResponse:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def gateway_error(status: int, code: str, sentence: str) -> HttpResponse:
    """The gateway's own answers (no route, malformed request, function unreachable), in the API's
    error envelope so that a client reads every error of the local stack the same way."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    document = {"success": False, "error": sentence, "code": code, "timestamp": now}
    body = json.dumps(document, separators=(",", ":")).encode()
    return HttpResponse(status, [("Content-Type", "application/json")], body)


def _joined_headers(headers: Sequence[tuple[str, str]]) -> tuple[dict[str, str], list[str]]:
    joined: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in headers:
        key = name.lower()
        if key == "cookie":
            cookies += [part.strip() for part in value.split(";") if part.strip()]
            continue
        joined[key] = f"{joined[key]},{value}" if key in joined else value
    return joined, cookies


def _query_parameters(raw_query: str) -> dict[str, str]:
    parameters: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True):
        parameters[name] = f"{parameters[name]},{value}" if name in parameters else value
    return parameters


def is_text(content_type: str | None) -> bool:
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    return media_type.startswith("text/") or media_type in TEXT_MEDIA_TYPES


def _text_body(body: bytes, content_type: str | None) -> str | None:
    """The body as the event's text, or None when it travels base64-encoded: a body of a binary type,
    and one whose bytes are not UTF-8, whatever its type (the event is JSON text, which cannot carry
    them; replacing them would hand the function other bytes than the client sent)."""
    if not is_text(content_type):
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _request_id() -> str:
    return base64.b64encode(os.urandom(10)).decode()


def _trace_id() -> str:
    return f"Root=1-{int(time.time()):08x}-{os.urandom(12).hex()}"


@dataclass(frozen=True)
class ApiContext:
    """The API a request arrived at, and API Gateway's id and time for the request."""

    api_id: str
    request_id: str = field(default_factory=_request_id)
    epoch_ms: int = field(default_factory=lambda: int(time.time() * 1000))


def build_event(request: HttpRequest, match: RouteMatch, api: ApiContext) -> dict[str, Any]:
    headers, cookies = _joined_headers(request.headers)
    headers.setdefault("x-amzn-trace-id", _trace_id())
    headers["x-forwarded-for"] = request.source_ip
    headers["x-forwarded-port"] = str(request.server_port)
    headers["x-forwarded-proto"] = "http"
    # The gateway's own address, as API Gateway names the domain of its own that the request reached:
    # never the client's Host header, since Herald trusts domainName where it trusts no header.
    domain = f"{LOOPBACK}:{request.server_port}"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": match.route.route_key,
        "rawPath": request.path,
        "rawQueryString": request.raw_query,
    }
    if cookies:
        event["cookies"] = cookies
    event["headers"] = headers
    query = _query_parameters(request.raw_query)
    if query:
        event["queryStringParameters"] = query
    event["requestContext"] = {
        "accountId": ACCOUNT_ID,
        "apiId": api.api_id,
        "domainName": domain,
        "domainPrefix": domain.split(".", 1)[0],
        "http": {
            "method": request.method.upper(),
            "path": request.path,
            "protocol": request.protocol,
            "sourceIp": request.source_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": api.request_id,
        "routeKey": match.route.route_key,
        "stage": STAGE,
        "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(api.epoch_ms / 1000)),
        "timeEpoch": api.epoch_ms,
    }
    text = _text_body(request.body, headers.get("content-type")) if request.body else ""
    if request.body:
        event["body"] = text if text is not None else base64.b64encode(request.body).decode()
    event["isBase64Encoded"] = text is None
    if match.path_parameters:
        event["pathParameters"] = match.path_parameters
    return event


class InvalidIntegrationResponse(ValueError):
    """The function's answer is not a valid payload 2.0 response; API Gateway answers 500."""


def _header_pairs(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    headers = document.get("headers") or {}
    multi = document.get("multiValueHeaders") or {}
    cookies = document.get("cookies") or []
    if not isinstance(headers, dict) or not isinstance(multi, dict) or not isinstance(cookies, list):
        raise InvalidIntegrationResponse("headers, multiValueHeaders or cookies have the wrong type")
    pairs = [(str(name), str(value)) for name, value in headers.items()]
    pairs += [(str(name), str(value)) for name, values in multi.items() for value in values]
    pairs += [("Set-Cookie", str(cookie)) for cookie in cookies]
    return pairs


def _structured_response(document: Mapping[str, Any]) -> HttpResponse:
    try:
        status = int(document["statusCode"])
    except (TypeError, ValueError) as exc:
        raise InvalidIntegrationResponse("statusCode is not a number") from exc
    body = document.get("body")
    if body is not None and not isinstance(body, str):
        raise InvalidIntegrationResponse("body is not a string")
    raw = (body or "").encode()
    if document.get("isBase64Encoded") and body:
        raw = base64.b64decode(body)
    return HttpResponse(status, _header_pairs(document), raw)


def map_response(payload: bytes) -> HttpResponse:
    """The HTTP response for a function's raw answer (payload format 2.0)."""
    try:
        document = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise InvalidIntegrationResponse("the function did not answer JSON") from exc
    if isinstance(document, dict) and "statusCode" in document:
        return _structured_response(document)
    # Valid JSON without a statusCode: API Gateway answers 200 with the payload as a JSON body.
    return HttpResponse(200, [("Content-Type", "application/json")], payload)
