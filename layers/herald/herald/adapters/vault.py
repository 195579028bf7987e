"""Envelope encryption of tenant secrets (design rule 6): provider keys, inbound and signing secrets.

Each value gets its own KMS data key, wrapped under the template's KMS key with the encryption context
``{tenantId, purpose}``, and is sealed with AES-256-GCM. Values sealed on a request path (a webhook's
custom headers, once per accepted request) share one data key per tenant for a few minutes instead,
as the AWS Encryption SDK's key caching does: a KMS call per request would cost more than the request
(each value still gets its own random nonce, and a shared key seals far fewer values than GCM's
random-nonce bound of 2^32). The associated data binds tenant, purpose and
format version as well, so a record copied to another tenant or purpose fails to open even where the
data key is at hand (a cache hit). ``Vault.open`` is the only way back to plaintext.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError
from cachetools import TTLCache
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from herald.adapters.data_key_cache import MAX_TTL_SECONDS, DataKeyCache
from herald.domain.errors import DependencyError
from herald.domain.secrets import (
    FORMAT_VERSION,
    NONCE_BYTES,
    Purpose,
    SealedSecret,
    SecretTampered,
    encryption_context,
)
from herald.observability import logger

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient


class KeyServiceUnavailable(DependencyError):
    """KMS did not serve the request (unreachable, throttled, access denied, key disabled)."""


class KeyManager(Protocol):
    """The port to the key service: hands out data keys and unwraps them under an encryption context."""

    def generate_data_key(self, context: Mapping[str, str]) -> tuple[bytes, bytes]:
        """A fresh 32-byte data key and the same key wrapped under ``context``."""
        ...

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        """The data key in ``wrapped``; ``SecretTampered`` when it was not wrapped under ``context``."""
        ...


# Sealed with a data key shared per tenant for at most MAX_TTL_SECONDS and this many values.
SHARED_KEY_PURPOSES = frozenset({Purpose.WEBHOOK_HEADERS})
SHARED_KEY_MAX_USES = 1_000_000
SHARED_KEY_TENANTS = 256

# What KMS answers when the wrapped key, its context or its KMS key do not match: the record is wrong.
_TAMPERED_KMS_CODES = frozenset({"InvalidCiphertextException", "IncorrectKeyException"})


@contextmanager
def _kms_errors(operation: str) -> Iterator[None]:
    """Translates AWS errors into domain errors; only the error code travels (AWS text is not ours)."""
    try:
        yield
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "Unknown")
        if code in _TAMPERED_KMS_CODES:
            raise SecretTampered("wrapped data key does not open under this tenant and purpose") from exc
        raise KeyServiceUnavailable(f"KMS {operation} failed: {code}") from exc
    except BotoCoreError as exc:
        raise KeyServiceUnavailable(f"KMS {operation} failed: {type(exc).__name__}") from exc


class KmsKeyManager:
    """The AWS adapter of ``KeyManager`` on one KMS key (the template's ``HeraldKey``)."""

    def __init__(self, key_id: str, client: KMSClient) -> None:
        self._key_id = key_id
        self._client = client

    def generate_data_key(self, context: Mapping[str, str]) -> tuple[bytes, bytes]:
        with _kms_errors("GenerateDataKey"):
            response = self._client.generate_data_key(
                KeyId=self._key_id, KeySpec="AES_256", EncryptionContext=dict(context)
            )
        return response["Plaintext"], response["CiphertextBlob"]

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        # Naming the key makes KMS refuse a blob wrapped under any other key, ours only.
        with _kms_errors("Decrypt"):
            response = self._client.decrypt(
                CiphertextBlob=wrapped, KeyId=self._key_id, EncryptionContext=dict(context)
            )
        return response["Plaintext"]


def _associated_data(tenant_id: str, purpose: Purpose, version: int) -> bytes:
    # JSON keeps the fields unambiguous whatever characters a tenant id holds.
    return json.dumps([version, tenant_id, purpose.value], separators=(",", ":")).encode()


class Vault:
    """Seals and opens tenant secrets. ``cache=None`` means every open asks the key manager, and
    every value gets a data key of its own."""

    def __init__(
        self,
        key_manager: KeyManager,
        cache: DataKeyCache | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._key_manager = key_manager
        self._cache = cache
        # (tenant, purpose) -> [data key, wrapped key, values sealed with it]
        self._shared: TTLCache[tuple[str, Purpose], list[Any]] = TTLCache(
            SHARED_KEY_TENANTS, MAX_TTL_SECONDS, timer=clock
        )
        self._lock = threading.Lock()

    @property
    def cache(self) -> DataKeyCache | None:
        return self._cache

    def seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedSecret:
        data_key, wrapped_key = self._sealing_key(tenant_id, purpose)
        nonce = os.urandom(NONCE_BYTES)
        associated = _associated_data(tenant_id, purpose, FORMAT_VERSION)
        ciphertext = AESGCM(data_key).encrypt(nonce, plaintext.encode(), associated)
        return SealedSecret(FORMAT_VERSION, wrapped_key, nonce, ciphertext)

    def _sealing_key(self, tenant_id: str, purpose: Purpose) -> tuple[bytes, bytes]:
        context = encryption_context(tenant_id, purpose)
        if self._cache is None or purpose not in SHARED_KEY_PURPOSES:
            return self._key_manager.generate_data_key(context)
        with self._lock:
            shared = self._shared.get((tenant_id, purpose))
            if shared is not None and shared[2] < SHARED_KEY_MAX_USES:
                shared[2] += 1
                return shared[0], shared[1]
        data_key, wrapped_key = self._key_manager.generate_data_key(context)
        with self._lock:
            self._shared[(tenant_id, purpose)] = [data_key, wrapped_key, 1]
        # This container opens what it sealed without asking KMS.
        self._cache.put(wrapped_key, tenant_id, purpose, data_key)
        return data_key, wrapped_key

    def open(self, tenant_id: str, purpose: Purpose, sealed: SealedSecret) -> str:
        """The plaintext, or ``SecretTampered`` when the record is not this tenant's for this purpose."""
        data_key = self._data_key(tenant_id, purpose, sealed.wrapped_key)
        associated = _associated_data(tenant_id, purpose, sealed.version)
        try:
            plaintext = AESGCM(data_key).decrypt(sealed.nonce, sealed.ciphertext, associated)
        except InvalidTag:
            raise SecretTampered(f"sealed {purpose.value} secret failed authentication") from None
        return plaintext.decode()

    def _data_key(self, tenant_id: str, purpose: Purpose, wrapped_key: bytes) -> bytes:
        context = encryption_context(tenant_id, purpose)
        if self._cache is None:
            return self._key_manager.decrypt_data_key(wrapped_key, context)
        cached = self._cache.get(wrapped_key, tenant_id, purpose)
        if cached is not None:
            logger.debug("data key cache hit", extra=context)
            return cached
        logger.debug("data key cache miss", extra=context)
        data_key = self._key_manager.decrypt_data_key(wrapped_key, context)
        self._cache.put(wrapped_key, tenant_id, purpose, data_key)
        return data_key
