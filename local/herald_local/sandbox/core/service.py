"""How a service joins the sandbox: its package exposes one ``SERVICE``, and the app mounts the list
of them (``herald_local.sandbox.app``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import Blueprint

from herald_local.sandbox.core.context import SandboxContext

# Adds one module's routes (and request hooks) to its service's blueprint.
AddRoutes = Callable[[Blueprint, SandboxContext], None]


@dataclass(frozen=True)
class Service:
    # The blueprint's name, unique in the app; also the name the service's base URL goes by.
    name: str
    routes: tuple[AddRoutes, ...]
    # An imitated API's base path, which Herald's base URL for it points at (``/<vendor>``); None
    # for routes of the sandbox's own, at the root.
    url_prefix: str | None = None
    # An email provider: its name is an outage target, and recipients name it to fail only its sends
    # (``fail-500-<name>@…``).
    email_provider: bool = False

    def blueprint(self, context: SandboxContext) -> Blueprint:
        blueprint = Blueprint(self.name, __name__, url_prefix=self.url_prefix)
        for add_routes in self.routes:
            add_routes(blueprint, context)
        return blueprint
