"""An in-memory ``KeyManager`` that really wraps data keys, so unit tests exercise the vault's crypto.

Data keys are wrapped with AES-GCM under a master key, the encryption context serving as associated
data: like KMS, a wrapped key only unwraps under the context it was made for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from herald.domain.secrets import SecretTampered

_NONCE_BYTES = 12


def _context_bytes(context: Mapping[str, str]) -> bytes:
    return json.dumps(dict(context), sort_keys=True, separators=(",", ":")).encode()


class InMemoryKeyManager:
    """Counts its calls, so tests can assert how often the key service would have been asked."""

    def __init__(self) -> None:
        self._master = AESGCM(AESGCM.generate_key(bit_length=256))
        self.generate_calls = 0
        self.decrypt_calls = 0

    def generate_data_key(self, context: Mapping[str, str]) -> tuple[bytes, bytes]:
        self.generate_calls += 1
        data_key = AESGCM.generate_key(bit_length=256)
        nonce = os.urandom(_NONCE_BYTES)
        return data_key, nonce + self._master.encrypt(nonce, data_key, _context_bytes(context))

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        self.decrypt_calls += 1
        nonce, sealed = wrapped[:_NONCE_BYTES], wrapped[_NONCE_BYTES:]
        try:
            return self._master.decrypt(nonce, sealed, _context_bytes(context))
        except (InvalidTag, ValueError):
            raise SecretTampered("wrapped data key does not open under this tenant and purpose") from None
