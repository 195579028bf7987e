"""Observing the AWS API calls made in this process, whatever client or library (boto3, PynamoDB) makes them.

Every botocore call goes through ``BaseClient._make_api_call``; while ``observing_aws_calls`` is
active, each call passes through the given observers (outermost first) before it is made.
``call_unobserved`` makes a call that no observer sees (the bench's own reads of stored items).
"""

from __future__ import annotations

import copy
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from botocore.client import BaseClient

# A private method botocore's type stubs leave out: reached through the class dictionary.
_MAKE_API_CALL: Callable[..., Any] = vars(BaseClient)["_make_api_call"]


class Observer(Protocol):
    def __call__(
        self, service: str, operation: str, params: dict[str, Any], proceed: Callable[[], Any], /
    ) -> Any: ...


def call_unobserved(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
    return _MAKE_API_CALL(client, operation, params)


class CallCounter:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def __call__(
        self, service: str, operation: str, _params: dict[str, Any], proceed: Callable[[], Any]
    ) -> Any:
        with self._lock:
            self.calls[(service, operation)] += 1
        return proceed()

    def by_service(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for (service, _), count in self.calls.items():
            totals[service] += count
        return dict(totals)


class CallRecorder:
    """Every call's service, operation and parameters, in order (to replay them elsewhere)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(
        self, service: str, operation: str, params: dict[str, Any], proceed: Callable[[], Any]
    ) -> Any:
        self.calls.append((service, operation, copy.deepcopy(params)))
        return proceed()


@contextmanager
def observing_aws_calls(*observers: Observer) -> Iterator[None]:
    def observed(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        service = self.meta.service_model.service_name

        def through(index: int) -> Any:
            if index == len(observers):
                return _MAKE_API_CALL(self, operation, params)
            return observers[index](service, operation, params, lambda: through(index + 1))

        return through(0)

    setattr(BaseClient, "_make_api_call", observed)  # noqa: B010
    try:
        yield
    finally:
        setattr(BaseClient, "_make_api_call", _MAKE_API_CALL)  # noqa: B010


@contextmanager
def counting_aws_calls() -> Iterator[CallCounter]:
    counter = CallCounter()
    with observing_aws_calls(counter):
        yield counter
