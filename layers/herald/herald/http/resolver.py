"""Powertools' HTTP resolver with routes only some requests need included on their first need, so
that a cold start imports them only when a request (or the OpenAPI document) asks for them.

Deferred routes are included ahead of the resolver's own, where including them before declaring
those would have put them: requests match in the same order, a 405 lists the same ``Allow``, and
the OpenAPI document is the same, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import ResponseBuilder, Router
    from aws_lambda_powertools.event_handler.openapi.models import OpenAPI


class HttpResolver(APIGatewayHttpResolver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deferred: Callable[[], Router] | None = None

    def include_on_first_need(self, load: Callable[[], Router]) -> None:
        """``load()``'s routes, included when a request none of the resolver's own routes takes
        comes, or the OpenAPI document is built."""
        self._deferred = load

    def include_deferred(self) -> bool:
        """Include the deferred routes ahead of the resolver's own; False when none are pending."""
        if self._deferred is None:
            return False
        load, self._deferred = self._deferred, None
        own = self._static_routes[:], self._dynamic_routes[:]
        self._static_routes.clear()
        self._dynamic_routes.clear()
        self.include_router(load())
        self._static_routes.extend(own[0])
        self._dynamic_routes.extend(own[1])
        return True

    def _handle_not_found(self, method: str, path: str) -> ResponseBuilder[Any]:
        # Powertools calls this when no route matched: the deferred routes may hold one.
        if self.include_deferred():
            return self._resolve()
        return super()._handle_not_found(method, path)

    def get_openapi_schema(self, **kwargs: Any) -> OpenAPI:
        self.include_deferred()
        return super().get_openapi_schema(**kwargs)
