"""What a warm Lambda container keeps between invocations: one of each thing its composition root
builds (the settings, the AWS clients, the table, the services), made on first use.

Everything lives in one registry, so ``reset`` makes the next use a cold start in a single call (the
tests and the operator CLI, which point one process at one stack after another).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

_built: dict[tuple[Callable[..., Any], tuple[Hashable, ...]], Any] = {}
# Reentrant: building one thing builds what it stands on (the API's services, the foundation).
_lock = threading.RLock()


def once(build: Callable[..., T], *args: Hashable) -> T:
    """``build(*args)``, made the first time it is asked for in this process and reused after."""
    key = (build, args)
    with _lock:
        if key not in _built:
            _built[key] = build(*args)
        built: T = _built[key]
        return built


def reset() -> None:
    """Forget everything built: the next use builds anew from the environment."""
    with _lock:
        _built.clear()
