"""A stand-in resolver for tests and benchmarks: this machine has no DNS."""

from __future__ import annotations

import socket
from typing import Any

import pytest

# A public address (not private, reserved or documentation); nothing dials it at acceptance.
PUBLIC_ADDRESS = "93.184.215.14"


def resolve_publicly(monkeypatch: pytest.MonkeyPatch, suffix: str = ".example.com") -> None:
    """Names ending in ``suffix`` resolve to a public address; every other name as before."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(suffix):
            return real_getaddrinfo(PUBLIC_ADDRESS, port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
