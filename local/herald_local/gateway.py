"""The local HTTP API: serves every HttpApi route of the template on loopback, one thread per
request, by invoking the route's function with the payload 2.0 event API Gateway would send."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from herald_local.apigw_events import (
    PAYLOAD_LIMIT_BYTES,
    ApiContext,
    HttpRequest,
    HttpResponse,
    InvalidIntegrationResponse,
    build_event,
    gateway_error,
    map_response,
)
from herald_local.config import LOOPBACK
from herald_local.functions import FunctionEnvironments, FunctionUnavailable
from herald_local.routes import RouteMatch, RouteTable

log = logging.getLogger(__name__)

FunctionLookup = Callable[[str], FunctionEnvironments]


class PayloadTooLarge(Exception):
    pass


class Gateway:
    """Turns one HTTP request into one function invocation and its answer into the HTTP response."""

    def __init__(self, routes: RouteTable, functions: FunctionLookup) -> None:
        self._routes = routes
        self._functions = functions

    def handle(self, request: HttpRequest) -> HttpResponse:
        match = self._routes.match(request.method, request.path)
        if match is None:
            return gateway_error(404, "Not Found")
        context = ApiContext(match.route.api_id)
        try:
            response = self._invoke(request, match, context)
        except Exception:  # noqa: BLE001 - a bug here must answer like API Gateway, not drop the connection
            log.exception("%s: the gateway failed", match.route.route_key)
            response = gateway_error(500, "Internal Server Error")
        response.headers.append(("apigw-requestid", context.request_id))
        return response

    def _invoke(self, request: HttpRequest, match: RouteMatch, context: ApiContext) -> HttpResponse:
        event = build_event(request, match, context)
        try:
            invocation = self._functions(match.route.function).invoke(event, match.route.timeout_seconds)
        except FunctionUnavailable as exc:
            log.error("%s: %s", match.route.route_key, exc)
            # API Gateway answers an integration timeout with 503 and any other failure with 500.
            return gateway_error(
                503 if exc.timed_out else 500,
                "Service Unavailable" if exc.timed_out else "Internal Server Error",
            )
        return self._response(match.route.route_key, invocation.payload, invocation.failed)

    @staticmethod
    def _response(route_key: str, payload: bytes, failed: bool) -> HttpResponse:
        if failed:
            return gateway_error(500, "Internal Server Error")
        try:
            return map_response(payload)
        except InvalidIntegrationResponse as exc:
            log.error("%s: invalid integration response: %s", route_key, exc)
            return gateway_error(500, "Internal Server Error")


def _read_chunked(stream: Any) -> bytes:
    body = bytearray()
    while True:
        size = int(stream.readline().split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while stream.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(body)
        if len(body) + size > PAYLOAD_LIMIT_BYTES:
            raise PayloadTooLarge
        body += stream.read(size)
        stream.readline()


class _RequestHandler(BaseHTTPRequestHandler):
    # Headers and body leave in two writes; with Nagle on, the peer's delayed ACK holds the body ~40 ms.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    server_version = "herald-local"
    sys_version = ""
    gateway: Gateway
    server_port: int

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """The functions log each request; a second access log would only repeat them."""

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return _read_chunked(self.rfile)
        length = int(self.headers.get("Content-Length") or 0)
        if length > PAYLOAD_LIMIT_BYTES:
            raise PayloadTooLarge
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        try:
            body = self._body()
        except PayloadTooLarge:
            self.close_connection = True
            self._send(gateway_error(413, "Request Entity Too Large"))
            return
        request = HttpRequest(
            method=self.command,
            target=self.path,
            headers=list(self.headers.items()),
            body=body,
            source_ip=self.client_address[0],
            protocol=self.request_version,
            server_port=self.server_port,
        )
        self._send(self.gateway.handle(request))

    def _send(self, response: HttpResponse) -> None:
        self.send_response(response.status)
        for name, value in response.headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


class GatewayServer:
    def __init__(self, gateway: Gateway, port: int) -> None:
        handler: type[_RequestHandler] = type("GatewayHandler", (_RequestHandler,), {"gateway": gateway})
        self._server = _Server((LOOPBACK, port), handler)
        handler.server_port = self.port
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.2,), name="gateway", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
