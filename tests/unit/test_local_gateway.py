"""The local gateway as a raw client meets it: every request, however malformed, gets an answer in
the API's error envelope with a fitting status; a silent connection is closed, a head dripped a byte
at a time ends at the head deadline, a head cut short never reaches a function, connections beyond
the limit are refused at once, and a client that leaves early is one log line."""

from __future__ import annotations

import http.client
import json
import logging
import select
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import pytest

from herald_local.apigateway.gateway import Gateway, GatewayServer
from herald_local.apigateway.routes import RouteTable
from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import RouteSpec
from herald_local.host.listeners import listen

IDLE_TIMEOUT = 0.5
HEAD_TIMEOUT = 1.0
MAX_CONNECTIONS = 6
CLIENT_TIMEOUT = 10.0


@dataclass
class FakeFunction:
    """Answers every invocation with ``outcome``: an Invocation, or a FunctionUnavailable raised."""

    outcome: Invocation | FunctionUnavailable
    delay: float = 0.0
    events: list[Any] = field(default_factory=list)

    def invoke(self, event: Any, timeout: float | None = None) -> Invocation:
        self.events.append(event)
        time.sleep(self.delay)
        if isinstance(self.outcome, FunctionUnavailable):
            raise self.outcome
        return self.outcome


def _answer(body: str) -> Invocation:
    return Invocation("request-1", json.dumps({"statusCode": 200, "body": body}).encode(), None)


FUNCTIONS = {
    "Ping": FakeFunction(_answer("pong")),
    "Slow": FakeFunction(FunctionUnavailable("Slow did not answer within 5 s", timed_out=True)),
    "Down": FakeFunction(FunctionUnavailable("Down runner is unreachable")),
    "Crash": FakeFunction(Invocation("request-2", b'{"errorType": "RuntimeError"}', "Unhandled")),
    "Lagging": FakeFunction(_answer("late"), delay=0.3),
}


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    routes = [
        RouteSpec("api", "GET", "/api/v1/ping", "Ping", 5.0),
        RouteSpec("api", "POST", "/api/v1/ping", "Ping", 5.0),
        RouteSpec("api", "GET", "/slow", "Slow", 5.0),
        RouteSpec("api", "GET", "/down", "Down", 5.0),
        RouteSpec("api", "GET", "/crash", "Crash", 5.0),
        RouteSpec("api", "GET", "/lagging", "Lagging", 5.0),
    ]
    server = GatewayServer(
        Gateway(RouteTable(routes), FUNCTIONS.__getitem__),
        listen(0),
        idle_timeout=IDLE_TIMEOUT,
        head_timeout=HEAD_TIMEOUT,
        max_connections=MAX_CONNECTIONS,
    )
    server.start()
    yield server.port
    server.stop()


def _exchange(port: int, raw: bytes, *, close_write: bool = False) -> http.client.HTTPResponse:
    """Sends ``raw`` as is and reads one HTTP response (its body read in full)."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)
    connection.sendall(raw)
    if close_write:
        connection.shutdown(socket.SHUT_WR)
    response = _response_of(connection)
    connection.close()
    return response


def _response_of(connection: socket.socket) -> http.client.HTTPResponse:
    """The next response on ``connection``, its body read in full (the connection stays open)."""
    response = http.client.HTTPResponse(connection)
    response.begin()
    response.body = response.read()  # type: ignore[attr-defined]
    return response


def _error_of(response: http.client.HTTPResponse) -> dict[str, Any]:
    assert response.getheader("Content-Type") == "application/json"
    document: dict[str, Any] = json.loads(response.body)  # type: ignore[attr-defined]
    assert document["success"] is False
    assert document["timestamp"].endswith("Z")
    return document


def test_given_a_trace_request_to_a_route_then_it_answers_405_with_the_allowed_methods(port: int) -> None:
    response = _exchange(port, b"TRACE /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
    assert response.status == 405
    assert response.getheader("Allow") == "GET, POST"
    error = _error_of(response)
    assert error["code"] == "method_not_allowed"
    assert error["error"] == "/api/v1/ping does not accept TRACE requests."


def test_given_any_method_on_a_path_no_route_has_then_it_answers_404(port: int) -> None:
    for method in (b"TRACE", b"GET"):
        response = _exchange(port, method + b" /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        assert response.status == 404
        assert _error_of(response) | {"timestamp": ""} == {
            "success": False,
            "error": "No route serves /nowhere.",
            "code": "not_found",
            "timestamp": "",
        }


POST = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\n"
NOT_A_LENGTH = "Content-Length must be a whole number of bytes."


@pytest.mark.parametrize(
    ("raw", "close_write", "status", "sentence"),
    [
        pytest.param(POST + b"Content-Length: abc\r\n\r\n{}", False, 400, NOT_A_LENGTH, id="letters"),
        pytest.param(POST + b"Content-Length: -1\r\n\r\n{}", False, 400, NOT_A_LENGTH, id="negative"),
        pytest.param(POST + b"Content-Length: 1e3\r\n\r\n{}", False, 400, NOT_A_LENGTH, id="exponent"),
        pytest.param(
            POST + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            False,
            400,
            "The request has conflicting Content-Length headers.",
            id="two-lengths",
        ),
        pytest.param(
            POST + b"Content-Length: 100\r\n\r\n{}",
            True,
            400,
            "The request body ended before its announced length.",
            id="body-shorter-than-length",
        ),
        pytest.param(
            POST + b"Content-Length: 100\r\n\r\n{}",
            False,
            408,
            "The request did not arrive completely in time.",
            id="body-stops-arriving",
        ),
        pytest.param(
            bytes.fromhex("1603010200010001fc0303") + bytes(64),
            False,
            400,
            "This port speaks plain HTTP; use http://, not https://.",
            id="tls-handshake",
        ),
        pytest.param(b"HELLO THERE\r\n\r\n", False, 400, "The request is not valid HTTP/1.1.", id="garbage"),
        pytest.param(
            POST + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            False,
            400,
            "A request cannot have both Content-Length and Transfer-Encoding.",
            id="length-and-chunked",
        ),
        pytest.param(
            POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
            False,
            400,
            "The chunked request body is malformed.",
            id="bad-chunk-size",
        ),
        pytest.param(
            POST + b"Content-Length: 10485761\r\n\r\n",
            False,
            413,
            "The request body is over the 10 MiB limit.",
            id="over-the-limit",
        ),
    ],
)
def test_given_a_malformed_or_stalled_request_then_it_answers_in_the_envelope_and_closes(
    port: int, raw: bytes, close_write: bool, status: int, sentence: str
) -> None:
    response = _exchange(port, raw, close_write=close_write)
    assert response.status == status
    error = _error_of(response)
    assert (error["error"], error["code"]) == (sentence, HTTPStatus(status).phrase.lower().replace(" ", "_"))
    assert response.getheader("Connection") == "close"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/slow", 504, "gateway_timeout"),
        ("/down", 503, "service_unavailable"),
        ("/crash", 500, "internal_server_error"),
    ],
)
def test_given_a_function_that_cannot_answer_then_the_status_says_why(
    port: int, path: str, status: int, code: str
) -> None:
    response = _exchange(port, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert response.status == status
    assert _error_of(response)["code"] == code
    assert response.getheader("apigw-requestid")


def test_given_a_well_formed_request_then_the_connection_serves_the_next_one_too(port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=CLIENT_TIMEOUT)
    for _ in range(2):
        connection.request("POST", "/api/v1/ping", body=b"{}", headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, b"pong")
    connection.close()


def test_given_a_connection_that_sends_nothing_then_the_gateway_closes_it(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as connection:
        assert connection.recv(1024) == b""


# ---------------------------------------------------------------- hostile clients (issue 20, item 8)


def test_given_a_head_dripped_a_byte_at_a_time_then_the_head_deadline_answers_408(port: int) -> None:
    """Each byte comes well within the idle timeout, so no single read ever times out: only the
    deadline on the whole head ends it, and the function never sees the request."""
    calls = len(FUNCTIONS["Ping"].events)
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as connection:
        connection.sendall(b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        started = time.monotonic()
        while not select.select([connection], [], [], IDLE_TIMEOUT / 5)[0]:
            connection.sendall(b"a")
            assert time.monotonic() - started < HEAD_TIMEOUT + 3, "the dripping head was never cut off"
        response = _response_of(connection)
    waited = time.monotonic() - started
    assert response.status == 408
    assert _error_of(response)["error"] == "The request headers did not arrive completely in time."
    assert response.getheader("Connection") == "close"
    assert HEAD_TIMEOUT - 0.2 <= waited < HEAD_TIMEOUT + 1.5
    assert len(FUNCTIONS["Ping"].events) == calls


@pytest.mark.parametrize(
    "head",
    [
        b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Le",
        b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\n",
        b"GET /api/v1/ping HTTP/1.1",
    ],
    ids=["inside-a-header", "before-the-blank-line", "inside-the-request-line"],
)
def test_given_a_head_cut_short_by_the_end_of_the_connection_then_no_function_sees_it(
    port: int, head: bytes
) -> None:
    calls = len(FUNCTIONS["Ping"].events)
    response = _exchange(port, head, close_write=True)
    assert response.status == 400
    assert _error_of(response)["error"] == "The request headers ended before the blank line that closes them."
    assert len(FUNCTIONS["Ping"].events) == calls


def test_given_a_client_that_leaves_before_its_answer_then_the_gateway_logs_one_line(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="herald_local.apigateway.gateway")
    lagging = FUNCTIONS["Lagging"]
    calls = len(lagging.events)
    connection = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)
    connection.sendall(b"GET /lagging HTTP/1.1\r\nHost: x\r\n\r\n")
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while len(lagging.events) == calls:  # the function has the request: now leave, resetting
        assert time.monotonic() < deadline
        time.sleep(0.01)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
    while not [record for record in caplog.records if "left before" in record.getMessage()]:
        assert time.monotonic() < deadline, [record.getMessage() for record in caplog.records]
        time.sleep(0.02)

    gateway_lines = [record for record in caplog.records if record.name == "herald_local.apigateway.gateway"]
    [left] = [record for record in gateway_lines if "left before" in record.getMessage()]
    assert left.getMessage() in {
        f"127.0.0.1: the client left before its answer was sent ({name})"
        for name in ("BrokenPipeError", "ConnectionResetError")
    }
    assert all(record.exc_info is None for record in gateway_lines)


def test_given_more_connections_than_the_limit_then_the_rest_are_refused_at_once(port: int) -> None:
    """Connections hold a thread each while open: beyond the limit a connection is answered 503 at
    once and closed, instead of one thread more per dripping client."""
    held = [
        socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) for _ in range(MAX_CONNECTIONS)
    ]
    try:
        for connection in held:  # each is being served: a request on it is answered
            connection.sendall(b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _response_of(connection).status == 200
        threads = threading.active_count()
        response = _exchange(port, b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
        assert response.status == 503
        assert (
            _error_of(response)["error"] == "The local gateway has too many open connections; retry shortly."
        )
        assert (response.getheader("Retry-After"), response.getheader("Connection")) == ("1", "close")
        assert threading.active_count() <= threads
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while _exchange(port, b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n").status == 503:
        assert time.monotonic() < deadline, "closed connections never gave their places back"
        time.sleep(0.05)
