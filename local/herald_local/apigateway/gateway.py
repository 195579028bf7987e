"""The local HTTP API: serves every HttpApi route of the template on loopback, one thread per
connection, by invoking the route's function with the payload 2.0 event API Gateway would send.

Whatever reaches the port gets an answer in the API's error envelope, never a dropped connection:
a malformed request line, header or body framing (400), a head cut short by the end of the
connection (400: it never reaches a function), a method no route has (405, or 404 where no route
has the path), a body over the limit (413), a request that stalls half-way or whose head takes
longer than ``head_timeout`` in all (408), a function that cannot take the request or answer in time
(503, 504), and a connection beyond ``max_connections`` open at once (503). Idle connections are
closed after ``idle_timeout`` seconds, so a silent client cannot hold a thread forever, nor can a
client that drips its head a byte at a time. A client that leaves before its answer is one log
line, not a traceback.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, cast

from herald_local.apigateway.events import (
    PAYLOAD_LIMIT_BYTES,
    ApiContext,
    HttpRequest,
    HttpResponse,
    InvalidIntegrationResponse,
    build_event,
    gateway_error,
    map_response,
)
from herald_local.apigateway.routes import RouteMatch, RouteTable
from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudwatch.metrics import LocalMetrics

log = logging.getLogger(__name__)

IDLE_TIMEOUT_SECONDS = 10.0
# The whole request line and headers must arrive within this, however slowly each byte comes.
HEAD_TIMEOUT_SECONDS = 10.0
# Connections served at once (a thread each); more are answered 503 and closed at once.
MAX_CONNECTIONS = 128
_MAX_REQUEST_LINE = 65536
_DIGITS = re.compile(r"[0-9]+")
_TLS_HANDSHAKE = 0x16  # the first byte of a TLS ClientHello record
# The gateway's own sentences for the statuses http.server's parser refuses with.
_PARSER_REFUSALS = {
    HTTPStatus.BAD_REQUEST: "The request is not valid HTTP/1.1.",
    HTTPStatus.REQUEST_URI_TOO_LONG: "The request line is too long.",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "The request headers are too large.",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "Only HTTP/1.0 and HTTP/1.1 are served.",
    HTTPStatus.EXPECTATION_FAILED: "Only 'Expect: 100-continue' is understood.",
}


class Invocable(Protocol):
    def invoke(self, event: Any, timeout: float | None = None) -> Invocation: ...


class FunctionLookup(Protocol):
    def __call__(self, logical_id: str, /) -> Invocable: ...


class Refusal(Exception):
    """The request cannot be served; the gateway answers with this status, code and sentence."""

    def __init__(self, status: HTTPStatus, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.sentence = sentence

    def response(self) -> HttpResponse:
        return gateway_error(self.status, _code(self.status), self.sentence)


def _code(status: HTTPStatus) -> str:
    return status.phrase.lower().replace(" ", "_").replace("-", "_")


def _error(status: HTTPStatus, sentence: str) -> HttpResponse:
    return gateway_error(status, _code(status), sentence)


class Gateway:
    """Turns one HTTP request into one function invocation and its answer into the HTTP response."""

    def __init__(
        self, routes: RouteTable, functions: FunctionLookup, metrics: LocalMetrics | None = None
    ) -> None:
        self._routes = routes
        self._functions = functions
        self._metrics = metrics or LocalMetrics()

    def handle(self, request: HttpRequest) -> HttpResponse:
        match = self._routes.match(request.method, request.path)
        if match is None:
            return self._unmatched(request)
        context = ApiContext(match.route.api_id)
        try:
            response = self._invoke(request, match, context)
        except Exception:  # noqa: BLE001 - a bug here must answer like API Gateway, not drop the connection
            log.exception("%s: the gateway failed", match.route.route_key)
            response = _error(HTTPStatus.INTERNAL_SERVER_ERROR, "The local gateway failed; its log says why.")
        response.headers.append(("apigw-requestid", context.request_id))
        self._metrics.api_answer(match.route.api_id, response.status)
        return response

    def _unmatched(self, request: HttpRequest) -> HttpResponse:
        allowed = self._routes.methods_for(request.path)
        if not allowed:
            return _error(HTTPStatus.NOT_FOUND, f"No route serves {request.path}.")
        response = _error(
            HTTPStatus.METHOD_NOT_ALLOWED, f"{request.path} does not accept {request.method} requests."
        )
        response.headers.append(("Allow", ", ".join(sorted(allowed))))
        return response

    def _invoke(self, request: HttpRequest, match: RouteMatch, context: ApiContext) -> HttpResponse:
        event = build_event(request, match, context)
        try:
            invocation = self._functions(match.route.function).invoke(event, match.route.timeout_seconds)
        except FunctionUnavailable as exc:
            log.error("%s: %s", match.route.route_key, exc)
            if exc.timed_out:
                return _error(HTTPStatus.GATEWAY_TIMEOUT, "The function did not answer in time.")
            return _error(HTTPStatus.SERVICE_UNAVAILABLE, "The function cannot be reached right now.")
        return self._response(match.route.route_key, invocation.payload, invocation.failed)

    @staticmethod
    def _response(route_key: str, payload: bytes, failed: bool) -> HttpResponse:
        if failed:
            return _error(HTTPStatus.INTERNAL_SERVER_ERROR, "The function failed; its log says why.")
        try:
            return map_response(payload)
        except InvalidIntegrationResponse as exc:
            log.error("%s: invalid integration response: %s", route_key, exc)
            return _error(HTTPStatus.INTERNAL_SERVER_ERROR, "The function's answer is not a valid response.")


def _content_length(values: list[str]) -> int:
    if len({value.strip() for value in values}) > 1:
        raise Refusal(HTTPStatus.BAD_REQUEST, "The request has conflicting Content-Length headers.")
    raw = values[0].strip() if values else "0"
    if not _DIGITS.fullmatch(raw):
        raise Refusal(HTTPStatus.BAD_REQUEST, "Content-Length must be a whole number of bytes.")
    length = int(raw)
    if length > PAYLOAD_LIMIT_BYTES:
        raise Refusal(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The request body is over the 10 MiB limit.")
    return length


def _read_exactly(stream: io.BufferedIOBase, length: int) -> bytes:
    data = stream.read(length)
    if len(data) < length:
        raise Refusal(HTTPStatus.BAD_REQUEST, "The request body ended before its announced length.")
    return data


def _chunk_size(line: bytes) -> int:
    size = line.split(b";", 1)[0].strip()
    if not re.fullmatch(rb"[0-9A-Fa-f]{1,8}", size):
        raise Refusal(HTTPStatus.BAD_REQUEST, "The chunked request body is malformed.")
    return int(size, 16)


def _read_chunked(stream: io.BufferedIOBase) -> bytes:
    body = bytearray()
    while True:
        size = _chunk_size(stream.readline(_MAX_REQUEST_LINE))
        if size == 0:
            while stream.readline(_MAX_REQUEST_LINE) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return bytes(body)
        if len(body) + size > PAYLOAD_LIMIT_BYTES:
            raise Refusal(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The request body is over the 10 MiB limit.")
        body += _read_exactly(stream, size)
        stream.readline(_MAX_REQUEST_LINE)


class _HeadReader(io.BufferedIOBase):
    """The connection's reader, remembering the last line read: http.server's header parser stops
    at the end of the input as at the blank line, and only that line tells a whole head from one
    the client cut short."""

    def __init__(self, reader: io.BufferedReader) -> None:
        super().__init__()
        self._reader = reader
        self.last_line = b""

    def readable(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> bytes:
        self.last_line = self._reader.readline(-1 if size is None else size)
        return self.last_line

    def read(self, size: int | None = -1) -> bytes:
        return self._reader.read(size)

    def read1(self, size: int = -1) -> bytes:
        return self._reader.read1(size)

    def peek(self, size: int = 0) -> bytes:
        return self._reader.peek(size)

    def close(self) -> None:
        self._reader.close()
        super().close()


class _HeadDeadline:
    """Ends the reading of a request head that is not in by ``seconds`` after its first byte: a
    socket timeout bounds each read, not a client that drips a byte before each one runs out.
    Shutting the read side down wakes the blocked read with the end of the input."""

    def __init__(self, connection: socket.socket, seconds: float) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._stopped = False
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self.expired = True
            with contextlib.suppress(OSError):
                self._connection.shutdown(socket.SHUT_RD)

    def stop(self) -> bool:
        """Stops the clock; False when the deadline had passed already."""
        with self._lock:
            self._stopped = True
        self._timer.cancel()
        return not self.expired


def _late_head() -> Refusal:
    return Refusal(HTTPStatus.REQUEST_TIMEOUT, "The request headers did not arrive completely in time.")


class _RequestHandler(BaseHTTPRequestHandler):
    # Headers and body leave in two writes; with Nagle on, the peer's delayed ACK holds the body ~40 ms.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    server_version = "herald-local"
    sys_version = ""
    gateway: Gateway
    server_port: int
    head_timeout: float

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - BaseHTTPRequestHandler's name
        """Replaced by the one line per answer that ``_send`` logs."""

    def setup(self) -> None:
        super().setup()
        # makefile("rb") with the default buffering: a BufferedReader, which can peek.
        self._reader = _HeadReader(cast(io.BufferedReader, self.rfile))
        self.rfile = self._reader
        self._deadline: _HeadDeadline | None = None

    def handle_one_request(self) -> None:
        """http.server's loop step, answering where it would drop the connection or answer HTML."""
        self.command, self.requestline, self.request_version = "", "", self.protocol_version
        self.path = ""
        try:
            first = self._reader.peek(1)[:1]
        except (TimeoutError, ConnectionError):
            self.close_connection = True  # idle past the timeout, or gone: nothing was asked
            return
        if not first:
            self.close_connection = True
            return
        self._arrived = time.perf_counter()
        self._deadline = _HeadDeadline(self.connection, self.head_timeout)
        try:
            self._serve(first[0])
        except TimeoutError:
            self._refuse(
                Refusal(HTTPStatus.REQUEST_TIMEOUT, "The request did not arrive completely in time.")
            )
        except Refusal as refusal:
            self._refuse(refusal)
        finally:
            self._deadline.stop()

    def _serve(self, first_byte: int) -> None:
        if first_byte == _TLS_HANDSHAKE:
            raise Refusal(HTTPStatus.BAD_REQUEST, "This port speaks plain HTTP; use http://, not https://.")
        self.raw_requestline = self.rfile.readline(_MAX_REQUEST_LINE + 1)
        if len(self.raw_requestline) > _MAX_REQUEST_LINE:
            raise Refusal(HTTPStatus.REQUEST_URI_TOO_LONG, _PARSER_REFUSALS[HTTPStatus.REQUEST_URI_TOO_LONG])
        if self.parse_request():  # on failure it has answered through send_error
            self._head_complete()
            self._handle()
            self.wfile.flush()

    def _head_complete(self) -> None:
        if self._deadline is not None and not self._deadline.stop():
            raise _late_head()
        if self._reader.last_line not in (b"\r\n", b"\n"):
            raise Refusal(
                HTTPStatus.BAD_REQUEST, "The request headers ended before the blank line that closes them."
            )

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:  # noqa: ARG002
        """http.server's parser refusals, in the envelope instead of its HTML page (its ``message``
        may quote the request's raw bytes, so the gateway's own sentence is sent instead)."""
        if self._deadline is not None and self._deadline.expired:
            self._refuse(_late_head())  # what the parser found is only where the deadline cut the head
            return
        status = HTTPStatus(code)
        self._refuse(Refusal(status, _PARSER_REFUSALS.get(status, f"{status.phrase}.")))

    def _refuse(self, refusal: Refusal) -> None:
        self.close_connection = True  # what follows on this connection cannot be trusted to be framed
        if self.request_version not in ("HTTP/1.0", "HTTP/1.1"):
            self.request_version = self.protocol_version  # always a full status line, never HTTP/0.9
        with contextlib.suppress(OSError):  # the client is gone; there is no one to tell
            self._send(refusal.response())

    def _body(self) -> bytes:
        encoding = self.headers.get("Transfer-Encoding")
        if encoding is None:
            length = _content_length(self.headers.get_all("Content-Length") or [])
            return _read_exactly(self.rfile, length) if length else b""
        if "Content-Length" in self.headers:
            raise Refusal(
                HTTPStatus.BAD_REQUEST, "A request cannot have both Content-Length and Transfer-Encoding."
            )
        if encoding.strip().lower() != "chunked":
            raise Refusal(HTTPStatus.NOT_IMPLEMENTED, "Only the chunked transfer encoding is understood.")
        return _read_chunked(self.rfile)

    def _handle(self) -> None:
        body = self._body()
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
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)
        milliseconds = (time.perf_counter() - self._arrived) * 1000
        log.info(
            "%s %s -> %d (%.0f ms)",
            self.command or "-",
            self.path.split("?", 1)[0] or "-",
            response.status,
            milliseconds,
        )


def _busy_answer() -> bytes:
    response = _error(
        HTTPStatus.SERVICE_UNAVAILABLE, "The local gateway has too many open connections; retry shortly."
    )
    head = [
        "HTTP/1.1 503 Service Unavailable",
        *(f"{name}: {value}" for name, value in response.headers),
        "Retry-After: 1",
        f"Content-Length: {len(response.body)}",
        "Connection: close",
    ]
    return "\r\n".join(head).encode() + b"\r\n\r\n" + response.body


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, listener: socket.socket, handler: type[_RequestHandler], max_connections: int) -> None:
        super().__init__(listener.getsockname(), handler, bind_and_activate=False)
        self.socket.close()  # the one socketserver made: this server serves on the listener
        self.socket = listener
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            # Answered from the accepting thread: a few hundred bytes, which the socket buffer takes.
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(_busy_answer())
            log.warning("%s: refused, too many open connections", client_address[0])
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()  # no thread was started to release it
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: ARG002 - socketserver's
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.info(
                "%s: the client left before its answer was sent (%s)", client_address[0], type(error).__name__
            )
            return
        log.exception("%s: the gateway failed on this connection", client_address[0])


class GatewayServer:
    """The gateway on a listening socket its owner bound (herald_local.host.listeners); it closes
    the socket when it stops."""

    def __init__(
        self,
        gateway: Gateway,
        listener: socket.socket,
        idle_timeout: float = IDLE_TIMEOUT_SECONDS,
        *,
        head_timeout: float = HEAD_TIMEOUT_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        handler: type[_RequestHandler] = type(
            "GatewayHandler",
            (_RequestHandler,),
            {"gateway": gateway, "timeout": idle_timeout, "head_timeout": head_timeout},
        )
        self._server = _Server(listener, handler, max_connections)
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
