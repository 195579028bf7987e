"""The local gateway as a raw client meets it: every request, however malformed, gets an answer in
the API's error envelope with a fitting status, and a silent connection is closed."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from herald_local.functions import FunctionUnavailable, Invocation
from herald_local.gateway import Gateway, GatewayServer
from herald_local.routes import RouteTable
from herald_local.topology import RouteSpec

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


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1e3", b"12, 13"])
def test_given_a_content_length_that_is_not_a_byte_count_then_it_answers_400(
    port: int, length: bytes
) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n{}"
    response = _exchange(port, raw)
    assert response.status == 400
    assert _error_of(response)["error"] == "Content-Length must be a whole number of bytes."
    assert response.getheader("Connection") == "close"


def test_given_a_body_shorter_than_its_content_length_then_it_answers_400_once_the_client_is_done(
    port: int,
) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{}"
    response = _exchange(port, raw, close_write=True)
    assert response.status == 400
    assert _error_of(response)["error"] == "The request body ended before its announced length."


def test_given_a_body_that_stops_arriving_then_it_answers_408(port: int) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{}"
    response = _exchange(port, raw)
    assert response.status == 408
    assert _error_of(response) | {"timestamp": ""} == {
        "success": False,
        "error": "The request did not arrive completely in time.",
        "code": "request_timeout",
        "timestamp": "",
    }


def test_given_a_tls_handshake_on_the_plain_http_port_then_it_answers_400_naming_the_scheme(
    port: int,
) -> None:
    client_hello = bytes.fromhex("1603010200010001fc0303") + bytes(64)
    response = _exchange(port, client_hello)
    assert response.status == 400
    assert _error_of(response)["error"] == "This port speaks plain HTTP; use http://, not https://."


def test_given_a_garbage_request_line_then_it_answers_400_in_the_envelope(port: int) -> None:
    response = _exchange(port, b"HELLO THERE\r\n\r\n")
    assert response.status == 400
    error = _error_of(response)
    assert (error["code"], error["error"]) == ("bad_request", "The request is not valid HTTP/1.1.")


def test_given_both_content_length_and_chunked_then_it_answers_400(port: int) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    response = _exchange(port, raw)
    assert response.status == 400
    assert "both Content-Length and Transfer-Encoding" in _error_of(response)["error"]


def test_given_a_malformed_chunk_size_then_it_answers_400(port: int) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    response = _exchange(port, raw)
    assert response.status == 400
    assert _error_of(response)["error"] == "The chunked request body is malformed."


def test_given_a_body_over_the_limit_then_it_answers_413(port: int) -> None:
    raw = b"POST /api/v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 10485761\r\n\r\n"
    response = _exchange(port, raw)
    assert response.status == 413
    assert _error_of(response)["code"] == "request_entity_too_large"


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
