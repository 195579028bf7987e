"""The request body: the exact bytes a client sent, and the checks they pass before any route parses
them: size, media type and a JSON document Herald can read. Each refusal is a 4xx in the error envelope, never a 500 from deep inside
a parser: a body nested thousands of levels, a 5 000-digit number, bytes that are not UTF-8, a form
post to a JSON API, or an object naming a field twice.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from herald.domain.errors import ErrorCode, HeraldError
from herald.http.errors import refusal

JSON = "application/json"
# Raw body limits per route, checked before parsing: the email route carries up to two 256 KiB
# bodies (HTML and text) and inline attachments in base64, within Lambda's 6 MB limit of a
# synchronous invocation's event (the API Gateway event around the body takes the rest); larger files
# come by URL. Everything else is small.
EMAIL_ROUTE_LIMIT = 5 * 1024 * 1024
DEFAULT_BODY_LIMIT = 64 * 1024
# Deeper than any notification needs; Python's parsers recurse per level, so depth is bounded first.
MAX_JSON_DEPTH = 64
# The methods whose routes may read a body.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_OPENERS, _CLOSERS = frozenset(b"[{"), frozenset(b"]}")


def raw_body(event: Mapping[str, Any]) -> bytes:
    """The exact bytes a client sent, from an API Gateway v2 (HTTP API) event. Signatures are
    computed over these bytes, so they are taken before anything parses the body: re-serialised
    JSON differs in spacing, key order and escapes. API Gateway hands a binary body over in base64
    (``isBase64Encoded``) and a text body as text, which UTF-8 turns back into the bytes that arrived."""
    body: str = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body)
    return body.encode("utf-8")


def body_limit(method: str, path: str) -> int:
    if method.upper() == "POST" and path.rstrip("/").endswith("/notifications/email"):
        return EMAIL_ROUTE_LIMIT
    return DEFAULT_BODY_LIMIT


class ScreenedBodies:
    """Screens each request's body before the resolver runs, and hands the resolver the JSON the
    screen parsed (its ``json_body_deserializer``), so a body is parsed once."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._document: Any = None

    def admit(self, event: Mapping[str, Any]) -> dict[str, Any] | None:
        """The answer (API Gateway v2 shape) to a body no route should parse; None when it may go on."""
        try:
            self._text, self._document = _check(event)
        except HeraldError as error:
            self._text = self._document = None
            return refusal(error)
        return None

    def deserialize(self, text: str) -> Any:
        if self._text is not None and text == self._text:
            return self._document
        return _loads(text)


def as_resolver_reads(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with a JSON body's media type in lower case, the one spelling the resolver knows:
    media types are case-insensitive (RFC 9110), but Powertools picks its body parser by a
    case-sensitive prefix, and ``APPLICATION/JSON`` reached none (a 500). For events
    ``ScreenedBodies.admit`` let through."""
    if _media_type(event) != JSON:
        return event
    headers = dict(event.get("headers") or {})
    for name, value in headers.items():
        if str(name).lower() == "content-type":
            parameters = str(value).partition(";")[2]
            headers[name] = JSON + (f";{parameters}" if parameters else "")
    return {**event, "headers": headers}


def _check(event: Mapping[str, Any]) -> tuple[str | None, Any]:
    """The body as text and its JSON document when it has one (None, None without a body)."""
    method = str(event.get("requestContext", {}).get("http", {}).get("method", ""))
    try:
        body = raw_body(event)
    except (binascii.Error, ValueError) as exc:
        raise HeraldError("The request body is not valid base64.", ErrorCode.INVALID_JSON) from exc
    limit = body_limit(method, str(event.get("rawPath", "")))
    if len(body) > limit:
        raise HeraldError(
            f"The request body is larger than this route accepts ({limit} bytes).",
            ErrorCode.PAYLOAD_TOO_LARGE,
        )
    media_type = _media_type(event)
    if not body.strip():
        # A route that reads a body parses even an empty one by its declared type (form parsers
        # crash on an empty multipart body): an empty body may be undeclared or JSON, nothing else.
        if method.upper() in BODY_METHODS and media_type not in {"", JSON}:
            raise _not_json(media_type)
        return None, None
    if media_type != JSON:
        raise _not_json(media_type)
    return _parsed_json(body)


def _media_type(event: Mapping[str, Any]) -> str:
    headers = {str(name).lower(): str(value) for name, value in (event.get("headers") or {}).items()}
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _not_json(media_type: str) -> HeraldError:
    return HeraldError(
        f"Request bodies must be JSON (Content-Type: application/json); this one is {media_type or 'none'}.",
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    )


def _parsed_json(body: bytes) -> tuple[str, Any]:
    if _depth(body) > MAX_JSON_DEPTH:
        raise HeraldError(
            f"The request body is nested more than {MAX_JSON_DEPTH} levels deep.", ErrorCode.INVALID_JSON
        )
    try:
        text = body.decode("utf-8")
        return text, _loads(text)
    except UnicodeDecodeError as exc:
        raise HeraldError("The request body is not UTF-8 text.", ErrorCode.INVALID_JSON) from exc
    except ValueError as exc:
        # Also Python's own limit on integer digits (4300): such a number is no priority or id.
        raise HeraldError(
            f"The request body is not valid JSON: {_short(exc)}.", ErrorCode.INVALID_JSON
        ) from exc


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_unique_names)


def _unique_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose names are unique (I-JSON, RFC 7493): with ``{"to": a, "to": b}`` Python keeps
    b while another parser on the way (a proxy, a WAF) may have judged a."""
    document = dict(pairs)
    if len(document) < len(pairs):
        names = [name for name, _ in pairs]
        twice = next(name for index, name in enumerate(names) if name in names[:index])
        raise HeraldError(
            f"The request body names '{twice[:64]}' twice in one object; names must be unique.",
            ErrorCode.INVALID_JSON,
        )
    return document


def _depth(body: bytes) -> int:
    """The deepest nesting of arrays and objects, brackets inside strings not counted."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # cannot be deeper than the limit: spare the byte-by-byte scan (long HTML bodies)
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif byte in _CLOSERS:
            depth -= 1
    return deepest


def _short(exc: ValueError) -> str:
    return str(exc).split(";", 1)[0][:120]
