"""Changes the harness makes to this process (environment variables, attributes), undone together.

The harness takes any ``ProcessPatches``: a test passes pytest's ``monkeypatch``, which has these
methods; a benchmark, which runs without pytest, passes the one ``patched`` gives.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Protocol
from unittest import mock


class ProcessPatches(Protocol):
    def setenv(self, name: str, value: str) -> None: ...

    def delenv(self, name: str, raising: bool = ...) -> None: ...

    def setattr(self, target: object, name: str, value: object) -> None: ...


class _Patches:
    """Each change is a ``unittest.mock`` patch entered on one stack, so they end together."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack

    def setenv(self, name: str, value: str) -> None:
        self._stack.enter_context(mock.patch.dict(os.environ, {name: value}))

    def delenv(self, name: str, raising: bool = True) -> None:
        if name not in os.environ:
            if raising:
                raise KeyError(name)
            return
        self._stack.enter_context(mock.patch.dict(os.environ))
        del os.environ[name]

    def setattr(self, target: object, name: str, value: object) -> None:
        self._stack.enter_context(mock.patch.object(target, name, value))


@contextmanager
def patched() -> Iterator[ProcessPatches]:
    """Patches of this process that last until the block ends, undone in reverse order."""
    with ExitStack() as stack:
        yield _Patches(stack)
