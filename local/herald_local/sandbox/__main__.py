"""``python -m herald_local.sandbox [--host H] [--port P] [--slow-seconds N]``: run the sandbox in
the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from collections.abc import Sequence

from herald_local.sandbox.app import PROVIDERS
from herald_local.sandbox.core.context import DEFAULT_SLOW_SECONDS
from herald_local.sandbox.server import SandboxServer

DEFAULT_PORT = 3100


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m herald_local.sandbox", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("HERALD_SANDBOX_PORT", DEFAULT_PORT)))
    parser.add_argument(
        "--slow-seconds",
        type=float,
        default=DEFAULT_SLOW_SECONDS,
        help="delay of the timeout-* answers (default: %(default)s)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    arguments = _arguments(argv)
    server = SandboxServer(arguments.host, arguments.port, arguments.slow_seconds)
    done = threading.Event()
    # Explicit handlers: a parent that starts us in the background may have left SIGINT ignored.
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, lambda *_: done.set())
    server.start()
    print(f"Herald provider sandbox: mailbox at {server.base_url}/", flush=True)
    for provider in PROVIDERS:
        print(f"  {provider:<8} base URL {server.provider_base_url(provider)}", flush=True)
    try:
        done.wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
