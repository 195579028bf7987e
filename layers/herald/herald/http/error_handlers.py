"""The answers every HTTP function gives to errors, installed on its Powertools resolver: a domain
error in its envelope, a dependency that did not answer (503, logged), an unknown route (404), and
anything unexpected (500, logged with its stack). Each function adds its own answer to a body that
fails validation (the API checks the caller first)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError

from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.http.responses import error_response
from herald.observability import logger


def install_error_handlers(app: APIGatewayHttpResolver) -> None:
    @app.exception_handler(HeraldError)
    def herald_error(error: HeraldError) -> Response[str]:
        return error_response(error)

    @app.exception_handler(DependencyError)
    def dependency_failed(error: DependencyError) -> Response[str]:
        # The table, a queue or KMS did not answer: the request changed nothing the client must undo.
        logger.error("dependency unavailable", extra={"reason": str(error)})
        return error_response(
            HeraldError(
                "A service Herald depends on is unavailable; retry shortly.", ErrorCode.DEPENDENCY_UNAVAILABLE
            )
        )

    @app.not_found
    def unknown_route(_: NotFoundError) -> Response[str]:
        event = app.current_event
        return error_response(HeraldError(f"No route {event.http_method} {event.path}.", ErrorCode.NOT_FOUND))

    @app.exception_handler(Exception)
    def unexpected(_error: Exception) -> Response[str]:
        logger.exception("unhandled error")
        return error_response(HeraldError("Something went wrong on our side.", ErrorCode.INTERNAL_ERROR))
