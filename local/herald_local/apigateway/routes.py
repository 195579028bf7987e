"""HTTP API route selection, as API Gateway does it: the most specific route wins.

Literal path segments beat path variables (compared left to right), a greedy ``{proxy+}`` route
comes after every route without one (longer prefixes first), ``$default`` comes last, and for the
same path a route's own method beats ``ANY``, which takes every method (TRACE too): the function
behind it answers a method it has no route for (the API function's 405 names what it takes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from herald_local.cloudformation.topology import RouteSpec

DEFAULT_ROUTE = "$default"


@dataclass(frozen=True)
class RouteMatch:
    route: RouteSpec
    path_parameters: dict[str, str]


def _segments(path: str) -> list[str]:
    return path.split("/")[1:]


def _variable(segment: str) -> str | None:
    if segment.startswith("{") and segment.endswith("}"):
        return segment[1:-1].removesuffix("+")
    return None


def _is_greedy(route: RouteSpec) -> bool:
    return route.path.endswith("+}")


def _specificity(route: RouteSpec) -> tuple[int, int, tuple[int, ...], bool]:
    if route.path == DEFAULT_ROUTE:
        return (2, 0, (), False)
    segments = _segments(route.path)
    kinds = tuple(0 if _variable(segment) is None else 1 for segment in segments)
    greedy = _is_greedy(route)
    return (1 if greedy else 0, -len(segments) if greedy else 0, kinds, route.method == "ANY")


def _match_path(route: RouteSpec, segments: list[str]) -> dict[str, str] | None:
    if route.path == DEFAULT_ROUTE:
        return {}
    pattern = _segments(route.path)
    greedy = _is_greedy(route)
    fixed = pattern[:-1] if greedy else pattern
    if len(segments) < len(fixed) + (1 if greedy else 0) or (not greedy and len(segments) != len(fixed)):
        return None
    parameters: dict[str, str] = {}
    for expected, actual in zip(fixed, segments, strict=False):
        name = _variable(expected)
        if name is None:
            if expected != actual:
                return None
        elif not actual:
            return None
        else:
            parameters[name] = actual
    if greedy:
        rest = "/".join(segments[len(fixed) :])
        if not rest:
            return None
        parameters[str(_variable(pattern[-1]))] = rest
    return parameters


class RouteTable:
    def __init__(self, routes: Iterable[RouteSpec]) -> None:
        self.routes = sorted(routes, key=_specificity)

    def methods_for(self, path: str) -> frozenset[str]:
        """The methods some route serves at ``path`` (empty when no route has that path). A path of
        an ``ANY`` route never needs this: every method matches it."""
        segments = _segments(path)
        return frozenset(route.method for route in self.routes if _match_path(route, segments) is not None)

    def match(self, method: str, path: str) -> RouteMatch | None:
        """The route serving ``method path`` (the path already percent-decoded), or None for a 404."""
        segments = _segments(path)
        for route in self.routes:
            if route.method not in (method.upper(), "ANY"):
                continue
            parameters = _match_path(route, segments)
            if parameters is not None:
                return RouteMatch(route, parameters)
        return None
