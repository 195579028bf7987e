"""Outbound webhook signatures, checked by the receivers' own verifiers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from herald.domain.signing import new_signing_secret, signature_headers, standard_key

BODY = b'{"event":"order.paid","order":{"id":"ord_1","total":4200}}'
JOB_ID = "0b7f9a52-3f0e-4f56-9a3c-6a2f1e7d1c11"
TOLERANCE_SECONDS = 300


def verify_notifykit(secret: str, body: bytes, headers: Mapping[str, str]) -> bool:
    """An independent re-implementation of the NotifyKit SDK's ``verifyWebhookSignature``: the header's
    comma-separated ``key=value`` pairs are read into a map, so the last ``v1`` wins."""
    fields = dict(part.split("=", 1) for part in headers["X-Webhook-Signature"].split(","))
    timestamp, signature = fields.get("t"), fields.get("v1")
    if timestamp is None or signature is None or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def verify_standard(secret: str, body: bytes, headers: Mapping[str, str]) -> bool:
    try:
        Webhook(secret).verify(body, dict(headers))
    except WebhookVerificationError:
        return False
    return True


def headers_for(*secrets: str, body: bytes = BODY) -> dict[str, str]:
    return signature_headers(list(secrets), JOB_ID, body, int(time.time()))


def test_a_new_secret_is_whsec_and_32_random_bytes() -> None:
    first, second = new_signing_secret(), new_signing_secret()

    assert first.startswith("whsec_")
    assert len(base64.b64decode(first.removeprefix("whsec_"), validate=True)) == 32
    assert first != second


def test_given_one_secret_then_both_formats_verify() -> None:
    secret = new_signing_secret()

    headers = headers_for(secret)

    assert verify_standard(secret, BODY, headers)
    assert verify_notifykit(secret, BODY, headers)


def test_given_one_secret_then_the_headers_carry_id_and_one_timestamp() -> None:
    headers = signature_headers([new_signing_secret()], JOB_ID, BODY, 1_700_000_000)

    assert set(headers) == {
        "X-Webhook-Timestamp",
        "X-Webhook-Signature",
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
    assert headers["webhook-id"] == JOB_ID
    assert headers["X-Webhook-Timestamp"] == headers["webhook-timestamp"] == "1700000000"
    assert headers["X-Webhook-Signature"].startswith("t=1700000000,v1=")
    assert headers["webhook-signature"].startswith("v1,")


def test_given_a_rotation_then_standard_webhooks_receivers_accept_either_secret() -> None:
    old, new = new_signing_secret(), new_signing_secret()

    headers = headers_for(old, new)

    assert len(headers["webhook-signature"].split(" ")) == 2
    assert verify_standard(old, BODY, headers)
    assert verify_standard(new, BODY, headers)


def test_given_a_rotation_then_the_notifykit_header_ends_with_the_new_secrets_signature() -> None:
    old, new = new_signing_secret(), new_signing_secret()

    headers = headers_for(old, new)

    assert verify_notifykit(new, BODY, headers)
    signatures = [part.removeprefix("v1=") for part in headers["X-Webhook-Signature"].split(",")[1:]]
    timestamp = headers["X-Webhook-Timestamp"]
    expected_old = hmac.new(old.encode(), f"{timestamp}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert signatures[0] == expected_old
    assert len(signatures) == 2


@pytest.mark.parametrize("secrets", [1, 2], ids=["one secret", "rotation"])
def test_given_a_tampered_body_then_both_formats_reject_it(secrets: int) -> None:
    keys = [new_signing_secret() for _ in range(secrets)]
    headers = headers_for(*keys)
    tampered = BODY.replace(b"4200", b"1")

    for key in keys:
        assert not verify_standard(key, tampered, headers)
        assert not verify_notifykit(key, tampered, headers)


def test_given_the_wrong_secret_then_both_formats_reject_it() -> None:
    headers = headers_for(new_signing_secret())
    stranger = new_signing_secret()

    assert not verify_standard(stranger, BODY, headers)
    assert not verify_notifykit(stranger, BODY, headers)


def test_given_a_forged_message_id_then_standard_webhooks_rejects_it() -> None:
    secret = new_signing_secret()
    headers = headers_for(secret) | {"webhook-id": "another-job"}

    assert not verify_standard(secret, BODY, headers)


def test_given_no_secret_then_no_signature_headers_are_sent() -> None:
    assert signature_headers([], JOB_ID, BODY, 1_700_000_000) == {}


def test_an_unpadded_secret_gives_the_same_key_as_the_padded_one() -> None:
    padded = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcde").decode()

    assert padded.endswith("=")
    assert standard_key(padded.rstrip("=")) == standard_key(padded) == b"0123456789abcdef0123456789abcde"


@pytest.mark.parametrize(
    "secret",
    ["whsec_", "whsec_!!!!", "whsec_abc$def", "whsec_A", "whsec_QUJD RA=="],
    ids=["empty", "not base64", "stray character", "truncated", "inner space"],
)
def test_given_a_garbled_secret_then_no_key_is_derived(secret: str) -> None:
    # A lenient decoder would turn these into an empty or guessable HMAC key.
    with pytest.raises(ValueError, match="the secret"):
        standard_key(secret)
