"""A stand-in resolver for tests and benchmarks: this machine has no DNS."""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import urlsplit

from herald_harness.patches import ProcessPatches

# A public address (not private, reserved or documentation); nothing dials it at acceptance.
PUBLIC_ADDRESS = "93.184.215.14"


def resolve_publicly(patches: ProcessPatches, suffix: str = ".example.com") -> None:
    """Names ending in ``suffix`` resolve to a public address; every other name as before."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(suffix):
            return real_getaddrinfo(PUBLIC_ADDRESS, port, *args, **kwargs)
        return real_getaddrinfo(host, port, *args, **kwargs)

    patches.setattr(socket, "getaddrinfo", getaddrinfo)


def resolve_as(patches: ProcessPatches, answers: dict[str, list[str]]) -> None:
    """Each name in ``answers`` resolves to its addresses (an attacker's DNS); others as before."""
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in answers:
            return [
                info for address in answers[host] for info in real_getaddrinfo(address, port, *args, **kwargs)
            ]
        return real_getaddrinfo(host, port, *args, **kwargs)

    patches.setattr(socket, "getaddrinfo", getaddrinfo)


def spy_on_connect(patches: ProcessPatches, unless_to: str = "") -> list[tuple[str, int]]:
    """Every (address, port) a socket of this process tries to connect to from now on, but those to
    the origin of ``unless_to`` (say the stack's SNS bridge, which in AWS SNS itself would call)."""
    dialled: list[tuple[str, int]] = []
    real_connect = socket.socket.connect
    parts = urlsplit(unless_to)
    ignored = (parts.hostname, parts.port)

    def connect(sock: socket.socket, address: Any) -> None:
        if (str(address[0]), int(address[1])) != ignored:
            dialled.append((str(address[0]), int(address[1])))
        real_connect(sock, address)

    patches.setattr(socket.socket, "connect", connect)
    return dialled
