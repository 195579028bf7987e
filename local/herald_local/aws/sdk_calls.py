"""Every AWS SDK call this process makes, seen by observers, whatever client or library makes it.

Every botocore client goes through ``BaseClient._make_api_call`` (boto3's and PynamoDB's too), so
one patch sees every call; it is installed once and calls each observer in turn (the first added
outermost), each of which lets the call proceed (or not) and sees its answer. A function's runner
observes its whole process (``function_calls``); the benchmarks add their counters and meters for
as long as a handler runs. ``call_unobserved`` makes a call that no observer sees (a benchmark's own
reads of stored items).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from botocore.client import BaseClient

# A private method botocore's type stubs leave out: reached through the class dictionary.
_API_CALL = "_make_api_call"
_ORIGINAL: Callable[[BaseClient, str, dict[str, Any]], Any] = vars(BaseClient)[_API_CALL]

Proceed = Callable[[], Any]


@dataclass(frozen=True)
class SdkCall:
    """One call as botocore is about to make it."""

    client: BaseClient
    operation: str
    params: dict[str, Any]

    @property
    def service(self) -> str:
        """botocore's name of the service ("sesv2", "dynamodb")."""
        return str(self.client.meta.service_model.service_name)

    @property
    def action_prefix(self) -> str:
        """The prefix of the call's IAM action ("ses" for sesv2)."""
        model = self.client.meta.service_model
        return str(model.signing_name or model.endpoint_prefix)

    @property
    def region(self) -> str:
        return str(self.client.meta.region_name)


class Observer(Protocol):
    def __call__(self, call: SdkCall, proceed: Proceed, /) -> Any: ...


@dataclass
class _Chain:
    # Replaced whole under the lock, read without it: a call sees the observers of one moment.
    observers: tuple[Observer, ...] = ()


_chain = _Chain()
_lock = threading.Lock()


def _observed_call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
    observers = _chain.observers
    if not observers:
        return _ORIGINAL(client, operation, params)
    call = SdkCall(client, operation, params)

    def through(index: int) -> Any:
        if index == len(observers):
            return _ORIGINAL(client, operation, params)
        return observers[index](call, lambda: through(index + 1))

    return through(0)


def _add(observer: Observer) -> bool:
    with _lock:
        setattr(BaseClient, _API_CALL, _observed_call)
        if observer in _chain.observers:
            return False
        _chain.observers = (*_chain.observers, observer)
        return True


def observe(observer: Observer) -> None:
    """``observer`` sees every call of this process from now on (once, however often it is added)."""
    _add(observer)


@contextmanager
def observing(*observers: Observer) -> Iterator[None]:
    """``observers`` see every call made inside the block, inside those already observing."""
    added = [observer for observer in observers if _add(observer)]
    try:
        yield
    finally:
        with _lock:
            _chain.observers = tuple(observer for observer in _chain.observers if observer not in added)


def call_unobserved(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
    return _ORIGINAL(client, operation, params)
