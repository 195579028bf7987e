"""ApiFunction's cold start (its handler's import and its services) imports what every notification
request needs, and what only some requests need on their first use: the account routes and their
request bodies, the email address validator, the job queries, the day counts, console sessions, the
health check, the webhook URL check and the ports' protocols. Deferred routes answer as if they had
been included from the start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.http.resolver import HttpResolver

LOADED_ON_FIRST_USE = (
    "account_routes",
    "herald.http.account_requests",
    "herald.http.account_answers",
    "email_validator",
    "herald.services.activity",
    "herald.adapters.store.activity_store",
    "herald.services.sessions",
    "herald.adapters.store.signin_store",
    "herald.services.job_queries",
    "herald.adapters.health",
    "herald.adapters.ssrf",
    "herald.services.ports",  # the package: any of its modules loads it
    # Templates: their routes, and the engine only a templated send or a template route imports.
    "template_routes",
    "herald.services.templates",
    "herald.adapters.template_engine",
    "liquid",
    # Event types: their routes, and the schema engine only an event type route or an event imports.
    "event_type_routes",
    "herald.services.event_types",
    "herald.adapters.event_schemas",
    "jsonschema",
    "re2",
)
# Imports the handler (and builds its services if asked), then asks it for a method the first account
# route does not take.
PROBE = """
import json, sys
sys.path.insert(0, "functions/api")
import app
if sys.argv[2:] == ["services"]:
    app.api()
lazy = json.loads(sys.argv[1])
at_import = sorted(name for name in lazy if name in sys.modules)
event = {
    "rawPath": "/api/v1/account",
    "requestContext": {"http": {"method": "DELETE", "path": "/api/v1/account"}, "stage": "$default"},
    "headers": {},
    "isBase64Encoded": False,
}
answer = app.app.resolve(event, None)
print(json.dumps({
    "at_import": at_import,
    "status": answer["statusCode"],
    "allow": answer["headers"].get("Allow"),
    "account_routes": "account_routes" in sys.modules,
}))
"""


def probe_cold_start(environment: dict[str, str], *steps: str) -> dict[str, Any]:
    """What the handler's import (and ``steps``) loaded of ``LOADED_ON_FIRST_USE``, and the deferred
    route's answer."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(LOADED_ON_FIRST_USE), *steps],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=environment,
    )
    probed: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return probed


def test_the_handler_imports_none_of_what_only_some_requests_need_and_loads_the_account_routes_when_asked() -> (
    None
):
    probed = probe_cold_start({**os.environ, "POWERTOOLS_METRICS_NAMESPACE": "HeraldTest"})

    assert probed["at_import"] == []
    assert (probed["status"], probed["allow"], probed["account_routes"]) == (405, "GET", True)


def _own_routes(app: APIGatewayHttpResolver) -> None:
    @app.get("/items/<item>", summary="An item")
    def item(item: str) -> Response[str]:
        return Response(200, "text/plain", f"item {item}")

    @app.get("/items/recent")
    def recent() -> Response[str]:
        return Response(200, "text/plain", "recent")


def _other_router() -> Router:
    router = Router()  # type: ignore[no-untyped-call]  # Powertools leaves it untyped

    @router.get("/others/<other>")
    def other(other: str) -> Response[str]:
        return Response(200, "text/plain", f"other {other}")

    @router.put("/others/<other>")
    def replace(other: str) -> Response[str]:
        return Response(200, "text/plain", f"replaced {other}")

    @router.get("/others")
    def others() -> Response[str]:
        return Response(200, "text/plain", "others")

    return router


def _event(method: str, path: str) -> dict[str, Any]:
    return {
        "rawPath": path,
        "requestContext": {"http": {"method": method, "path": path}, "stage": "$default"},
        "headers": {},
        "isBase64Encoded": False,
    }


def _deferred() -> tuple[HttpResolver, list[str]]:
    loads: list[str] = []

    def load() -> Router:
        loads.append("loaded")
        return _other_router()

    app = HttpResolver(enable_validation=True)
    app.include_on_first_need(load)
    _own_routes(app)
    return app, loads


def test_deferred_routes_are_loaded_by_the_first_request_no_own_route_takes() -> None:
    app, loads = _deferred()

    assert app.resolve(_event("GET", "/items/7"), LambdaContext())["body"] == "item 7"
    assert loads == []
    assert app.resolve(_event("PUT", "/others/3"), LambdaContext())["body"] == "replaced 3"
    assert app.resolve(_event("GET", "/others"), LambdaContext())["body"] == "others"
    assert app.resolve(_event("GET", "/items/recent"), LambdaContext())["body"] == "recent"
    assert loads == ["loaded"]
    assert app.resolve(_event("GET", "/nowhere"), LambdaContext())["statusCode"] == 404


def test_deferred_routes_rank_and_document_as_if_included_first() -> None:
    eager = HttpResolver(enable_validation=True)
    eager.include_router(_other_router())
    _own_routes(eager)
    deferred, _ = _deferred()

    document = deferred.get_openapi_json_schema(title="T", version="1")

    assert document == eager.get_openapi_json_schema(title="T", version="1")
    assert [route.rule.pattern for route in deferred._dynamic_routes] == [
        route.rule.pattern for route in eager._dynamic_routes
    ]
    assert [route.rule.pattern for route in deferred._static_routes] == [
        route.rule.pattern for route in eager._static_routes
    ]
