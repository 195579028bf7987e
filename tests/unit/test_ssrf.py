"""The SSRF guard: which webhook URLs Herald may call, judged on the addresses they resolve to."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from herald.adapters.ssrf import (
    CheckedTarget,
    IPAddress,
    check_url,
    is_public_address,
    resolve_host,
)
from herald.domain.webhooks import UrlNotAllowed


def ip(text: str) -> IPAddress:
    return ipaddress.ip_address(text)


def teredo(server: str, client: str, port: int = 40000) -> str:
    """A Teredo address (RFC 4380): 2001:0::/32, server IPv4, flags, then port and client obfuscated."""
    value = (0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64)
    value |= (port ^ 0xFFFF) << 32 | (int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF)
    return str(ipaddress.IPv6Address(value))


class FakeResolver:
    """Answers every lookup with fixed addresses and remembers what it was asked."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = [ip(address) for address in addresses]
        self.lookups: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.lookups.append((host, port))
        return list(self.addresses)


# The provider sandbox's origin as the local stack passes it to the functions.
SANDBOX_ORIGIN = "http://127.0.0.1:3100"

NON_PUBLIC = {
    "private 10/8": "10.0.0.1",
    "private 172.16/12": "172.16.5.4",
    "private 192.168/16": "192.168.1.1",
    "loopback": "127.0.0.1",
    "loopback elsewhere in 127/8": "127.255.255.254",
    "link-local": "169.254.1.1",
    "CGNAT": "100.64.0.1",
    "CGNAT top": "100.127.255.254",
    "multicast": "224.0.0.1",
    "multicast SSDP": "239.255.255.250",
    "reserved class E": "240.0.0.1",
    "unspecified": "0.0.0.0",  # noqa: S104 - an address under test; nothing binds it
    "this network 0/8": "0.1.2.3",
    "broadcast": "255.255.255.255",
    "documentation TEST-NET-1": "192.0.2.1",
    "documentation TEST-NET-2": "198.51.100.1",
    "documentation TEST-NET-3": "203.0.113.1",
    "benchmarking": "198.18.0.1",
    "IETF protocol assignments": "192.0.0.9",
    "AWS metadata": "169.254.169.254",
    "AWS ECS task metadata": "169.254.170.2",
    "AWS metadata IPv6": "fd00:ec2::254",
    "Alibaba metadata": "100.100.100.200",
    "Azure wire server": "168.63.129.16",
    "IPv6 loopback": "::1",
    "IPv6 unspecified": "::",
    "IPv6 link-local": "fe80::1",
    "IPv6 unique-local fc00::/8": "fc00::1",
    "IPv6 unique-local fd00::/8": "fd12:3456:789a::1",
    "IPv6 site-local": "fec0::1",
    "IPv6 multicast link": "ff02::1",
    "IPv6 multicast global": "ff0e::1",
    "IPv6 documentation": "2001:db8::1",
    "IPv6 documentation 3fff::/20": "3fff::1",
    "IPv6 discard": "100::1",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped private": "::ffff:10.0.0.1",
    "IPv4-mapped metadata": "::ffff:169.254.169.254",
    "IPv4-compatible loopback": "::127.0.0.1",
    "IPv4-compatible public (deprecated form)": "::8.8.8.8",
    "NAT64 loopback": "64:ff9b::127.0.0.1",
    "NAT64 private": "64:ff9b::10.0.0.1",
    "NAT64 metadata": "64:ff9b::169.254.169.254",
    "NAT64 local-use prefix": "64:ff9b:1::a00:1",
    "6to4 of loopback": "2002:7f00:1::1",
    "6to4 of private": "2002:a00:1::1",
    "Teredo with private client": teredo("8.8.8.8", "192.168.1.20"),
    "Teredo with loopback server": teredo("127.0.0.1", "8.8.4.4"),
}

PUBLIC = {
    "Google DNS": "8.8.8.8",
    "Cloudflare DNS": "1.1.1.1",
    "just above CGNAT": "100.128.0.1",
    "Cloudflare DNS IPv6": "2606:4700:4700::1111",
    "Google DNS IPv6": "2001:4860:4860::8888",
    "IPv4-mapped public": "::ffff:8.8.8.8",
    "NAT64 of public": "64:ff9b::8.8.8.8",
    "6to4 of public": "2002:808:808::1",
    "Teredo between public hosts": teredo("8.8.8.8", "1.1.1.1"),
}


@pytest.mark.parametrize("address", NON_PUBLIC.values(), ids=NON_PUBLIC.keys())
def test_non_public_addresses_are_not_public(address: str) -> None:
    assert not is_public_address(ip(address))


@pytest.mark.parametrize("address", PUBLIC.values(), ids=PUBLIC.keys())
def test_public_unicast_addresses_are_public(address: str) -> None:
    assert is_public_address(ip(address))


def test_given_a_public_host_when_checked_then_the_target_holds_the_checked_addresses() -> None:
    resolver = FakeResolver("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c")

    target = check_url("https://Hooks.Example.com/in/hook?a=1&b=2#fragment", resolve=resolver)

    assert target == CheckedTarget(
        scheme="https",
        host="hooks.example.com",
        port=443,
        path_and_query="/in/hook?a=1&b=2",
        addresses=(ip("93.184.215.14"), ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c")),
    )
    assert resolver.lookups == [("hooks.example.com", 443)]
    assert target.host_header == "hooks.example.com"


def test_given_an_explicit_port_and_no_path_then_the_port_is_kept_and_the_path_is_root() -> None:
    target = check_url("https://hooks.example.com:8443", resolve=FakeResolver("8.8.8.8"))

    assert (target.port, target.path_and_query, target.host_header) == (8443, "/", "hooks.example.com:8443")


def test_given_an_internationalised_host_then_the_ascii_name_is_resolved() -> None:
    resolver = FakeResolver("8.8.8.8")

    target = check_url("https://bücher.example/hook", resolve=resolver)

    assert resolver.lookups == [("xn--bcher-kva.example", 443)]
    assert target.host == "xn--bcher-kva.example"


@pytest.mark.parametrize("address", NON_PUBLIC.values(), ids=NON_PUBLIC.keys())
def test_given_a_host_resolving_to_a_non_public_address_then_the_url_is_refused(address: str) -> None:
    with pytest.raises(UrlNotAllowed, match="non-public address"):
        check_url("https://hooks.example.com/hook", resolve=FakeResolver(address))


@pytest.mark.parametrize("private", ["10.0.0.1", "169.254.169.254", "::1", "fd00:ec2::254"])
def test_given_public_and_private_answers_then_one_private_address_refuses_the_url(private: str) -> None:
    with pytest.raises(UrlNotAllowed):
        check_url("https://hooks.example.com/", resolve=FakeResolver("8.8.8.8", private, "1.1.1.1"))


@pytest.mark.parametrize(
    "url",
    [
        "https://user:pass@hooks.example.com/hook",
        "https://user@hooks.example.com/hook",
        "https://:secret@hooks.example.com/hook",
        "https://hooks.example.com@127.0.0.1/hook",
    ],
)
def test_given_credentials_in_the_url_then_it_is_refused_before_any_lookup(url: str) -> None:
    resolver = FakeResolver("8.8.8.8")

    with pytest.raises(UrlNotAllowed, match="credentials") as refusal:
        check_url(url, resolve=resolver)

    assert resolver.lookups == []
    assert "pass" not in refusal.value.reason
    assert "secret" not in refusal.value.reason


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/hook",
        "file:///etc/passwd",
        "gopher://hooks.example.com:70/_",
        "javascript:alert(1)",
        "//hooks.example.com/hook",
        "hooks.example.com/hook",
    ],
)
def test_given_a_scheme_other_than_https_then_the_url_is_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed, match="only https"):
        check_url(url, resolve=FakeResolver("8.8.8.8"))


@pytest.mark.parametrize("local_origin", [None, SANDBOX_ORIGIN])
def test_given_plain_http_to_a_public_host_then_the_url_is_refused(local_origin: str | None) -> None:
    with pytest.raises(UrlNotAllowed, match="only https"):
        check_url("http://hooks.example.com/", local_origin=local_origin, resolve=FakeResolver("8.8.8.8"))


@pytest.mark.parametrize("url", ["https:///hook", "https://:443/hook", "https:hook", "https://"])
def test_given_no_host_then_the_url_is_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed, match="no host"):
        check_url(url, resolve=FakeResolver("8.8.8.8"))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://hooks.example.com:0/", "port"),
        ("https://hooks.example.com:99999/", "malformed"),
        ("https://hooks.example.com:http/", "malformed"),
        ("https://[::1/", "malformed"),
        ("https://hooks.example.com/a b", "spaces or control"),
        ("https://hooks.example.com/a?b=\x00", "spaces or control"),
    ],
)
def test_given_a_malformed_url_then_it_is_refused(url: str, reason: str) -> None:
    with pytest.raises(UrlNotAllowed, match=reason):
        check_url(url, resolve=FakeResolver("8.8.8.8"))


def test_given_a_host_without_addresses_then_the_url_is_refused() -> None:
    with pytest.raises(UrlNotAllowed, match="does not resolve"):
        check_url("https://hooks.example.com/", resolve=FakeResolver())


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "017700000001", "127.1", "0x7f000001"])
def test_given_a_numeric_spelling_of_loopback_then_the_resolved_address_is_judged(host: str) -> None:
    assert resolve_host(host, 443) == [ip("127.0.0.1")]
    with pytest.raises(UrlNotAllowed, match="non-public address"):
        check_url(f"https://{host}/hook")


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/hook",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[fd00:ec2::254]/latest/meta-data/",
        "https://0.0.0.0/hook",
        "https://localhost/hook",
    ],
)
def test_given_a_literal_non_public_address_then_the_real_resolver_refuses_it(url: str) -> None:
    with pytest.raises(UrlNotAllowed, match="non-public address"):
        check_url(url)


def test_given_an_ipv6_literal_then_the_host_header_brackets_it() -> None:
    target = check_url("https://[2606:4700:4700::1111]:8443/hook")

    assert target.addresses == (ip("2606:4700:4700::1111"),)
    assert target.host_header == "[2606:4700:4700::1111]:8443"


@pytest.fixture
def getaddrinfo_failure(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    def fail_with(errno: int) -> None:
        def getaddrinfo(*_: Any, **__: Any) -> Any:
            raise socket.gaierror(errno, "lookup failed")

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    return fail_with


def test_given_an_unknown_name_then_the_url_is_refused_for_good(
    getaddrinfo_failure: Callable[[int], None],
) -> None:
    getaddrinfo_failure(socket.EAI_NONAME)

    with pytest.raises(UrlNotAllowed, match="does not resolve") as refusal:
        check_url("https://nothing-here.invalid/hook")

    assert refusal.value.retryable is False


def test_given_a_temporary_dns_failure_then_the_refusal_is_retryable(
    getaddrinfo_failure: Callable[[int], None],
) -> None:
    getaddrinfo_failure(socket.EAI_AGAIN)

    with pytest.raises(UrlNotAllowed, match="does not resolve") as refusal:
        check_url("https://hooks.example.com/hook")

    assert refusal.value.retryable is True


@pytest.fixture
def hanging_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """getaddrinfo that blocks until the test ends, like a resolver that never answers."""
    released = threading.Event()

    def getaddrinfo(*_: Any, **__: Any) -> Any:
        released.wait()
        raise socket.gaierror(socket.EAI_AGAIN, "released")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    released.set()


@pytest.mark.usefixtures("hanging_dns")
def test_given_a_resolver_that_hangs_then_the_lookup_gives_up_and_refuses() -> None:
    with pytest.raises(UrlNotAllowed, match="did not resolve in time") as refusal:
        resolve_host("hooks.example.com", 443, timeout=0.05)

    assert refusal.value.retryable is True


def test_given_the_local_stacks_sandbox_origin_then_a_url_of_exactly_that_origin_is_accepted() -> None:
    target = check_url(f"{SANDBOX_ORIGIN}/hooks/demo", local_origin=SANDBOX_ORIGIN)

    assert (target.scheme, target.host, target.port) == ("http", "127.0.0.1", 3100)
    assert target.addresses == (ip("127.0.0.1"),)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5000/",  # the local stack's AWS stand-in (moto)
        "http://127.0.0.1:3000/api/v1/ping",  # another loopback port: the local API itself
        "https://127.0.0.1:3100/hooks/demo",  # the sandbox's host and port over another scheme
        "http://localhost:3100/hooks/demo",  # another name for the same host is another origin
        "http://[::1]:3100/hooks/demo",
        "http://127.0.0.2:3100/hooks/demo",
    ],
)
def test_given_the_local_stacks_sandbox_origin_then_every_other_loopback_target_is_refused(url: str) -> None:
    with pytest.raises(UrlNotAllowed, match="only https|non-public address"):
        check_url(url, local_origin=SANDBOX_ORIGIN)


def test_given_a_named_local_origin_then_it_is_refused_unless_it_resolves_to_loopback_only() -> None:
    origin = "http://sandbox.local.test:8025"

    assert (
        check_url(f"{origin}/hook", local_origin=origin, resolve=FakeResolver("127.0.0.1", "::1")).port
        == 8025
    )
    with pytest.raises(UrlNotAllowed, match="non-public address"):
        check_url(f"{origin}/hook", local_origin=origin, resolve=FakeResolver("127.0.0.1", "10.0.0.1"))


def test_given_the_default_then_loopback_and_plain_http_are_refused() -> None:
    with pytest.raises(UrlNotAllowed, match="only https"):
        check_url("http://127.0.0.1:8025/hook")
    with pytest.raises(UrlNotAllowed, match="non-public address"):
        check_url("https://127.0.0.1:8443/hook")


# ---------------------------------------------------------------- the second probe (issue 20)


@pytest.mark.parametrize(
    ("url", "found"),
    [
        ("https://hooks.example.com/crlf\r\nX-Injected:1", "U+000D"),
        ("https://hooks.example.com/a\tb", "U+0009"),
        ("https://hooks.example.com/a\n", "U+000A"),
        ("https://hooks.exa\tmple.com/", "U+0009"),
        ("https://hooks.example.com/\u2028", "U+2028"),
        ("https://hooks.example.com/?q=\x85", "U+0085"),
        ("https://hooks.example.com/\x7f", "U+007F"),
    ],
)
def test_given_a_control_character_or_line_separator_anywhere_then_the_url_is_refused_whole(
    url: str, found: str
) -> None:
    """The URL parser would drop tab, CR and LF and call the rest: a URL that is not the one sent."""
    resolver = FakeResolver("8.8.8.8")

    with pytest.raises(UrlNotAllowed) as refusal:
        check_url(url, resolve=resolver)

    assert (
        refusal.value.reason
        == f"the URL contains spaces or control characters ({found}); percent-encode them"
    )
    assert resolver.lookups == []


def test_given_characters_outside_ascii_in_the_path_then_the_target_carries_them_percent_encoded() -> None:
    target = check_url(
        "https://hooks.example.com/hooks/café?name=Zoë&raw=%41", resolve=FakeResolver("8.8.8.8")
    )

    assert target.path_and_query == "/hooks/caf%C3%A9?name=Zo%C3%AB&raw=%41"


LOCAL_RECEIVER = f"{SANDBOX_ORIGIN}/hooks/"


@pytest.mark.parametrize(
    "path",
    [
        "/_sandbox/outage",
        "/_sandbox",
        "/sendgrid/v3/mail/send",
        "/hooks",
        "/hooks/../_sandbox/outage",
        "/hooks/%2e%2e/_sandbox/outage",
        "/hooks/x/%2E%2E/%2E%2E/_sandbox",
        "/hooks/./../slack/x",
    ],
)
def test_given_the_sandboxs_receiver_as_the_local_exception_then_its_other_routes_are_refused(
    path: str,
) -> None:
    with pytest.raises(UrlNotAllowed, match="receives webhooks under /hooks/ only"):
        check_url(f"{SANDBOX_ORIGIN}{path}", local_origin=LOCAL_RECEIVER)


@pytest.mark.parametrize(
    "path", ["/hooks/demo", "/hooks/fail-500?x=1", "/hooks/caf%C3%A9", "/hooks/dots..name"]
)
def test_given_the_sandboxs_receiver_as_the_local_exception_then_its_hooks_are_accepted(path: str) -> None:
    target = check_url(f"{SANDBOX_ORIGIN}{path}", local_origin=LOCAL_RECEIVER)

    assert (target.scheme, target.host, target.port, target.path_and_query) == (
        "http",
        "127.0.0.1",
        3100,
        path,
    )
