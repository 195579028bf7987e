"""Counting AWS API calls made in this process, whatever client or library (boto3, PynamoDB) makes them."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.client import BaseClient


class CallCounter:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()

    def record(self, service: str, operation: str) -> None:
        with self._lock:
            self.calls[(service, operation)] += 1

    def by_service(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for (service, _), count in self.calls.items():
            totals[service] += count
        return dict(totals)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()


@contextmanager
def counting_aws_calls() -> Iterator[CallCounter]:
    """Every botocore API call goes through BaseClient._make_api_call: count them there."""
    counter = CallCounter()
    original = BaseClient._make_api_call

    def counted(self: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
        counter.record(self.meta.service_model.service_name, operation_name)
        return original(self, operation_name, api_params)

    BaseClient._make_api_call = counted  # type: ignore[method-assign]
    try:
        yield counter
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]
