"""moto in server mode as a child of the local stack; run as ``python -m herald_local.aws.server``.

The child serves on a listening socket the stack bound and handed down (its descriptor is the one
argument), so no other program can take the port between the stack choosing it and moto serving.
The module wraps moto's server only for that, to end with its parent (no orphaned server holding
the port) and to keep its per-request access log off the console, which the pollers' long polls
would flood.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING

from herald_local.config import LOOPBACK
from herald_local.host.processes import ChildProcess, python_module, watch_parent

if TYPE_CHECKING:
    from werkzeug.serving import WSGIRequestHandler

# The child's first line once its backends are loaded and it accepts requests.
SERVING_LINE = "HERALD_MOTO_SERVING"
# Loading moto's backends takes 1-2 s on an idle machine and many times that on a busy one.
READY_TIMEOUT_SECONDS = 120.0


class MotoNotReady(RuntimeError):
    pass


class MotoProcess(ChildProcess):
    """moto's server process, serving on the listening socket it was handed."""

    def __init__(self, listener: socket.socket) -> None:
        self._serving = threading.Event()
        descriptor = listener.fileno()
        super().__init__(
            "moto",
            python_module(__name__, str(descriptor)),
            line_filter=self._on_line,
            pass_fds=(descriptor,),
        )

    def _on_line(self, line: str) -> bool:
        if line.startswith(SERVING_LINE):
            self._serving.set()
            return True
        return False

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> None:
        """Returns once moto serves; connections made before then wait in the socket's backlog."""
        deadline = time.monotonic() + timeout
        while not self._serving.wait(0.05):
            if not self.alive():
                raise MotoNotReady(f"moto exited with status {self.exit_code()} before serving")
            if time.monotonic() > deadline:
                raise MotoNotReady(f"moto was not serving within {timeout:.0f} s")


def start(listener: socket.socket) -> MotoProcess:
    """Starts moto on ``listener`` and closes this process's copy of it: from then on the socket
    lives as long as moto does."""
    child = MotoProcess(listener)
    try:
        child.start()
    finally:
        listener.close()
    return child


def log_only_server_errors(handler: type[WSGIRequestHandler]) -> None:
    """werkzeug's access log, kept to the 5xx lines: formatting and piping a line for every call
    (most of them the pollers' long polls) cost moto about a tenth of its time under load."""
    log_request = handler.log_request

    def log_server_error(self: WSGIRequestHandler, code: int | str = "-", size: int | str = "-") -> None:
        if str(code).startswith("5"):
            log_request(self, code, size)

    handler.log_request = log_server_error  # type: ignore[method-assign]


def _exit(_signum: int, _frame: FrameType | None) -> None:
    sys.exit(0)  # as moto's own entry point ends on SIGTERM: cleanly, closing the socket


def main() -> None:
    watch_parent()
    descriptor = int(sys.argv[1])
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import WSGIRequestHandler, make_server

    from herald_local.aws.atomic_dynamodb import make_dynamodb_atomic
    from herald_local.aws.backend_routing import remember_backends_per_host

    make_dynamodb_atomic()
    remember_backends_per_host()
    # Werkzeug writes headers and body separately; without this, every moto call waits ~40 ms for
    # the client's delayed ACK (Nagle), which dominated the local stack's request latency.
    WSGIRequestHandler.disable_nagle_algorithm = True
    log_only_server_errors(WSGIRequestHandler)

    app = DomainDispatcherApplication(create_backend_app)
    server = make_server(LOOPBACK, 0, app, threaded=True, request_handler=MotoRequestHandler, fd=descriptor)
    os.close(descriptor)  # werkzeug serves on its own duplicate
    # As moto's own entry point sets it: the backends that build URLs to moto read its port here.
    os.environ["MOTO_PORT"] = str(server.port)
    signal.signal(signal.SIGTERM, _exit)
    print(SERVING_LINE, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
