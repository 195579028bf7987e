"""``SandboxServer``: the sandbox on a threaded Werkzeug server in a background thread, so a
deliberately slow answer never blocks the others."""

from __future__ import annotations

import socket
import threading

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from herald.domain.vendors import VENDOR_REGIONS
from herald_local.sandbox.app import PROVIDERS, SERVICES, create_app
from herald_local.sandbox.core.context import DEFAULT_SLOW_SECONDS, SandboxContext
from herald_local.sandbox.core.store import SandboxStore
from herald_local.sandbox.slack.webhook import WEBHOOK_PATH

# How long stop() waits for the serving thread; slow answers are woken first, so it ends quickly.
_STOP_JOIN_SECONDS = 5.0
# How often the serving loop looks for a shutdown request (socketserver's default of 0.5 s makes
# every stop() take that long).
_POLL_SECONDS = 0.05


class SandboxServer:
    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        slow_seconds: float = DEFAULT_SLOW_SECONDS,
        *,
        listener: socket.socket | None = None,
    ) -> None:
        self.host = host
        self.port = port
        # A socket its owner bound (herald_local.host.listeners): served on instead of binding ``port``.
        self._listener = listener
        self.context = SandboxContext(PROVIDERS, slow_seconds=slow_seconds)
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def store(self) -> SandboxStore:
        return self.context.store

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the sandbox is not running")
        return f"http://{self.host}:{self._server.port}"

    def provider_base_url(self, name: str) -> str:
        """What Herald's base URL of an imitated API should be: ``…/<service>`` (also the imitated
        payment processors' APIs, ``…/polar`` and ``…/paystack``)."""
        prefixes = {service.name: service.url_prefix for service in SERVICES if service.url_prefix}
        if name.lower() not in prefixes:
            raise ValueError(f"the sandbox imitates no API named {name!r}")
        return f"{self.base_url}{prefixes[name.lower()]}"

    def provider_settings(self) -> dict[str, str]:
        """Herald's base-URL settings of every vendor's APIs, pointed at this sandbox's imitations
        (one serves all of a vendor's regions), for functions run without the local stack."""
        return {region.setting: self.provider_base_url(name.slug) for name, region in VENDOR_REGIONS}

    @property
    def slack_webhook_url(self) -> str:
        """The incoming webhook AlertFunction posts to on the local stack."""
        return f"{self.base_url}{WEBHOOK_PATH}"

    def start(self) -> None:
        """Returns once the socket listens (``make_server`` binds and listens before returning)."""
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self.context.stopping.clear()
        listener, self._listener = self._listener, None
        try:
            self._server = make_server(
                self.host,
                self.port,
                create_app(self.context),
                threaded=True,
                request_handler=_NoDelayHandler,
                fd=None if listener is None else listener.fileno(),
            )
        finally:
            if listener is not None:
                listener.close()  # werkzeug serves on its own duplicate
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(_POLL_SECONDS,), name="herald-sandbox", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self.context.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(_STOP_JOIN_SECONDS)
        self._server = None
        self._thread = None

    def __enter__(self) -> SandboxServer:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


class _NoDelayHandler(WSGIRequestHandler):
    # Werkzeug writes headers and body separately; with Nagle on, the client's delayed ACK holds
    # every answer ~40 ms.
    disable_nagle_algorithm = True
