"""moto in server mode as a child of the local stack; run as ``python -m herald_local.aws.server``.

The module wraps ``moto.server`` only to end with its parent (no orphaned server holding the port)
and to keep its per-request access log off the console, which the pollers' long polls would flood.
"""

from __future__ import annotations

import re
import socket
import sys
import time

from herald_local.config import LOOPBACK
from herald_local.host.processes import ChildProcess, python_module, watch_parent

# werkzeug's access log lines (`127.0.0.1 - - [date] "POST / HTTP/1.1" 200 -`; server errors stay
# visible) and its start-up banner, whose "Press CTRL+C" does not apply to a child of the stack.
_QUIET = re.compile(r'^\S+ - - \[[^\]]+\] "[^"]*" [1-4]\d\d |.*(development server|Press CTRL\+C)')


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


def main() -> None:
    watch_parent()
    from moto.server import main as moto_main
    from werkzeug.serving import WSGIRequestHandler

    from herald_local.aws.atomic_dynamodb import make_dynamodb_atomic

    make_dynamodb_atomic()
    # Werkzeug writes headers and body separately; without this, every moto call waits ~40 ms for
    # the client's delayed ACK (Nagle), which dominated the local stack's request latency.
    WSGIRequestHandler.disable_nagle_algorithm = True

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
