"""Attacks on every inbound verifier, each signed with the provider's real algorithm: whatever is
wrong, the verifier raises InvalidSignature with a reason that says what, and never a secret."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from herald.adapters.inbound.verification import TOLERANCE_SECONDS
from herald.domain.inbound import InvalidSignature
from herald_harness.inbound_signers import PAYSTACK_SECRET, POLAR_SECRET, SENDERS
from herald_harness.senders import Sender
from herald_harness.vendors.postmark import POSTMARK_CREDENTIALS
from herald_harness.vendors.resend import RESEND_SECRET
from herald_harness.vendors.sendgrid import SENDGRID_VERIFICATION_KEY

NOW = 1_796_025_600
BODY = b'{"type":"email.delivered","created_at":"2026-11-30T08:00:00.000Z","data":{"to":["ada@example.org"]}}'
MESSAGE_ID = "msg_2fGq9xYkT1tUvWx"

# What each verifier says when the credentials are wrong or the body is not what was signed.
MISMATCH = {
    "sendgrid": "X-Twilio-Email-Event-Webhook-Signature does not match the body",
    "resend": "no svix-signature value matches the body",
    "postmark": "wrong user name or password in the Authorization header",
    "paystack": "x-paystack-signature does not match the body",
    "polar-standard": "no webhook-signature value matches the body",
    "polar-legacy": "no webhook-signature value matches the body",
}
SECRETS = (
    SENDGRID_VERIFICATION_KEY,
    RESEND_SECRET,
    POSTMARK_CREDENTIALS.password,
    PAYSTACK_SECRET,
    POLAR_SECRET,
)

# The senders that sign in headers; one that signs inside the body has its own attacks
# (test_inbound_mailgun.py).
HEADER_SIGNERS = [sender for sender in SENDERS if not sender.signed_in_body]
BODY_SIGNERS = [sender for sender in HEADER_SIGNERS if sender.signs_body]
TIMED = [sender for sender in HEADER_SIGNERS if sender.timestamp_header]


def ids(sender: Sender) -> str:
    return sender.name


def signed(sender: Sender, body: bytes = BODY, at: int = NOW) -> dict[str, str]:
    return sender.sign(body, at, MESSAGE_ID)


def refused(
    sender: Sender, headers: dict[str, str], body: bytes = BODY, now: float = NOW
) -> InvalidSignature:
    with pytest.raises(InvalidSignature) as caught:
        sender.verify(headers, body, now)
    for secret in SECRETS:
        assert secret not in str(caught.value)
        assert secret not in repr(caught.value)
    assert body.decode() not in str(caught.value) or not body
    return caught.value


def flip_middle(value: str) -> str:
    """The same value with one character in the middle changed to another of its alphabet."""
    middle = len(value) // 2
    replacement = "A" if value[middle] != "A" else "B"
    return value[:middle] + replacement + value[middle + 1 :]


@pytest.mark.parametrize("sender", HEADER_SIGNERS, ids=ids)
def test_given_a_genuine_request_then_it_verifies(sender: Sender) -> None:
    sender.verify(signed(sender), BODY, NOW)


@pytest.mark.parametrize("sender", HEADER_SIGNERS, ids=ids)
def test_given_a_forged_signature_then_it_is_refused(sender: Sender) -> None:
    headers = signed(sender)
    headers[sender.signature_header] = flip_middle(headers[sender.signature_header])

    assert refused(sender, headers).reason == MISMATCH[sender.name]


@pytest.mark.parametrize("sender", HEADER_SIGNERS, ids=ids)
def test_given_another_tenants_credentials_then_it_is_refused(sender: Sender) -> None:
    headers = sender.sign_as_stranger(BODY, NOW, MESSAGE_ID)

    assert refused(sender, headers).reason == MISMATCH[sender.name]


@pytest.mark.parametrize("sender", BODY_SIGNERS, ids=ids)
@pytest.mark.parametrize("position", [0, len(BODY) // 2, len(BODY) - 1], ids=["first", "middle", "last"])
def test_given_one_changed_byte_in_the_body_then_it_is_refused(sender: Sender, position: int) -> None:
    tampered = bytearray(BODY)
    tampered[position] ^= 0x01

    assert refused(sender, signed(sender), bytes(tampered)).reason == MISMATCH[sender.name]


@pytest.mark.parametrize("sender", BODY_SIGNERS, ids=ids)
def test_given_an_empty_body_under_a_real_signature_then_it_is_refused(sender: Sender) -> None:
    assert refused(sender, signed(sender), b"").reason == MISMATCH[sender.name]


@pytest.mark.parametrize(
    ("sender", "header"),
    [(sender, header) for sender in HEADER_SIGNERS for header in sender.headers],
    ids=lambda value: value.name if isinstance(value, Sender) else value,
)
def test_given_a_missing_header_then_it_is_refused_naming_it(sender: Sender, header: str) -> None:
    headers = signed(sender)
    del headers[header]

    assert refused(sender, headers).reason == f"missing {header} header"


@pytest.mark.parametrize(
    ("sender", "header"),
    [(sender, header) for sender in HEADER_SIGNERS for header in sender.headers],
    ids=lambda value: value.name if isinstance(value, Sender) else value,
)
@pytest.mark.parametrize(
    "garbage", ["ünïcödé", "v1,\u2028", "a\x00b", "\udcff"], ids=["accents", "sep", "nul", "surrogate"]
)
def test_given_non_ascii_garbage_in_a_header_then_it_is_refused(
    sender: Sender, header: str, garbage: str
) -> None:
    headers = signed(sender) | {header: garbage}

    assert refused(sender, headers).reason == f"{header} header is not printable ASCII"


@pytest.mark.parametrize("sender", HEADER_SIGNERS, ids=ids)
@pytest.mark.parametrize("cut", [1, 2, 3, 5])
def test_given_a_truncated_signature_then_it_is_refused(sender: Sender, cut: int) -> None:
    headers = signed(sender)
    headers[sender.signature_header] = headers[sender.signature_header][:-cut]

    reason = refused(sender, headers).reason
    assert reason == MISMATCH[sender.name] or re.fullmatch(r"\S+ (header )?is not base64", reason), reason


@pytest.mark.parametrize("sender", HEADER_SIGNERS, ids=ids)
@pytest.mark.parametrize("letter_case", [str.upper, str.title], ids=["upper", "title"])
def test_header_names_are_matched_without_regard_to_case(
    sender: Sender, letter_case: Callable[[str], str]
) -> None:
    headers = {letter_case(name): value for name, value in signed(sender).items()}

    sender.verify(headers, BODY, NOW)


@pytest.mark.parametrize("sender", TIMED, ids=ids)
@pytest.mark.parametrize(
    ("skew", "reason"),
    [
        (-(TOLERANCE_SECONDS + 1), "is more than 300 seconds old"),
        (-86_400, "is more than 300 seconds old"),
        (TOLERANCE_SECONDS + 1, "is more than 300 seconds in the future"),
    ],
    ids=["just too old", "a day old", "from the future"],
)
def test_given_a_timestamp_outside_five_minutes_then_it_is_refused(
    sender: Sender, skew: int, reason: str
) -> None:
    # The signature is genuine: a captured request replayed later, or one from a skewed clock.
    headers = signed(sender, at=NOW + skew)

    assert refused(sender, headers).reason == f"{sender.timestamp_header} {reason}"


@pytest.mark.parametrize("sender", TIMED, ids=ids)
@pytest.mark.parametrize("skew", [-TOLERANCE_SECONDS, TOLERANCE_SECONDS], ids=["300 s old", "300 s ahead"])
def test_given_a_timestamp_at_the_edge_of_the_window_then_it_verifies(sender: Sender, skew: int) -> None:
    sender.verify(signed(sender, at=NOW + skew), BODY, NOW)


@pytest.mark.parametrize("sender", TIMED, ids=ids)
def test_given_an_old_request_replayed_with_a_fresh_timestamp_then_it_is_refused(sender: Sender) -> None:
    assert sender.timestamp_header
    headers = signed(sender, at=NOW - 3600) | {sender.timestamp_header: str(NOW)}

    assert refused(sender, headers).reason == MISMATCH[sender.name]


@pytest.mark.parametrize("sender", TIMED, ids=ids)
@pytest.mark.parametrize("timestamp", ["1796025600.0", "-1796025600", "+1796025600", "1_796_025_600", "17e8"])
def test_given_a_timestamp_that_is_not_unix_seconds_then_it_is_refused(
    sender: Sender, timestamp: str
) -> None:
    assert sender.timestamp_header
    headers = signed(sender) | {sender.timestamp_header: timestamp}

    assert refused(sender, headers).reason == f"{sender.timestamp_header} header is not Unix seconds"
