"""The metrics AWS publishes about Lambda and API Gateway, counted by the local stack where it plays
those services: invocations, errors and throttles of each function, and each API's requests by
status class. The alarm players read them as CloudWatch's alarms read the real ones."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable

LAMBDA = "AWS/Lambda"
API_GATEWAY = "AWS/ApiGateway"
# Counters older than the longest alarm period anyone sets locally are of no use.
KEEP_SECONDS = 3600.0

_Key = tuple[str, str, tuple[tuple[str, str], ...]]


class LocalMetrics:
    """Counts per (namespace, metric, dimensions), kept with their time for an hour."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._points: dict[_Key, deque[tuple[float, float]]] = defaultdict(deque)
        self._lock = threading.Lock()

    def add(self, namespace: str, name: str, dimensions: dict[str, str], value: float = 1.0) -> None:
        now = self._clock()
        with self._lock:
            points = self._points[(namespace, name, tuple(sorted(dimensions.items())))]
            points.append((now, value))
            while points and points[0][0] < now - KEEP_SECONDS:
                points.popleft()

    def total(self, namespace: str, name: str, dimensions: dict[str, str], seconds: float) -> float:
        """The Sum statistic over the last ``seconds``."""
        since = self._clock() - seconds
        with self._lock:
            points = list(self._points.get((namespace, name, tuple(sorted(dimensions.items()))), ()))
        return sum(value for at, value in points if at >= since)

    def invocation(self, function_name: str, *, failed: bool = False, throttled: bool = False) -> None:
        """One invocation of a function as Lambda counts it (a throttled one is no invocation)."""
        dimensions = {"FunctionName": function_name}
        if throttled:
            self.add(LAMBDA, "Throttles", dimensions)
            return
        self.add(LAMBDA, "Invocations", dimensions)
        if failed:
            self.add(LAMBDA, "Errors", dimensions)

    def api_answer(self, api_id: str, status: int) -> None:
        dimensions = {"ApiId": api_id}
        self.add(API_GATEWAY, "Count", dimensions)
        if 400 <= status < 500:
            self.add(API_GATEWAY, "4xx", dimensions)
        elif status >= 500:
            self.add(API_GATEWAY, "5xx", dimensions)
