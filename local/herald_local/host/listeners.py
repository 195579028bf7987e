"""Listening sockets, bound before the servers that use them start and handed to them.

A port checked free, released and bound again later can be taken by another program in between;
a socket bound once and handed over cannot. Port 0 asks for any free port: the socket says which.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from herald_local.config import LOOPBACK, ConfigError, port_in_use_message

# Connections the kernel queues before a server accepts them (werkzeug's and the gateway's own).
BACKLOG = 128


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port``, or on any free port for 0."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # As servers do, so a connection of the last run in TIME_WAIT does not hold the port.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((LOOPBACK, port))
        listener.listen(BACKLOG)
    except BaseException:
        listener.close()
        raise
    return listener


def listen_on(ports: Mapping[str, int]) -> dict[str, socket.socket]:
    """A listener for each port by the variable that sets it; a port in use closes the ones bound
    and raises ConfigError naming its variable."""
    listeners: dict[str, socket.socket] = {}
    try:
        for variable, port in ports.items():
            try:
                listeners[variable] = listen(port)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise ConfigError(port_in_use_message(port, variable)) from exc
                raise
    except BaseException:
        for listener in listeners.values():
            listener.close()
        raise
    return listeners


def bound_port(listener: socket.socket) -> int:
    return int(listener.getsockname()[1])
