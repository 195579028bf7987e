"""Sealed secrets as stored attributes: the bridge between the vault and the table's items."""

from __future__ import annotations

from herald.adapters.store.models import ProviderCredential, SealedAttribute
from herald.adapters.vault import Purpose, SealedSecret, Vault
from herald.domain.providers import Credential


def seal_attribute(vault: Vault, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedAttribute:
    record = vault.seal(tenant_id, purpose, plaintext).to_record()
    return SealedAttribute(
        version=record["version"],
        wrapped_key=record["wrappedKey"],
        nonce=record["nonce"],
        ciphertext=record["ciphertext"],
    )


def unseal_attribute(vault: Vault, tenant_id: str, purpose: Purpose, sealed: SealedAttribute) -> str:
    # Not sealed.as_dict(): it names the fields as Python attributes (wrapped_key), not as stored.
    record = {
        "version": sealed.version,
        "wrappedKey": sealed.wrapped_key,
        "nonce": sealed.nonce,
        "ciphertext": sealed.ciphertext,
    }
    return vault.open(tenant_id, purpose, SealedSecret.from_record(record))


def provider_credential(vault: Vault, tenant_id: str, stored: ProviderCredential) -> Credential:
    """The decrypted key (and Postmark account token) of one stored provider credential."""
    token = stored.account_token
    return Credential(
        api_key=unseal_attribute(vault, tenant_id, Purpose.PROVIDER_KEY, stored.api_key),
        account_token=unseal_attribute(vault, tenant_id, Purpose.PROVIDER_KEY, token) if token else None,
    )
