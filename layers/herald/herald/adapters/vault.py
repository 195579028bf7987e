"""Envelope encryption of tenant secrets (design rule 6): provider keys, inbound and signing secrets.

Each value gets its own KMS data key, wrapped under the template's KMS key with the encryption context
``{tenantId, purpose}``, and is sealed with AES-256-GCM. The associated data binds tenant, purpose and
format version as well, so a record copied to another tenant or purpose fails to open even where the
data key is at hand (a cache hit). ``Vault.open`` is the only way back to plaintext.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from herald.adapters import aws_clients
from herald.adapters.data_key_cache import DataKeyCache
from herald.domain.errors import DependencyError
from herald.observability import logger
from herald.settings import get_settings

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

FORMAT_VERSION = 1
NONCE_BYTES = 12  # 96 bits, the GCM nonce size NIST recommends; random is safe with one key per value
_TAG_BYTES = 16
_RECORD_FIELDS = frozenset({"version", "wrappedKey", "nonce", "ciphertext"})
# Below this length the last four characters would give away too much of the secret.
_MIN_LENGTH_FOR_PREVIEW = 12


class Purpose(StrEnum):
    PROVIDER_KEY = "provider-key"
    INBOUND_SECRET = "inbound-secret"  # noqa: S105 (a label, not a secret)
    SIGNING_SECRET = "signing-secret"  # noqa: S105 (a label, not a secret)


class SecretTampered(Exception):
    """A sealed secret failed authentication: altered bytes, or another tenant's or purpose's record."""


class MalformedSecretRecord(ValueError):
    """A stored record is not a sealed secret this code reads (wrong shape or unknown format version)."""


class KeyServiceUnavailable(DependencyError):
    """KMS did not serve the request (unreachable, throttled, access denied, key disabled)."""


def encryption_context(tenant_id: str, purpose: Purpose) -> dict[str, str]:
    return {"tenantId": tenant_id, "purpose": purpose.value}


class KeyManager(Protocol):
    """The port to the key service: hands out data keys and unwraps them under an encryption context."""

    def generate_data_key(self, context: Mapping[str, str]) -> tuple[bytes, bytes]:
        """A fresh 32-byte data key and the same key wrapped under ``context``."""
        ...

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        """The data key in ``wrapped``; ``SecretTampered`` when it was not wrapped under ``context``."""
        ...


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

    def __init__(self, key_id: str, client: KMSClient | None = None) -> None:
        self._key_id = key_id
        self._client = client if client is not None else aws_clients.kms()

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


@dataclass(frozen=True)
class SealedSecret:
    """What a row stores of a secret. Stored as one map attribute, binary fields in base64 strings."""

    version: int
    wrapped_key: bytes = field(repr=False)
    nonce: bytes = field(repr=False)
    ciphertext: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if self.version != FORMAT_VERSION:
            raise MalformedSecretRecord(f"unsupported sealed secret version {self.version!r}")
        if not self.wrapped_key:
            raise MalformedSecretRecord("sealed secret has an empty wrapped key")
        if len(self.nonce) != NONCE_BYTES:
            raise MalformedSecretRecord(f"sealed secret nonce must be {NONCE_BYTES} bytes")
        if len(self.ciphertext) < _TAG_BYTES:
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


def _associated_data(tenant_id: str, purpose: Purpose, version: int) -> bytes:
    # JSON keeps the fields unambiguous whatever characters a tenant id holds.
    return json.dumps([version, tenant_id, purpose.value], separators=(",", ":")).encode()


class Vault:
    """Seals and opens tenant secrets. ``cache=None`` means every open asks the key manager."""

    def __init__(self, key_manager: KeyManager, cache: DataKeyCache | None = None) -> None:
        self._key_manager = key_manager
        self._cache = cache

    @property
    def cache(self) -> DataKeyCache | None:
        return self._cache

    def seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedSecret:
        data_key, wrapped_key = self._key_manager.generate_data_key(encryption_context(tenant_id, purpose))
        nonce = os.urandom(NONCE_BYTES)
        associated = _associated_data(tenant_id, purpose, FORMAT_VERSION)
        ciphertext = AESGCM(data_key).encrypt(nonce, plaintext.encode(), associated)
        return SealedSecret(FORMAT_VERSION, wrapped_key, nonce, ciphertext)

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


def last_four(plaintext: str) -> str:
    """The masked preview of a secret: its last four characters, or nothing for a very short one."""
    return plaintext[-4:] if len(plaintext) >= _MIN_LENGTH_FOR_PREVIEW else ""


@lru_cache(maxsize=1)
def default_vault() -> Vault:
    """The process-wide vault: a warm container reuses its data key cache across invocations."""
    return Vault(KmsKeyManager(get_settings().kms_key_id), DataKeyCache())
