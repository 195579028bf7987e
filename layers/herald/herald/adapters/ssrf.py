"""SSRF guard for outbound webhooks: which URLs Herald may call, judged on the resolved addresses.

The API checks a webhook URL at acceptance and the WebhookWorker checks it again at dial time, then
connects to exactly the addresses checked here (never re-resolving the name), so a DNS answer that
changes between check and connect (rebinding) cannot steer a delivery into the private network.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from urllib.parse import SplitResult, quote, unquote, urlsplit

import msgspec

from herald.domain.notifications import line_breaking_character
from herald.domain.webhooks import UrlNotAllowed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[IPAddress]]

# getaddrinfo has no timeout of its own and a broken resolver can stall it for tens of seconds.
DNS_TIMEOUT_SECONDS = 3.0

# Cloud instance-metadata endpoints. Most already sit in a non-public range; they are listed so a
# change in the stdlib's tables can never expose them, and 168.63.129.16 (Azure's wire server) is a
# public address that only the guard itself can refuse.
_CLOUD_METADATA: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OCI, DigitalOcean
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS VPC DNS
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",  # AWS VPC DNS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server
    )
)

# Special-purpose blocks that `is_global` still calls global on some Python patch releases: the
# stdlib's tables were corrected in 3.11.10 / 3.12.4 (192.0.0.0/24 was only partly covered before) and
# 3fff::/20 (documentation, RFC 9637) is newer than 3.12. Listing them keeps the verdict version-proof.
_NOT_GLOBAL: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = (
    ipaddress.ip_network("192.0.0.0/24"),
    ipaddress.ip_network("3fff::/20"),
)

_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_UNSAFE_PATH_CHARS = re.compile(r"[\x00-\x20\x7f]")
# Every visible ASCII character stays as written (percent-escapes too); the rest is sent as UTF-8
# percent-escapes, as browsers send it: a request line is ASCII.
_SENT_AS_WRITTEN = "".join(map(chr, range(0x21, 0x7F)))
_DEFAULT_PORTS = {"https": 443, "http": 80}

_dns_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="herald-dns")


class CheckedTarget(msgspec.Struct, frozen=True):
    scheme: str
    host: str
    port: int
    path_and_query: str
    addresses: tuple[IPAddress, ...]

    @property
    def host_header(self) -> str:
        """The Host header value: the name as written in the URL, with the port when not the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """IPv4 addresses that an IPv6 address forwards to; packets to it end up at those hosts."""
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in _NAT64_WELL_KNOWN:  # the stdlib has no property for NAT64
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo  # (server, client): both take part in reaching the host
    return ()


def _is_global_unicast(ip: IPAddress) -> bool:
    if ip in _CLOUD_METADATA or any(ip in network for network in _NOT_GLOBAL):
        return False
    # `is_global` misses multicast (224/4, ff00::/8) and, for IPv6, site-local (fec0::/10, deprecated
    # but still routed inside some networks) and the unassigned `is_reserved` blocks on older Pythons.
    if ip.is_multicast or ip.is_reserved:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return False
    return ip.is_global


def is_public_address(ip: IPAddress) -> bool:
    """True when ``ip`` is a globally routable unicast address outside every special-purpose block.

    IPv4-mapped, NAT64, 6to4 and Teredo addresses are judged by the IPv4 address they embed, since
    that is where the connection lands. IPv4-compatible addresses (``::a.b.c.d``, deprecated) sit in
    the reserved ``::/8`` and are always refused, whatever they embed.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded:
            return all(_is_global_unicast(inner) for inner in embedded)
    return _is_global_unicast(ip)


def _is_loopback(ip: IPAddress) -> bool:
    # `::ffff:127.0.0.1` reaches the IPv4 loopback too, and is_loopback does not say so.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def resolve_host(host: str, port: int, *, timeout: float = DNS_TIMEOUT_SECONDS) -> list[IPAddress]:
    """The addresses ``host`` resolves to, in resolver order, without duplicates.

    Literal addresses go through getaddrinfo as well, so every spelling the C library accepts
    (``2130706433``, ``0x7f.1``, ``017700000001``) is judged by the address it really means.
    """
    lookup = _dns_pool.submit(
        socket.getaddrinfo, host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    try:
        answers = lookup.result(timeout=timeout)
    except FutureTimeout:
        lookup.cancel()
        raise UrlNotAllowed("the host name did not resolve in time", retryable=True) from None
    except socket.gaierror as exc:
        temporary = exc.errno == socket.EAI_AGAIN
        raise UrlNotAllowed("the host name does not resolve", retryable=temporary) from None
    except UnicodeError:  # a label longer than 63 characters, an empty label
        raise UrlNotAllowed("the host name is not a valid domain name") from None
    addresses: dict[IPAddress, None] = {}
    for *_, sockaddr in answers:
        addresses.setdefault(ipaddress.ip_address(sockaddr[0]), None)
    return list(addresses)


def _split(url: str) -> SplitResult:
    # The URL parser silently drops tab, CR and LF anywhere (WHATWG): "/a\r\nX-Injected:1" would be
    # sent as "/aX-Injected:1". Such a URL, or one with any other control or line separator, is
    # refused whole.
    found = line_breaking_character(url)
    if found is not None:
        raise UrlNotAllowed(f"the URL contains spaces or control characters ({found}); percent-encode them")
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # raises ValueError when the port is not a number in 0..65535
    except ValueError:
        raise UrlNotAllowed("the URL is malformed") from None
    return parts


def _ascii_host(hostname: str) -> str:
    if hostname.isascii():
        return hostname.rstrip(".") or hostname
    import idna  # only internationalised names pay for loading the IDNA tables

    try:
        return idna.encode(hostname.rstrip("."), uts46=True).decode("ascii")
    except idna.IDNAError:
        raise UrlNotAllowed("the host name is not a valid domain name") from None


def _parse(url: str) -> tuple[str, str, int, str]:
    parts = _split(url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UrlNotAllowed("only https:// URLs are allowed")
    if "@" in parts.netloc:
        raise UrlNotAllowed("credentials in the URL are not allowed; use custom headers instead")
    if not parts.hostname:
        raise UrlNotAllowed("the URL has no host")
    port = _DEFAULT_PORTS[scheme] if parts.port is None else parts.port
    if port == 0:
        raise UrlNotAllowed("the URL's port must be between 1 and 65535")
    path_and_query = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if _UNSAFE_PATH_CHARS.search(path_and_query):
        raise UrlNotAllowed("the URL path contains spaces or control characters")
    return scheme, _ascii_host(parts.hostname).lower(), port, quote(path_and_query, safe=_SENT_AS_WRITTEN)


def _is_local_target(
    scheme: str, host: str, port: int, path_and_query: str, local_origin: str | None
) -> bool:
    """Whether the URL is the local stack's one exception: exactly its scheme, host and port, and a
    path under its own path (the sandbox's webhook receiver), never one of the sandbox's other routes."""
    if local_origin is None:
        return False
    local_scheme, local_host, local_port, local_path = _parse(local_origin)
    if (scheme, host, port) != (local_scheme, local_host, local_port):
        return False
    if not _within(path_and_query.split("?", 1)[0], local_path):
        raise UrlNotAllowed(f"the local stack's sandbox receives webhooks under {local_path} only")
    return True


def _within(path: str, prefix: str) -> bool:
    """Whether ``path`` stays under ``prefix``, however it is spelled: percent-escapes decoded first,
    and no dot segment, which a server would resolve to climb out of the prefix."""
    decoded = unquote(path)
    segments = decoded.split("/")
    return decoded.startswith(prefix) and "." not in segments and ".." not in segments


def _refusal(addresses: list[IPAddress], local: bool) -> str | None:
    if not addresses:
        return "the host name does not resolve"
    allowed = _is_loopback if local else is_public_address
    if not all(allowed(ip) for ip in addresses):
        return "the host resolves to a private, loopback, link-local or otherwise non-public address"
    return None


def check_url(
    url: str, *, local_origin: str | None = None, resolve: Resolver = resolve_host
) -> CheckedTarget:
    """Parse and resolve ``url``; it must be https:// and every address it resolves to public.

    ``local_origin`` (``http://127.0.0.1:3100/hooks/``; set only by the local stack, for its
    provider sandbox's webhook receiver) is the one exception: a URL of exactly that scheme, host and
    port, with a path under its path, is accepted when every address it resolves to is loopback.
    Any other loopback port, such as the local stack's AWS stand-in, and the sandbox's other routes
    stay refused. Raises ``UrlNotAllowed``. The target's path is ASCII: other characters are
    percent-encoded as UTF-8.
    """
    scheme, host, port, path_and_query = _parse(url)
    local = _is_local_target(scheme, host, port, path_and_query, local_origin)
    if scheme != "https" and not local:
        raise UrlNotAllowed("only https:// URLs are allowed")
    addresses = resolve(host, port)
    reason = _refusal(addresses, local)
    if reason is not None:
        raise UrlNotAllowed(reason)
    return CheckedTarget(scheme, host, port, path_and_query, tuple(addresses))
