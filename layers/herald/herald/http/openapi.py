"""The API's OpenAPI document, finished from what Powertools generates out of the routes.

Powertools describes each route's parameters and request model, and the responses each route
declares through ``herald.http.contract``. This module adds what those declarations name: the
schemas of the answer models the routes serialise (``herald.http.answers``), each inside the
success envelope, and of the error envelope, generated from the very models that write the answers;
the two ways to present an API key, ``security: []`` on the public routes, the links between
operations (what a client does next with an answer: fetch the job it sent, reorder the provider it
stored), which a stateful test follows, and the ``webhooks`` a subscription receives
(``herald.http.event_webhooks``). It also takes out the 422 ``HTTPValidationError`` Powertools adds
to every route: Herald answers invalid input with 400 in its error envelope.

Imported only when the document is first asked for, so no send pays for these schemas.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import msgspec
from aws_lambda_powertools.event_handler.openapi import swagger_ui
from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

from herald.http.contract import BODIES, ENVELOPE_SUFFIX, PUBLIC_PATHS, SCHEMAS, ref
from herald.http.envelope import ErrorEnvelope
from herald.http.event_webhooks import api_webhooks

SECURITY_SCHEMES = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "bearer": {"type": "http", "scheme": "bearer", "description": "The API key as a bearer token"},
}
# Either way of presenting the key; X-API-Key wins when a request has both.
SECURITY: list[dict[str, list[str]]] = [{"apiKey": []}, {"bearer": []}]
_POWERTOOLS_422 = {"$ref": SCHEMAS + "HTTPValidationError"}
_POWERTOOLS_SCHEMAS = ("HTTPValidationError", "ValidationError", "ResponseValidationError")


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
    """Every declared body's schema, its success envelope, and the error envelope, by component name
    (a model's components are named after it; a list's is added under its own name)."""
    bodies, schemas = msgspec.json.schema_components(
        [*BODIES.values(), ErrorEnvelope], ref_template=SCHEMAS + "{name}"
    )
    for name, schema in zip(BODIES, bodies, strict=False):  # the last of bodies: the error envelope
        if schema != ref(name):
            schemas[name] = schema
        schemas[name + ENVELOPE_SUFFIX] = _envelope(name)
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
EVENT_TYPE = "/api/v1/event-types/{name}"
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


def _event_type(name: str) -> dict[str, Link]:
    return {
        "GetEventType": ("get", EVENT_TYPE, {"name": name}),
        "UpdateEventType": ("patch", EVENT_TYPE, {"name": name}),
        "ArchiveEventType": ("delete", EVENT_TYPE, {"name": name}),
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
    ("get", "/api/v1/account/unsubscribes", "200"): {
        "DeleteUnsubscribe": (
            "delete",
            "/api/v1/account/unsubscribes/{email}",
            {"email": "$response.body#/data/data/0/email", "topic": "$response.body#/data/data/0/topic"},
        )
    },
    ("post", "/api/v1/event-types", "201"): _event_type("$response.body#/data/name"),
    ("get", "/api/v1/event-types", "200"): _event_type("$response.body#/data/0/name"),
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
    document["webhooks"] = api_webhooks()
    return document


@lru_cache(maxsize=1)
def _swagger_assets() -> tuple[str, str]:
    folder = Path(swagger_ui.__file__).parent
    return (
        (folder / "swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        (folder / "swagger-ui.min.css").read_text(encoding="utf-8"),
    )


class _InlineCode(HTMLParser):
    """The text of each inline script and style element of a page, as a browser hashes it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002
        if tag in self.inline:
            self._open = tag
            self.inline[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._open:
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.inline[self._open][-1] += data


def _hashes(texts: list[str]) -> str:
    return " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'" for text in texts
    )


def swagger_policy(page: str) -> str:
    """The docs page's Content-Security-Policy: its own inline script and style by their hashes
    (Swagger UI ships inlined), nothing from elsewhere, requests ("Try it out") to this origin only."""
    parser = _InlineCode()
    parser.feed(page)
    return (
        f"default-src 'none'; script-src {_hashes(parser.inline['script'])}; "
        f"style-src {_hashes(parser.inline['style'])}; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def swagger_page(document: str) -> str:
    """Swagger UI (Powertools' bundled copy) showing exactly ``document``."""
    script, style = _swagger_assets()
    # "</" would close the page's script element early.
    return generate_swagger_html(document.replace("</", "<\\/"), script, style, "", None)
