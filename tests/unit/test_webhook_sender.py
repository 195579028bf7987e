"""The webhook HTTP sender against real sockets: SSRF at dial time, signing, classification, TLS."""

from __future__ import annotations

import email.utils
import hashlib
import hmac
import ipaddress
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from msgspec.structs import replace
from standardwebhooks.webhooks import Webhook

from herald.adapters.ssrf import IPAddress
from herald.adapters.webhook_sender import send_webhook
from herald.domain.signing import new_signing_secret
from herald.domain.webhooks import OutboundWebhook, UrlNotAllowed, WebhookOutcome
from tests.support.ports import refusing_port

BODY = b'{"event":"invoice.paid","invoice":{"id":"inv_42","amount":1999}}'
JOB_ID = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"
USER_AGENT = "Herald/0.1.0"
TLS_HOST = "hooks.example.test"

# Every socket.connect in this process, seen through the interpreter's audit hooks: a dial that the
# guard should have prevented shows up here whatever code path made it.
_DIAL_RECORDERS: list[list[tuple[Any, ...]]] = []


def _record_dials(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        for recorder in _DIAL_RECORDERS:
            recorder.append(tuple(args[1])[:2])


sys.addaudithook(_record_dials)


@pytest.fixture
def dials() -> Iterator[list[tuple[Any, ...]]]:
    recorder: list[tuple[Any, ...]] = []
    _DIAL_RECORDERS.append(recorder)
    yield recorder
    _DIAL_RECORDERS.remove(recorder)


class FixedResolver:
    def __init__(self, *addresses: str) -> None:
        self.answers = [ipaddress.ip_address(address) for address in addresses]
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.calls += 1
        return list(self.answers)


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass
class Received:
    method: str
    path: str
    headers: Message
    body: bytes


class RecordingServer:
    """An HTTP(S) server on 127.0.0.1 that records each request and answers with ``reply``."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.received: list[Received] = []
        self.reply = Reply()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port: int = self._server.server_address[1]
        # A short poll interval so shutdown() returns at once instead of after the default half second.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,), daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        recording = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                recording.received.append(Received(self.command, self.path, self.headers, body))
                reply = recording.reply
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output clean."""

        return Handler

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


def hook(url: str, *, method: str = "POST", headers: dict[str, str] | None = None) -> OutboundWebhook:
    return OutboundWebhook(job_id=JOB_ID, url=url, method=method, headers=headers or {}, body=BODY)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def without_exchange(outcome: WebhookOutcome) -> WebhookOutcome:
    """The outcome without what varies from run to run (latency, timestamps in the headers)."""
    return replace(outcome, latency_ms=None, exchange=None)


def excerpt(outcome: WebhookOutcome) -> str:
    assert outcome.exchange is not None
    return outcome.exchange.body_excerpt


def send(target: OutboundWebhook, **options: Any) -> WebhookOutcome:
    options.setdefault("secrets", [new_signing_secret()])
    # The test's loopback server plays the local stack's provider sandbox: the one origin allowed.
    options.setdefault("local_origin", _origin(target.url))
    options.setdefault("user_agent", USER_AGENT)
    return send_webhook(target, **options)


# --- (a) SSRF at dial time: nothing is dialled -------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A listening socket on 127.0.0.1; the kernel queues any connection made to it, accepted or not."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        sock.setblocking(False)
        yield sock


def connections_made_to(listener: socket.socket) -> int:
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


@pytest.mark.parametrize(
    "answers",
    [
        ["127.0.0.1"],
        ["10.0.0.1"],
        ["169.254.169.254"],
        ["::1"],
        ["::ffff:127.0.0.1"],
        ["100.64.0.1"],
        ["fd00:ec2::254"],
        ["8.8.8.8", "127.0.0.1"],
        ["93.184.215.14", "10.0.0.1"],
    ],
)
def test_given_a_host_resolving_to_a_non_public_address_then_nothing_is_dialled(
    answers: list[str], listener: socket.socket, dials: list[tuple[Any, ...]]
) -> None:
    port = listener.getsockname()[1]

    outcome = send(
        hook(f"https://hooks.example.com:{port}/hook"), local_origin=None, resolve=FixedResolver(*answers)
    )

    assert (outcome.ok, outcome.error_class, outcome.status_code) == (False, "permanent", None)
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("URL not allowed")
    assert connections_made_to(listener) == 0
    assert dials == []


def test_given_loopback_allowed_then_the_same_listener_does_see_the_dial(
    listener: socket.socket, dials: list[tuple[Any, ...]]
) -> None:
    """Control for the test above: the listener would notice a dial. It never answers the TLS
    handshake, so the deadline ends the attempt."""
    port = listener.getsockname()[1]

    outcome = send(
        hook(f"https://hooks.example.com:{port}/hook"), resolve=FixedResolver("127.0.0.1"), total_timeout=0.3
    )

    assert (outcome.ok, outcome.error_class, outcome.error_message) == (
        False,
        "transient",
        "the endpoint did not answer in time",
    )
    assert connections_made_to(listener) == 1
    assert dials == [("127.0.0.1", port)]


def test_given_plain_http_without_the_local_switch_then_nothing_is_dialled(
    server: RecordingServer, dials: list[tuple[Any, ...]]
) -> None:
    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"), local_origin=None)

    assert (outcome.ok, outcome.error_class) == (False, "permanent")
    assert server.received == []
    assert dials == []


def test_given_a_dns_timeout_at_dial_time_then_the_failure_is_transient(dials: list[tuple[Any, ...]]) -> None:
    def timing_out(host: str, port: int) -> list[IPAddress]:
        raise UrlNotAllowed("the host name did not resolve in time", retryable=True)

    outcome = send(hook("https://hooks.example.com/hook"), resolve=timing_out)

    assert (outcome.ok, outcome.error_class) == (False, "transient")
    assert dials == []


# --- (b) DNS rebinding: the sender dials what it checked ---------------------------------------------


class RebindingResolver:
    """First an allowed answer, then the cloud metadata address for every later lookup."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.calls += 1
        return [ipaddress.ip_address("127.0.0.1" if self.calls == 1 else "169.254.169.254")]


def test_given_a_rebinding_name_then_the_checked_address_is_the_one_dialled(
    server: RecordingServer, dials: list[tuple[Any, ...]]
) -> None:
    resolver = RebindingResolver()

    outcome = send(hook(f"http://rebind.example.test:{server.port}/hook"), resolve=resolver)

    assert outcome.ok
    assert resolver.calls == 1
    assert dials == [("127.0.0.1", server.port)]
    assert len(server.received) == 1


def test_given_several_addresses_then_they_are_tried_in_order_until_one_connects(
    server: RecordingServer, dials: list[tuple[Any, ...]]
) -> None:
    outcome = send(
        hook(f"http://two.example.test:{server.port}/hook"), resolve=FixedResolver("127.0.0.2", "127.0.0.1")
    )

    assert outcome.ok
    assert dials == [("127.0.0.2", server.port), ("127.0.0.1", server.port)]
    assert len(server.received) == 1


# --- (c) what arrives at the receiver ----------------------------------------------------------------


def verify_notifykit(secret: str, body: bytes, headers: Message) -> bool:
    """The NotifyKit SDK's check, re-implemented: the last ``v1`` of the header is compared."""
    fields = dict(part.split("=", 1) for part in str(headers["X-Webhook-Signature"]).split(","))
    expected = hmac.new(secret.encode(), f"{fields['t']}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields["v1"])


def test_given_a_signed_webhook_then_the_receiver_gets_the_exact_bytes_and_valid_signatures(
    server: RecordingServer,
) -> None:
    old, new = new_signing_secret(), new_signing_secret()
    custom = {"X-Tenant-Trace": "trace-7", "Authorization": "Bearer tenant-token"}
    target = hook(f"http://sandbox.local.test:{server.port}/hooks/in?src=herald", headers=custom)

    outcome = send(
        target, secrets=[old, new], resolve=FixedResolver("127.0.0.1"), now=lambda: int(time.time())
    )

    assert (outcome.ok, outcome.status_code) == (True, 200)
    [request] = server.received
    assert (request.method, request.path, request.body) == ("POST", "/hooks/in?src=herald", BODY)
    received = dict(request.headers.items())
    assert Webhook(old).verify(request.body, received) == Webhook(new).verify(request.body, received)
    assert verify_notifykit(new, request.body, request.headers)
    assert request.headers.get_all("webhook-id") == [JOB_ID]
    assert request.headers.get_all("X-Tenant-Trace") == ["trace-7"]
    assert request.headers.get_all("Authorization") == ["Bearer tenant-token"]
    assert request.headers.get_all("Content-Type") == ["application/json"]
    assert request.headers.get_all("User-Agent") == [USER_AGENT]
    assert request.headers.get_all("Host") == [f"sandbox.local.test:{server.port}"]


def test_given_tenant_headers_named_like_ours_then_they_cannot_override_them(server: RecordingServer) -> None:
    secret = new_signing_secret()
    forged = {
        "content-type": "text/plain",
        "USER-AGENT": "curl/8.0",
        "Host": "internal.example",
        "Content-Length": "1",
        "Transfer-Encoding": "chunked",
        "X-Webhook-Signature": "t=1,v1=forged",
        "x-webhook-timestamp": "1",
        "Webhook-Id": "forged-id",
        "webhook-signature": "v1,Zm9yZ2Vk",
    }

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook", headers=forged), secrets=[secret])

    assert outcome.ok
    [request] = server.received
    assert request.body == BODY
    assert request.headers.get_all("Content-Type") == ["application/json"]
    assert request.headers.get_all("User-Agent") == [USER_AGENT]
    assert request.headers.get_all("Host") == [f"127.0.0.1:{server.port}"]
    assert request.headers.get_all("Content-Length") == [str(len(BODY))]
    assert request.headers.get_all("Transfer-Encoding") is None
    assert request.headers.get_all("webhook-id") == [JOB_ID]
    assert len(request.headers.get_all("X-Webhook-Signature") or []) == 1
    assert verify_notifykit(secret, request.body, request.headers)
    assert Webhook(secret).verify(request.body, dict(request.headers.items()))


def test_given_a_stored_job_with_hop_by_hop_headers_then_they_never_reach_the_receiver(
    server: RecordingServer,
) -> None:
    """Refused at acceptance now; a job accepted before that still sends without them."""
    hop_by_hop = {"Connection": "Upgrade", "Upgrade": "h2c", "TE": "trailers", "Keep-Alive": "timeout=999"}
    tenants = {"Proxy-Authorization": "Basic eA==", "Expect": "100-continue", "X-Kept": "yes"}

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook", headers={**hop_by_hop, **tenants}))

    assert outcome.ok
    sent = {name.lower() for name in server.received[0].headers}
    assert not sent & {"upgrade", "te", "keep-alive", "proxy-authorization", "expect"}
    assert server.received[0].headers.get_all("Connection") in (None, ["close"])  # http.client's own
    assert server.received[0].headers.get_all("X-Kept") == ["yes"]


def test_given_a_path_outside_ascii_then_it_is_requested_percent_encoded(server: RecordingServer) -> None:
    """Once a crash in http.client (UnicodeEncodeError) that left the job processing for good."""
    outcome = send(hook(f"http://127.0.0.1:{server.port}/hooks/café?q=ü&r=%C3%A9"))

    assert outcome.ok
    assert [request.path for request in server.received] == ["/hooks/caf%C3%A9?q=%C3%BC&r=%C3%A9"]


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "GET"])
def test_given_another_method_then_it_is_used_with_the_same_body(
    server: RecordingServer, method: str
) -> None:
    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook", method=method))

    assert outcome.ok
    assert [(r.method, r.body) for r in server.received] == [(method, BODY)]


def test_given_no_signing_secret_then_the_webhook_is_sent_unsigned_with_its_job_id(
    server: RecordingServer,
) -> None:
    """Unsigned, a delivery still names its job, so a receiver can drop a second delivery of it."""
    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"), secrets=[])

    assert outcome.ok
    headers = server.received[0].headers
    sent = {name.lower() for name in headers}
    assert not sent & {"x-webhook-signature", "x-webhook-timestamp", "webhook-signature", "webhook-timestamp"}
    assert headers.get_all("webhook-id") == [JOB_ID]


@pytest.mark.parametrize(
    ("method", "headers"),
    [("TRACE", {}), ("POST", {"X-Evil": "a\r\nX-Injected: yes"}), ("POST", {"Bad Name": "x"})],
    ids=["unsupported method", "header injection", "invalid header name"],
)
def test_given_an_invalid_request_then_it_fails_for_good_without_dialling(
    server: RecordingServer, dials: list[tuple[Any, ...]], method: str, headers: dict[str, str]
) -> None:
    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook", method=method, headers=headers))

    assert (outcome.ok, outcome.error_class) == (False, "permanent")
    assert server.received == []
    assert dials == []


# --- (d) status classification -----------------------------------------------------------------------

NOW = 1_700_000_000


@pytest.mark.parametrize(
    ("reply", "ok", "error_class", "retry_after"),
    [
        (Reply(200, body=b'{"received":true}'), True, None, None),
        (Reply(204), True, None, None),
        (Reply(400), False, "permanent", None),
        (Reply(404), False, "permanent", None),
        (Reply(408), False, "transient", None),
        (Reply(429, {"Retry-After": "7"}), False, "transient", 7.0),
        (
            Reply(429, {"Retry-After": email.utils.formatdate(NOW + 30, usegmt=True)}),
            False,
            "transient",
            30.0,
        ),
        (Reply(429, {"Retry-After": email.utils.formatdate(NOW - 30, usegmt=True)}), False, "transient", 0.0),
        (Reply(429, {"Retry-After": "soon"}), False, "transient", None),
        (Reply(500, {"Retry-After": "5"}), False, "transient", None),
        (Reply(503, {"Retry-After": "120"}), False, "transient", 120.0),
    ],
    ids=[
        "200",
        "204",
        "400",
        "404",
        "408",
        "429 seconds",
        "429 http-date",
        "429 date past",
        "429 garbage",
        "500",
        "503 seconds",
    ],
)
def test_given_a_status_then_the_outcome_is_classified(
    server: RecordingServer, reply: Reply, ok: bool, error_class: str | None, retry_after: float | None
) -> None:
    server.reply = reply

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"), now=lambda: NOW)

    assert (outcome.ok, outcome.status_code, outcome.error_class) == (ok, reply.status, error_class)
    assert outcome.retry_after_seconds == retry_after
    assert (outcome.error_message is None) == ok


def test_given_a_redirect_then_it_is_not_followed_and_fails_for_good(server: RecordingServer) -> None:
    server.reply = Reply(301, {"Location": f"http://127.0.0.1:{server.port}/elsewhere"})

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"))

    assert (outcome.ok, outcome.status_code, outcome.error_class) == (False, 301, "permanent")
    assert outcome.error_message is not None
    assert "redirects are not followed" in outcome.error_message
    assert [r.path for r in server.received] == ["/hook"]


def test_given_a_refused_connection_then_the_failure_is_transient() -> None:
    with refusing_port() as port:
        outcome = send(hook(f"http://127.0.0.1:{port}/hook"))

    assert without_exchange(outcome) == WebhookOutcome(
        ok=False, error_class="transient", error_message="the endpoint refused the connection"
    )
    assert outcome.exchange is not None
    assert (outcome.exchange.response_headers, outcome.exchange.body_excerpt) == ({}, "")


@pytest.fixture
def dripping_server() -> Iterator[int]:
    """Answers a status line, then one header byte every 50 ms for 20 s: every single read succeeds
    quickly, so only a bound on the whole exchange ends it before the answer completes."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    listener.settimeout(10)  # never wait forever for a sender that does not come

    def drip() -> None:
        with suppress(OSError):  # the sender hangs up mid-drip
            connection, _ = listener.accept()
            with connection:
                connection.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                for _ in range(400):
                    if stop.wait(0.05):
                        return
                    connection.sendall(b"a")
                connection.sendall(b"\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=drip, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def test_given_an_endpoint_that_drips_its_answer_then_the_whole_exchange_is_bounded(
    dripping_server: int,
) -> None:
    outcome = send(hook(f"http://127.0.0.1:{dripping_server}/hook"), total_timeout=0.5)

    assert without_exchange(outcome) == WebhookOutcome(
        ok=False, error_class="transient", error_message="the endpoint did not answer in time"
    )


# --- (e) the response body excerpt -------------------------------------------------------------------


def test_given_a_large_response_then_only_the_first_4_kb_are_kept(server: RecordingServer) -> None:
    server.reply = Reply(200, body=b"x" * 5000)

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"))

    assert excerpt(outcome) == "x" * 4096


def test_given_an_answer_then_its_status_latency_and_headers_are_kept_bounded(
    server: RecordingServer,
) -> None:
    many = {f"X-Extra-{n:02d}": "v" * 300 for n in range(30)}
    server.reply = Reply(
        503, headers={"Set-Cookie": "session=abc", "X-Request-Id": "r-1", **many}, body=b"down"
    )

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"))

    assert outcome.exchange is not None
    kept = outcome.exchange.response_headers
    assert (outcome.status_code, outcome.exchange.body_excerpt) == (503, "down")
    assert (outcome.latency_ms or 0) >= 0
    assert len(kept) == 20
    assert (kept["Set-Cookie"], kept["X-Request-Id"]) == ("[masked]", "r-1")
    assert max(len(value) for value in kept.values()) == 256


def test_given_a_signed_hook_with_credentials_then_the_kept_request_headers_hold_no_secret(
    server: RecordingServer,
) -> None:
    secret = new_signing_secret()

    outcome = send(
        hook(
            f"http://127.0.0.1:{server.port}/hook",
            headers={"Authorization": "Bearer tok-1", "X-Team": "blue"},
        ),
        secrets=[secret],
    )

    assert outcome.exchange is not None
    kept = outcome.exchange.request_headers
    sent = server.received[0].headers
    assert kept["Authorization"] == kept["X-Team"] == "[redacted]"  # the tenant's: shown from the request
    assert kept["X-Webhook-Signature"] == kept["webhook-signature"] == "[masked]"
    assert (kept["webhook-id"], kept["Content-Type"]) == (JOB_ID, "application/json")
    assert kept["X-Webhook-Timestamp"] == sent["X-Webhook-Timestamp"]
    stored = str(kept)
    assert [text for text in ("tok-1", secret, sent["X-Webhook-Signature"]) if text in stored] == []


def test_given_a_failure_with_a_body_then_the_excerpt_is_kept_and_invalid_utf8_replaced(
    server: RecordingServer,
) -> None:
    server.reply = Reply(500, body=b"\xff\xfe upstream exploded")

    outcome = send(hook(f"http://127.0.0.1:{server.port}/hook"))

    assert (outcome.error_class, excerpt(outcome)) == ("transient", "\ufffd\ufffd upstream exploded")


# --- (f) TLS to the checked address, verified for the host name ------------------------------------


@dataclass
class TlsMaterial:
    ca_bundle: Path
    server_context: ssl.SSLContext
    server_names: list[str | None]


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False
        )
    )


def _usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


@pytest.fixture
def tls(tmp_path: Path) -> TlsMaterial:
    """A private CA and a server certificate for TLS_HOST signed by it."""
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Herald test CA")])
    ca = (
        _certificate("Herald test CA", ca_key, ca_name, ca_key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(ca=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf = (
        _certificate(TLS_HOST, leaf_key, ca_name, ca_key)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(TLS_HOST)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(ca=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "server.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "server.key").write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem", tmp_path / "server.key")
    server_names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _context: server_names.append(name)
    return TlsMaterial(tmp_path / "ca.pem", context, server_names)


@pytest.fixture
def tls_server(tls: TlsMaterial) -> Iterator[RecordingServer]:
    with RecordingServer(tls.server_context) as running:
        yield running


def test_given_a_trusted_certificate_for_the_name_then_delivery_succeeds_over_the_checked_address(
    tls: TlsMaterial, tls_server: RecordingServer, dials: list[tuple[Any, ...]]
) -> None:
    url = f"https://{TLS_HOST}:{tls_server.port}/hook"

    outcome = send(hook(url), resolve=FixedResolver("127.0.0.1"), ca_bundle=str(tls.ca_bundle))

    assert (outcome.ok, outcome.status_code) == (True, 200)
    assert dials == [("127.0.0.1", tls_server.port)]
    assert tls.server_names == [TLS_HOST]
    [request] = tls_server.received
    assert (request.body, request.headers["Host"]) == (BODY, f"{TLS_HOST}:{tls_server.port}")


def test_given_a_certificate_for_another_name_then_nothing_is_sent(
    tls: TlsMaterial, tls_server: RecordingServer
) -> None:
    url = f"https://other.example.test:{tls_server.port}/hook"

    outcome = send(hook(url), resolve=FixedResolver("127.0.0.1"), ca_bundle=str(tls.ca_bundle))

    assert (outcome.ok, outcome.error_class) == (False, "transient")
    assert outcome.error_message is not None
    assert "certificate" in outcome.error_message
    assert "mismatch" in outcome.error_message.lower()
    assert tls_server.received == []


def test_given_an_untrusted_issuer_then_the_system_trust_store_refuses_it(
    tls_server: RecordingServer,
) -> None:
    url = f"https://{TLS_HOST}:{tls_server.port}/hook"

    outcome = send(hook(url), resolve=FixedResolver("127.0.0.1"))

    assert (outcome.ok, outcome.error_class) == (False, "transient")
    assert outcome.error_message is not None
    assert "certificate" in outcome.error_message
    assert tls_server.received == []
