"""Fetching an attachment a request names by URL, with the webhooks' SSRF guard (design rule 9).

The URL must be https:// on a host whose every address is public; the socket is opened to one of
the checked addresses (the name is resolved once, so DNS rebinding cannot steer the request), TLS
verifies the host name, redirects are never followed, the whole exchange ends within
``FETCH_TIMEOUT_SECONDS``, and the body is read only up to the size the email has room for.
"""

from __future__ import annotations

import http.client
import socket
import time
from contextlib import ExitStack

from herald import USER_AGENT
from herald.adapters.ssrf import CheckedTarget, Resolver, check_url, resolve_host
from herald.adapters.webhook_sender import exchange_with_checked_address, tls_context
from herald.domain.attachments import AttachmentTooLarge, AttachmentUnavailable

FETCH_TIMEOUT_SECONDS = 15.0
_CHUNK_BYTES = 64 * 1024
_TIMED_OUT = "the host did not answer in time"


def fetch_attachment(
    url: str,
    limit: int,
    *,
    local_origin: str | None = None,
    ca_bundle: str | None = None,
    resolve: Resolver = resolve_host,
) -> bytes:
    """The body of a GET of ``url``: at most ``limit`` bytes (``AttachmentTooLarge`` past that);
    ``UrlNotAllowed`` for a URL the guard refuses, ``AttachmentUnavailable`` when no file came."""
    target = check_url(url, local_origin=local_origin, resolve=resolve)
    deadline = time.monotonic() + FETCH_TIMEOUT_SECONDS
    content = exchange_with_checked_address(
        target,
        deadline,
        lambda sock: _get(sock, target, limit, ca_bundle),
        unreachable="the host could not be reached",
        timed_out=_TIMED_OUT,
    )
    if isinstance(content, str):
        raise AttachmentUnavailable(content)
    return content


def _get(sock: socket.socket, target: CheckedTarget, limit: int, ca_bundle: str | None) -> bytes:
    with ExitStack() as stack:
        stack.callback(sock.close)
        if target.scheme == "https":
            sock = tls_context(ca_bundle).wrap_socket(sock, server_hostname=target.host)
            stack.callback(sock.close)
        connection = http.client.HTTPConnection(target.host, target.port)
        connection.sock = sock  # our socket, to the checked address: http.client never dials
        stack.callback(connection.close)
        headers = {"Host": target.host_header, "User-Agent": USER_AGENT, "Accept": "*/*"}
        connection.request("GET", target.path_and_query, headers=headers)
        return _body(connection.getresponse(), limit)


def _body(response: http.client.HTTPResponse, limit: int) -> bytes:
    status = response.status
    if 300 <= status < 400:
        raise AttachmentUnavailable(f"the URL redirects (status {status}); redirects are not followed")
    if status != 200:
        raise AttachmentUnavailable(f"the URL answered status {status}")
    declared = response.getheader("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise AttachmentTooLarge
    content = bytearray()
    while chunk := response.read(_CHUNK_BYTES):
        content += chunk
        if len(content) > limit:
            raise AttachmentTooLarge
    if not content:
        raise AttachmentUnavailable("the URL gave an empty file")
    return bytes(content)
