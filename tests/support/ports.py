"""A loopback port that refuses connections, for tests of an unreachable endpoint."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def refusing_port() -> Iterator[int]:
    """A port bound for the block's duration but never listening, so connections to it are refused.
    Held, not released: a port released after binding may be taken meanwhile by another program,
    which would then answer."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bound:
        bound.bind(("127.0.0.1", 0))
        yield int(bound.getsockname()[1])
