"""Sealed secrets as stored attributes: the bridge between ``SealedSecret`` values and the items."""

from __future__ import annotations

from herald.adapters.store.models import SealedAttribute
from herald.domain.secrets import SealedSecret


def to_attribute(sealed: SealedSecret) -> SealedAttribute:
    record = sealed.to_record()
    return SealedAttribute(
        version=record["version"],
        wrapped_key=record["wrappedKey"],
        nonce=record["nonce"],
        ciphertext=record["ciphertext"],
    )


def from_attribute(sealed: SealedAttribute) -> SealedSecret:
    # Not sealed.as_dict(): it names the fields as Python attributes (wrapped_key), not as stored.
    record = {
        "version": sealed.version,
        "wrappedKey": sealed.wrapped_key,
        "nonce": sealed.nonce,
        "ciphertext": sealed.ciphertext,
    }
    return SealedSecret.from_record(record)


def optional_from(sealed: SealedAttribute | None) -> SealedSecret | None:
    return None if sealed is None else from_attribute(sealed)


def optional_to(sealed: SealedSecret | None) -> SealedAttribute | None:
    return None if sealed is None else to_attribute(sealed)
