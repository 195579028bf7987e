"""Sealed tenant secrets as values: what a sealed secret holds, and its rules.

The sealing itself (KMS data keys, AES-256-GCM) is an adapter (``herald.adapters.vault``), and so
is a sealed secret's stored form (``herald.adapters.store.conversions``); the rest of Herald only
ever sees ``SealedSecret`` values and asks a ``SecretBox`` port to seal or open them.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

FORMAT_VERSION = 1
NONCE_BYTES = 12  # 96 bits, the GCM nonce size NIST recommends; random is safe with one key per value
TAG_BYTES = 16
# Below this length the last four characters would give away too much of the secret.
_MIN_LENGTH_FOR_PREVIEW = 12


class Purpose(StrEnum):
    PROVIDER_KEY = "provider-key"
    INBOUND_SECRET = "inbound-secret"  # noqa: S105 (a label, not a secret)
    SIGNING_SECRET = "signing-secret"  # noqa: S105 (a label, not a secret)
    # Custom headers of a webhook job (a receiver's credentials, often), sealed at acceptance.
    WEBHOOK_HEADERS = "webhook-headers"
    # A subscription's own signing secret (its custom headers are sealed as WEBHOOK_HEADERS, so a
    # delivery job carries them as they are).
    SUBSCRIPTION_SECRET = "subscription-secret"  # noqa: S105 (a label, not a secret)


class SecretTampered(Exception):
    """A sealed secret failed authentication: altered bytes, or another tenant's or purpose's record."""


def encryption_context(tenant_id: str, purpose: Purpose) -> dict[str, str]:
    return {"tenantId": tenant_id, "purpose": purpose.value}


def last_four(plaintext: str) -> str:
    """The masked preview of a secret: its last four characters, or nothing for a very short one."""
    return plaintext[-4:] if len(plaintext) >= _MIN_LENGTH_FOR_PREVIEW else ""


class SealedSecret(msgspec.Struct, frozen=True):
    """A secret as it is kept: its data key wrapped by the key service, and the AES-GCM nonce and
    ciphertext (with its tag) of the value."""

    version: int
    wrapped_key: bytes
    nonce: bytes
    ciphertext: bytes

    def __repr__(self) -> str:
        # The sealed bytes stay out of logs and tracebacks, as the plaintext does.
        return f"SealedSecret(version={self.version})"
