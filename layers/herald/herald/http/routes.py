"""The paths under /api/v1 the HTTP API serves through functions of their own, for the API
function's 405 answers.

The HTTP API hands every request under /api/v1 that no route of its own takes to the API function
(template.yaml's catch-all route), whatever its method: so the API function answers the other
methods of the inbound webhook paths and of the console's sign-in paths too, which the template
routes (POST only) to functions of their own. A path some route serves is answered 405 with an ``Allow`` header listing exactly the methods
that path takes (RFC 9110, section 15.5.6), never 404. The routes below are the template's (a test
compares the two).
"""

from __future__ import annotations

from herald.domain.vendors import TENANT_PROVIDERS, webhook_route

# (method, path) as template.yaml writes them; "{name}" stands for one path segment.
INBOUND_ROUTES: tuple[tuple[str, str], ...] = (
    *(("POST", webhook_route(name)) for name in TENANT_PROVIDERS),
    ("POST", "/api/v1/payments/paystack/webhook"),
    ("POST", "/api/v1/payments/polar/webhook"),
)
# The browser-only routes of the console function.
CONSOLE_ROUTES: tuple[tuple[str, str], ...] = (
    ("POST", "/api/v1/signup"),
    ("POST", "/api/v1/signin"),
    ("POST", "/api/v1/signin/verify"),
    ("POST", "/api/v1/signout"),
    ("GET", "/api/v1/console/accounts"),
    ("POST", "/api/v1/console/switch"),
)
ROUTES_ELSEWHERE = INBOUND_ROUTES + CONSOLE_ROUTES


def methods_elsewhere(path: str) -> set[str]:
    """The methods other functions' routes take at ``path`` (none for any other path)."""
    segments = path.split("/")
    return {method for method, route in ROUTES_ELSEWHERE if _matches(route.split("/"), segments)}


def _matches(route: list[str], segments: list[str]) -> bool:
    return len(route) == len(segments) and all(
        expected == actual or (expected.startswith("{") and bool(actual))
        for expected, actual in zip(route, segments, strict=True)
    )
