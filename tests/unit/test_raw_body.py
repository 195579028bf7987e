"""The raw body of an API Gateway v2 event: the exact bytes a webhook signature covers."""

from __future__ import annotations

import base64
import json

import pytest

from herald.http.guards import raw_body

# Spacing, key order and a non-ASCII escape that json.loads + json.dumps would all change.
SENT = b'{"b": 1,  "a":"caf\\u00e9", "c":"\xc3\xa9"}'


def test_given_a_text_body_then_its_utf8_bytes_come_back_unchanged() -> None:
    event = {"body": SENT.decode("utf-8"), "isBase64Encoded": False}

    assert raw_body(event) == SENT


def test_given_a_base64_body_then_the_decoded_bytes_come_back() -> None:
    binary = SENT + b"\xff\x00"
    event = {"body": base64.b64encode(binary).decode("ascii"), "isBase64Encoded": True}

    assert raw_body(event) == binary


@pytest.mark.parametrize("event", [{}, {"body": None}, {"body": "", "isBase64Encoded": True}])
def test_given_no_body_then_it_is_empty_bytes(event: dict[str, object]) -> None:
    assert raw_body(event) == b""


def test_a_reserialised_body_would_not_be_the_same_bytes() -> None:
    # Why the helper exists: parsing first and serialising again loses the signed bytes.
    assert json.dumps(json.loads(SENT)).encode() != SENT
