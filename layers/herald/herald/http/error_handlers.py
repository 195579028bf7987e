"""The answers every Powertools-routed HTTP function (the API, the console) gives to what its routes
raise, and to a request no route takes: the one mapping of ``herald.http.errors``, a 404 for an
unknown path, and a 405 with an exact ``Allow`` for a path asked with a method it does not take
(RFC 9110). Each function adds its own answer to a body that fails validation (the API checks the
caller first)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from herald.domain.errors import ErrorCode, HeraldError
from herald.http.errors import client_error
from herald.http.responses import error_response
from herald.http.routes import methods_elsewhere


def install_error_handlers(app: APIGatewayHttpResolver) -> None:
    @app.exception_handler(Exception)
    def failed(error: Exception) -> Response[str]:
        return error_response(client_error(error))

    @app.not_found
    def unknown_route(_: NotFoundError) -> Response[str]:
        event = app.current_event
        allowed = allowed_methods(app, event.path)
        if not allowed:
            return error_response(
                HeraldError(f"No route {event.http_method} {event.path}.", ErrorCode.NOT_FOUND)
            )
        refusal = error_response(
            HeraldError(
                f"{event.path} does not accept {event.http_method} requests.", ErrorCode.METHOD_NOT_ALLOWED
            )
        )
        refusal.headers["Allow"] = ", ".join(allowed)
        return refusal


def allowed_methods(app: APIGatewayHttpResolver, path: str) -> list[str]:
    """Every method a route takes at ``path``: the resolver's routes (its own table, which it
    matches requests against) and the template's routes under /api/v1 to other functions."""
    # Powertools has no public view of these. A path a static route names is that route's alone
    # (``/jobs/recover``), not also a value of a dynamic one's parameter (``/jobs/{id}``).
    static = {route.method for route in app._static_routes if route.rule.match(path)}
    served = static or {route.method for route in app._dynamic_routes if route.rule.match(path)}
    return sorted(served | methods_elsewhere(path))
