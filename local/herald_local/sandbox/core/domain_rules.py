"""What every imitated provider's domain API shares: which domains verify, DKIM keys that look like
the real ones, and finding a domain once the key is checked."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable

from flask import Response

from herald_local.sandbox.core.records import Domain
from herald_local.sandbox.core.store import SandboxStore

# DER prefix of an RSA-1024 SubjectPublicKeyInfo (the "MIGfMA0G…" every DKIM TXT record starts with),
# then a modulus, then the exponent 65537.
_SPKI_PREFIX = bytes.fromhex("30819f300d06092a864886f70d010101050003818d0030818902818100")
_SPKI_EXPONENT = bytes.fromhex("0203010001")


def verifies(domain_name: str) -> bool:
    """Verification succeeds unless the first label starts with ``pending`` (then it stays pending)."""
    return not domain_name.lower().split(".", 1)[0].startswith("pending")


def dkim_public_key(domain_name: str) -> str:
    """A well-formed, deterministic base64 DKIM public key for ``domain_name`` (not a usable key)."""
    seed = domain_name.lower().encode()
    modulus = bytearray(hashlib.sha512(seed).digest() + hashlib.sha512(seed + b"#2").digest())
    modulus[0] |= 0x80  # a 1024-bit modulus has its top bit set
    return base64.b64encode(_SPKI_PREFIX + bytes(modulus) + _SPKI_EXPONENT).decode()


def found_domain(
    store: SandboxStore,
    provider: str,
    domain_id: str,
    refusal: Response | None,
    not_found: Callable[[], Response],
) -> Domain | Response:
    """The provider's domain of that id, else its answer: the key's ``refusal`` first, then ``not_found``."""
    if refusal is not None:
        return refusal
    domain = store.domain(provider, domain_id)
    return domain if domain is not None else not_found()
