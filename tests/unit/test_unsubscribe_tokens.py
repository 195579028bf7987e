"""The unsubscribe token: it names one recipient of one tenant for one topic, and nothing but the
platform's key makes one; any change to it, or another key, makes it no token at all."""

from __future__ import annotations

import base64
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herald.domain.unsubscribes import (
    InvalidToken,
    Subscriber,
    is_topic,
    list_unsubscribe_headers,
    sign,
    subscriber,
    verify,
)

KEY = b"k" * 32
ADA = subscriber("tenant-a", "Ada+News@Example.COM", "newsletter")


def _parts(token: str) -> list[str]:
    return token.split(".")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_a_signed_token_names_its_tenant_recipient_and_topic_and_is_url_safe() -> None:
    token = sign(KEY, ADA)
    assert verify(KEY, token) == Subscriber("tenant-a", "ada+news@example.com", "newsletter")
    assert token.startswith("1.")
    assert set(token) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    assert len(token) < 100


def test_replaying_a_token_names_the_same_subscriber() -> None:
    token = sign(KEY, ADA)
    assert verify(KEY, token) == verify(KEY, token)


@pytest.mark.parametrize(
    "changed",
    [
        Subscriber("tenant-b", "ada+news@example.com", "newsletter"),  # another tenant
        Subscriber("tenant-a", "eve@example.com", "newsletter"),  # another recipient
        Subscriber("tenant-a", "ada+news@example.com", "billing"),  # another topic
    ],
)
def test_a_payload_swapped_under_the_same_mac_is_refused(changed: Subscriber) -> None:
    version, _, mac = _parts(sign(KEY, ADA))
    forged_payload = _parts(sign(b"other key", changed))[1]
    with pytest.raises(InvalidToken):
        verify(KEY, f"{version}.{forged_payload}.{mac}")


def test_another_tenants_token_does_not_verify_as_this_tenant() -> None:
    other = sign(KEY, subscriber("tenant-b", "ada+news@example.com", "newsletter"))
    assert verify(KEY, other).tenant_id == "tenant-b"


def test_a_token_signed_with_another_key_is_refused() -> None:
    with pytest.raises(InvalidToken):
        verify(KEY, sign(b"not the platform key", ADA))


@pytest.mark.parametrize(
    "token",
    ["", "1", "1..", "2.abc.def", "1.@@@.###", "1.YWJj.", "1..YWJj", "1." + _b64(b"a\nb\nc") + ".eHh4eA"],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidToken):
        verify(KEY, token)


@given(st.integers(min_value=0), st.integers(min_value=0, max_value=255))
def test_any_single_byte_change_is_refused(position: int, replacement: int) -> None:
    token = sign(KEY, ADA)
    index = position % len(token)
    changed = token[:index] + chr(replacement) + token[index + 1 :]
    if changed == token:
        return
    # base64 may ignore a changed padding bit: then the token still names the very same subscriber.
    with contextlib.suppress(InvalidToken):
        assert verify(KEY, changed) == verify(KEY, token)


def test_the_headers_are_rfc_8058s_https_only() -> None:
    assert list_unsubscribe_headers("https://herald.example", "1.a.b") == (
        ("List-Unsubscribe", "<https://herald.example/u/1.a.b>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
    )


@pytest.mark.parametrize("topic", ["newsletter", "a", "product.updates-2026_q1", "x" * 64])
def test_topics(topic: str) -> None:
    assert is_topic(topic)


@pytest.mark.parametrize("topic", ["", "News", "a b", "x" * 65, "*", "a\n", "ü"])
def test_not_topics(topic: str) -> None:
    assert not is_topic(topic)
