"""moto in server mode as a child of the local stack; run as ``python -m herald_local.aws.server``.

The module wraps ``moto.server`` only to end with its parent (no orphaned server holding the port)
and to keep its per-request access log off the console, which the pollers' long polls would flood.
"""

from __future__ import annotations

import re
import socket
import sys
import time
from typing import TYPE_CHECKING

from herald_local.config import LOOPBACK
from herald_local.host.processes import ChildProcess, python_module, watch_parent

if TYPE_CHECKING:
    from werkzeug.serving import WSGIRequestHandler

# werkzeug's start-up banner, whose "Press CTRL+C" does not apply to a child of the stack.
_QUIET = re.compile(r".*(development server|Press CTRL\+C)")


class MotoNotReady(RuntimeError):
    pass


def start(port: int) -> ChildProcess:
    child = ChildProcess(
        "moto",
        python_module(__name__, "-H", LOOPBACK, "-p", str(port)),
        line_filter=lambda line: bool(_QUIET.match(line)),
    )
    child.start()
    return child


def wait_ready(child: ChildProcess, port: int, timeout: float = 30.0) -> None:
    """Returns once moto accepts connections (it binds only after loading its backends)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.alive():
            raise MotoNotReady(f"moto exited with status {child.exit_code()} before answering")
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise MotoNotReady(f"moto did not answer on port {port} within {timeout:.0f} s")


def log_only_server_errors(handler: type[WSGIRequestHandler]) -> None:
    """werkzeug's access log, kept to the 5xx lines: formatting and piping a line for every call
    (most of them the pollers' long polls) cost moto about a tenth of its time under load."""
    log_request = handler.log_request

    def log_server_error(self: WSGIRequestHandler, code: int | str = "-", size: int | str = "-") -> None:
        if str(code).startswith("5"):
            log_request(self, code, size)

    handler.log_request = log_server_error  # type: ignore[method-assign]


def main() -> None:
    watch_parent()
    from moto.server import main as moto_main
    from werkzeug.serving import WSGIRequestHandler

    from herald_local.aws.atomic_dynamodb import make_dynamodb_atomic
    from herald_local.aws.backend_routing import remember_backends_per_host

    make_dynamodb_atomic()
    remember_backends_per_host()
    # Werkzeug writes headers and body separately; without this, every moto call waits ~40 ms for
    # the client's delayed ACK (Nagle), which dominated the local stack's request latency.
    WSGIRequestHandler.disable_nagle_algorithm = True
    log_only_server_errors(WSGIRequestHandler)

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
