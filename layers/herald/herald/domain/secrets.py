"""Sealed tenant secrets as values: what a stored record of a secret holds, and its rules.

The sealing itself (KMS data keys, AES-256-GCM) is an adapter (``herald.adapters.vault``); the rest
of Herald only ever sees ``SealedSecret`` values and asks a ``SecretBox`` port to seal or open them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from enum import StrEnum

import msgspec

FORMAT_VERSION = 1
NONCE_BYTES = 12  # 96 bits, the GCM nonce size NIST recommends; random is safe with one key per value
TAG_BYTES = 16
_RECORD_FIELDS = frozenset({"version", "wrappedKey", "nonce", "ciphertext"})
# Below this length the last four characters would give away too much of the secret.
_MIN_LENGTH_FOR_PREVIEW = 12


class Purpose(StrEnum):
    PROVIDER_KEY = "provider-key"
    INBOUND_SECRET = "inbound-secret"  # noqa: S105 (a label, not a secret)
    SIGNING_SECRET = "signing-secret"  # noqa: S105 (a label, not a secret)
    # Custom headers of a webhook job (a receiver's credentials, often), sealed at acceptance.
    WEBHOOK_HEADERS = "webhook-headers"


class SecretTampered(Exception):
    """A sealed secret failed authentication: altered bytes, or another tenant's or purpose's record."""


class MalformedSecretRecord(ValueError):
    """A stored record is not a sealed secret this code reads (wrong shape or unknown format version)."""


def encryption_context(tenant_id: str, purpose: Purpose) -> dict[str, str]:
    return {"tenantId": tenant_id, "purpose": purpose.value}


def last_four(plaintext: str) -> str:
    """The masked preview of a secret: its last four characters, or nothing for a very short one."""
    return plaintext[-4:] if len(plaintext) >= _MIN_LENGTH_FOR_PREVIEW else ""


class SealedSecret(msgspec.Struct, frozen=True):
    """What a row stores of a secret. Stored as one map attribute, binary fields in base64 strings."""

    version: int
    wrapped_key: bytes
    nonce: bytes
    ciphertext: bytes

    def __repr__(self) -> str:
        # The sealed bytes stay out of logs and tracebacks, as the plaintext does.
        return f"SealedSecret(version={self.version})"

    def __post_init__(self) -> None:
        if self.version != FORMAT_VERSION:
            raise MalformedSecretRecord(f"unsupported sealed secret version {self.version!r}")
        if not self.wrapped_key:
            raise MalformedSecretRecord("sealed secret has an empty wrapped key")
        if len(self.nonce) != NONCE_BYTES:
            raise MalformedSecretRecord(f"sealed secret nonce must be {NONCE_BYTES} bytes")
        if len(self.ciphertext) < TAG_BYTES:
            raise MalformedSecretRecord("sealed secret ciphertext is shorter than its tag")

    def to_record(self) -> dict[str, str | int]:
        return {
            "version": self.version,
            "wrappedKey": _b64encode(self.wrapped_key),
            "nonce": _b64encode(self.nonce),
            "ciphertext": _b64encode(self.ciphertext),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> SealedSecret:
        if set(record) != _RECORD_FIELDS:
            raise MalformedSecretRecord(
                f"sealed secret record needs exactly the fields {sorted(_RECORD_FIELDS)}"
            )
        # DynamoDB numbers may come back as Decimal; bool is excluded because True == 1.
        version = record["version"]
        if isinstance(version, bool) or version != FORMAT_VERSION:
            raise MalformedSecretRecord(f"unsupported sealed secret version {version!r}")
        return cls(
            version=FORMAT_VERSION,
            wrapped_key=_b64decode(record, "wrappedKey"),
            nonce=_b64decode(record, "nonce"),
            ciphertext=_b64decode(record, "ciphertext"),
        )


def _b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _b64decode(record: Mapping[str, object], name: str) -> bytes:
    value = record[name]
    if not isinstance(value, str):
        raise MalformedSecretRecord(f"sealed secret field {name} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise MalformedSecretRecord(f"sealed secret field {name} is not valid base64") from None
