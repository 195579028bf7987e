"""Fetching an attachment by URL: the webhooks' SSRF guard first, then one GET to the checked
address, with no redirect followed and the body read only up to the room left."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from herald.adapters.attachment_fetch import fetch_attachment
from herald.domain.attachments import AttachmentTooLarge, AttachmentUnavailable
from herald.domain.webhooks import UrlNotAllowed

PDF = b"%PDF-1.7\n" + b"x" * 2000


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/hooks/invoice.pdf":
            self._answer(200, PDF)
        elif self.path == "/hooks/moved":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/hooks/empty":
            self._answer(200, b"")
        else:
            self._answer(404, b"not here")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    """A loopback file server, reachable only as the guard's one local exception (the local stack's
    sandbox origin), so the guard is exercised as deployed everywhere else."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hooks/"
    server.shutdown()
    server.server_close()


def test_a_file_is_fetched_from_the_checked_address(origin: str) -> None:
    assert fetch_attachment(f"{origin}invoice.pdf", 10_000, local_origin=origin) == PDF


def test_a_file_larger_than_the_room_left_is_not_read_further(origin: str) -> None:
    with pytest.raises(AttachmentTooLarge):
        fetch_attachment(f"{origin}invoice.pdf", len(PDF) - 1, local_origin=origin)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("moved", "the URL redirects (status 302); redirects are not followed"),
        ("missing.pdf", "the URL answered status 404"),
        ("empty", "the URL gave an empty file"),
    ],
)
def test_no_file_is_named_with_its_reason(origin: str, path: str, reason: str) -> None:
    with pytest.raises(AttachmentUnavailable, match=reason.replace("(", r"\(").replace(")", r"\)")):
        fetch_attachment(f"{origin}{path}", 10_000, local_origin=origin)


@pytest.mark.parametrize("address", ["10.0.0.1", "127.0.0.1", "169.254.169.254", "::1", "fd00:ec2::254"])
def test_a_host_resolving_to_a_private_address_is_refused_before_any_connection(address: str) -> None:
    def resolve(_host: str, _port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        return [ipaddress.ip_address(address)]

    with pytest.raises(UrlNotAllowed, match="non-public address"):
        fetch_attachment("https://files.example.com/invoice.pdf", 10_000, resolve=resolve)


def test_only_https_is_fetched(origin: str) -> None:
    with pytest.raises(UrlNotAllowed, match=r"only https:// URLs are allowed"):
        fetch_attachment("http://files.example.com/invoice.pdf", 10_000)
    # The local stack's one exception covers its sandbox's path only.
    with pytest.raises(UrlNotAllowed):
        fetch_attachment(origin.replace("/hooks/", "/other/a.pdf"), 10_000, local_origin=origin)
