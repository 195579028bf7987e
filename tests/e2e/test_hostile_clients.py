"""The second outside probe (issue 20), replayed through the local stack over raw HTTP, where the
local stack itself was part of the problem: its gateway (bytes that are not UTF-8, methods, slow,
cut-short and abandoned requests, floods of connections) and its sandbox (the loopback exception),
and the webhooks a client follows in the sandbox (a URL outside ASCII, an unsigned delivery's id)."""

from __future__ import annotations

import http.client
import json
import select
import socket
import struct
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from herald_harness.tenants import Tenant
from tests.e2e.clients import finished_job, sandbox, wait_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

CLIENT_TIMEOUT = 30.0
# The gateway's own limits (herald_local.apigateway.gateway): what the probe's slow and many clients meet.
HEAD_TIMEOUT_SECONDS = 10.0
MAX_CONNECTIONS = 128
EMAIL = {"to": "someone@example.com", "subject": "Hello", "body": "<p>Hi</p>"}


@pytest.fixture(scope="module")
def tenant(local_stack: RunningStack) -> Tenant:
    """A startup tenant without providers or a signing secret: webhooks only, unsigned."""
    return Tenant(local_stack.api_root, *local_stack.create_tenant(plan="startup", name="Probe"))


def _address(stack: RunningStack) -> tuple[str, int]:
    parts = urlsplit(stack.base_url)
    return str(parts.hostname), int(parts.port or 80)


def _connect(stack: RunningStack) -> socket.socket:
    return socket.create_connection(_address(stack), timeout=CLIENT_TIMEOUT)


def _answer(connection: socket.socket) -> tuple[http.client.HTTPResponse, dict[str, Any]]:
    response = http.client.HTTPResponse(connection)
    response.begin()
    return response, json.loads(response.read())


def _raw(
    stack: RunningStack, request: bytes, *, close_write: bool = False
) -> tuple[http.client.HTTPResponse, dict[str, Any]]:
    with _connect(stack) as connection:
        connection.sendall(request)
        if close_write:
            connection.shutdown(socket.SHUT_WR)
        return _answer(connection)


def _post(
    stack: RunningStack, path: str, body: bytes, key: str, content_type: str = "application/json"
) -> bytes:
    head = (
        f"POST /api/v1{path} HTTP/1.1\r\nHost: {_address(stack)[0]}\r\nX-API-Key: {key}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def _jobs(tenant: Tenant) -> list[str]:
    listed = tenant.call("GET", "/notifications/jobs?limit=100")
    assert listed.status_code == 200, listed.text
    return [job["id"] for job in listed.json()["data"]["data"]]


def _webhook(tenant: Tenant, url: str) -> Any:
    return tenant.call("POST", "/notifications/webhook", {"url": url, "payload": {"event": "probe"}})


# ---------------------------------------------------------------- the API through the gateway


def test_a_subject_in_bytes_that_are_not_utf8_is_400_and_nothing_is_stored(
    local_stack: RunningStack, tenant: Tenant
) -> None:
    """Once 202, stored and sent as caf\ufffd: the gateway replaced the byte before the function saw it."""
    before = _jobs(tenant)
    body = b'{"to":"someone@example.com","subject":"caf\xe9","body":"<p>Hi</p>"}'
    response, error = _raw(local_stack, _post(local_stack, "/notifications/email", body, tenant.api_key))
    assert (response.status, error["code"], error["error"]) == (
        400,
        "invalid_json",
        "The request body is not UTF-8 text.",
    )
    assert _jobs(tenant) == before


def test_upper_case_json_is_json(local_stack: RunningStack, tenant: Tenant) -> None:
    hook = {"url": f"{local_stack.sandbox_url}/hooks/upper-case", "payload": {"event": "probe"}}
    request = _post(
        local_stack, "/notifications/webhook", json.dumps(hook).encode(), tenant.api_key, "APPLICATION/JSON"
    )
    response, accepted = _raw(local_stack, request)
    assert response.status == 202, accepted
    assert accepted["data"]["jobId"] in _jobs(tenant)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/api/v1/ping", "GET"),
        ("TRACE", "/api/v1/ping", "GET"),
        ("DELETE", "/api/v1/health", "GET"),
        ("GET", "/api/v1/signin/verify", "POST"),
        ("GET", "/api/v1/webhooks/resend/ten_x", "POST"),
    ],
)
def test_a_method_the_path_does_not_take_is_405_with_exactly_its_allow(
    local_stack: RunningStack, method: str, path: str, allow: str
) -> None:
    """Once PUT /ping answered 404 "No route", and TRACE's Allow listed PUT, which then 404ed."""
    response, error = _raw(
        local_stack, f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    )
    assert (response.status, error["code"]) == (405, "method_not_allowed")
    assert response.getheader("Allow") == allow


# ---------------------------------------------------------------- webhooks and the sandbox


def test_a_webhook_url_outside_ascii_is_delivered_percent_encoded(
    local_stack: RunningStack, tenant: Tenant
) -> None:
    """Once a crash in http.client for every attempt, the job left processing."""
    job_id = tenant.send(
        "webhook", {"url": f"{local_stack.sandbox_url}/hooks/café", "payload": {"event": "probe"}}
    )
    job = finished_job(tenant, job_id)
    assert job["status"] == "completed", job
    [hook] = sandbox(local_stack, "hooks", jobId=job_id)
    assert hook["name"] == "café"


@pytest.mark.parametrize(
    "path", ["/hooks/crlf\r\nX-Injected:1", "/hooks/tab\tx", "/hooks/ls\u2028x", "/hooks/nel\x85x"]
)
def test_a_webhook_url_that_is_not_one_line_is_refused(
    local_stack: RunningStack, tenant: Tenant, path: str
) -> None:
    """Once .../crlf\r\nX-Injected:1 was delivered to .../crlfX-Injected:1, and U+2028 crashed the worker."""
    before = _jobs(tenant)
    answer = _webhook(tenant, f"{local_stack.sandbox_url}{path}")
    assert (answer.status_code, answer.json()["code"]) == (400, "url_not_allowed"), answer.text
    assert _jobs(tenant) == before


@pytest.mark.parametrize(
    "path",
    [
        "/_sandbox/outage",
        "/_sandbox",
        "/hooks/../_sandbox/outage",
        "/hooks/%2e%2e/_sandbox/outage",
        "/sendgrid/v3/mail/send",
    ],
)
def test_a_webhook_may_reach_the_sandboxs_receiver_only(
    local_stack: RunningStack, tenant: Tenant, path: str
) -> None:
    answer = _webhook(tenant, f"{local_stack.sandbox_url}{path}")
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == (
        "The webhook URL is not allowed: the local stack's sandbox receives webhooks under /hooks/ only"
    )


def test_an_unsigned_webhook_carries_its_job_id(local_stack: RunningStack, tenant: Tenant) -> None:
    """Without a signing secret no webhook-id was sent, so a receiver could not deduplicate."""
    job_id = tenant.send(
        "webhook", {"url": f"{local_stack.sandbox_url}/hooks/unsigned", "payload": {"event": "probe"}}
    )
    hook = wait_for(lambda: sandbox(local_stack, "hooks", jobId=job_id), "the unsigned webhook")[0]
    headers = {name.lower(): value for name, value in hook["headers"].items()}
    assert headers["webhook-id"] == job_id
    assert not {"webhook-signature", "x-webhook-signature"} & set(headers)


# ---------------------------------------------------------------- hostile clients of the gateway


def test_a_head_cut_short_by_the_end_of_the_connection_never_reaches_a_function(
    local_stack: RunningStack, tenant: Tenant
) -> None:
    head = (
        f"POST /api/v1/notifications/webhook HTTP/1.1\r\nHost: x\r\nX-API-Key: {tenant.api_key}\r\nContent-Le"
    )
    response, error = _raw(local_stack, head.encode(), close_write=True)
    assert (response.status, error["error"]) == (
        400,
        "The request headers ended before the blank line that closes them.",
    )
    assert response.getheader("apigw-requestid") is None  # the gateway's own answer: no function ran


def test_a_head_dripped_a_byte_at_a_time_is_cut_off_at_the_head_deadline(local_stack: RunningStack) -> None:
    with _connect(local_stack) as connection:
        connection.sendall(b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        started = time.monotonic()
        while not select.select([connection], [], [], 1.0)[0]:  # a byte a second: no read ever times out
            connection.sendall(b"a")
            assert time.monotonic() - started < HEAD_TIMEOUT_SECONDS + 10, (
                "the dripping head was never cut off"
            )
        response, error = _answer(connection)
    assert (response.status, error["error"]) == (
        408,
        "The request headers did not arrive completely in time.",
    )
    assert time.monotonic() - started >= HEAD_TIMEOUT_SECONDS - 1.5


@pytest.fixture
def held_connections(local_stack: RunningStack) -> Iterator[list[socket.socket]]:
    """Every connection the gateway serves at once, each with a request answered and kept open."""
    held: list[socket.socket] = []
    try:
        for _ in range(MAX_CONNECTIONS):
            connection = _connect(local_stack)
            held.append(connection)
            connection.sendall(b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
            response = http.client.HTTPResponse(connection)
            response.begin()
            response.read()
            assert response.status == 200
        yield held
    finally:
        for connection in held:
            connection.close()


def test_connections_beyond_the_limit_are_refused_at_once_and_served_again_once_others_close(
    local_stack: RunningStack, held_connections: list[socket.socket]
) -> None:
    """Once 2 500 dripping connections made 2 359 threads."""
    response, error = _raw(local_stack, b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (response.status, error["code"], response.getheader("Retry-After")) == (
        503,
        "service_unavailable",
        "1",
    )
    for connection in held_connections[:4]:
        connection.close()

    def served() -> bool:
        return (
            _raw(local_stack, b"GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0].status
            == 200
        )

    wait_for(served, "a place to free up", timeout=CLIENT_TIMEOUT)


def test_a_client_that_leaves_before_its_answer_is_one_log_line_and_no_traceback(
    local_stack: RunningStack,
) -> None:
    """Once every client close printed a BrokenPipe traceback (3 464 on the console in one run). The
    client asks for the Swagger page (1.7 MB) eight times in a row on one connection and reads next
    to nothing with a small receive window, so the gateway is still writing when the client resets
    the connection."""
    left = "the client left before its answer was sent"
    before = local_stack.log_file.read_text(errors="replace").count(left)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as connection:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.settimeout(CLIENT_TIMEOUT)
        connection.connect(_address(local_stack))
        connection.sendall(b"GET /api/v1/docs HTTP/1.1\r\nHost: x\r\n\r\n" * 8)
        assert connection.recv(16).startswith(b"HTTP/1.1 200")  # the answers have begun
        time.sleep(2.0)  # the socket buffers fill; the gateway waits to write more
        connection.setsockopt(
            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
        )  # leave with a reset

    log = wait_for(
        lambda: (text := local_stack.log_file.read_text(errors="replace")).count(left) > before and text,
        "the gateway's line about the client that left",
    )
    assert log.count(left) == before + 1
    for traceback_sign in (
        "BrokenPipeError: [Errno",
        "ConnectionResetError: [Errno",
        "Exception occurred during processing",
    ):
        assert traceback_sign not in log
