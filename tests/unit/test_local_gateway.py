"""The local gateway as a raw client meets it: every request, however malformed, gets an answer in
the API's error envelope with a fitting status, and a silent connection is closed."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import pytest

from herald_local.apigateway.gateway import Gateway, GatewayServer
from herald_local.apigateway.routes import RouteTable
from herald_local.awslambda.functions import FunctionUnavailable, Invocation
from herald_local.cloudformation.topology import RouteSpec

IDLE_TIMEOUT = 0.5
CLIENT_TIMEOUT = 10.0


@dataclass
class FakeFunction:
    """Answers every invocation with ``outcome``: an Invocation, or a FunctionUnavailable raised."""

    outcome: Invocation | FunctionUnavailable

    def invoke(self, event: Any, timeout: float | None = None) -> Invocation:
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
}


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    routes = [
        RouteSpec("api", "GET", "/api/v1/ping", "Ping", 5.0),
        RouteSpec("api", "POST", "/api/v1/ping", "Ping", 5.0),
        RouteSpec("api", "GET", "/slow", "Slow", 5.0),
        RouteSpec("api", "GET", "/down", "Down", 5.0),
        RouteSpec("api", "GET", "/crash", "Crash", 5.0),
    ]
    server = GatewayServer(Gateway(RouteTable(routes), FUNCTIONS.__getitem__), 0, idle_timeout=IDLE_TIMEOUT)
    server.start()
    yield server.port
    server.stop()


def _exchange(port: int, raw: bytes, *, close_write: bool = False) -> http.client.HTTPResponse:
    """Sends ``raw`` as is and reads one HTTP response (its body read in full)."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)
    connection.sendall(raw)
    if close_write:
        connection.shutdown(socket.SHUT_WR)
    response = http.client.HTTPResponse(connection)
    response.begin()
    response.body = response.read()  # type: ignore[attr-defined]
    connection.close()
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
