"""A worker's view of tenants: provider order, decrypted credentials, signing secrets.

A warm worker reads a tenant's partition at most once a minute (provider keys, order and domains
may lag an account change by that long) and, thanks to the vault's data key cache, makes no KMS
call per message. Signing secrets are read fresh per webhook. Plaintext secrets are decrypted per
use, never cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from herald.adapters.store.sealed import unseal_attribute
from herald.adapters.store.tenant_store import TenantRecords, TenantStore
from herald.adapters.vault import Purpose, Vault
from herald.domain.clock import now_iso
from herald.domain.providers import Credential

CACHE_TTL_SECONDS = 60.0
CACHE_MAX_TENANTS = 1024


class TenantDirectory:
    def __init__(self, store: TenantStore, vault: Vault, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._vault = vault
        self._clock = clock
        self._cache: dict[str, tuple[float, TenantRecords]] = {}
        self._lock = threading.Lock()

    def records(self, tenant_id: str) -> TenantRecords:
        with self._lock:
            entry = self._cache.get(tenant_id)
            if entry is not None and entry[0] > self._clock():
                return entry[1]
        records = self._store.load(tenant_id)
        with self._lock:
            if len(self._cache) >= CACHE_MAX_TENANTS:
                self._cache.clear()
            self._cache[tenant_id] = (self._clock() + CACHE_TTL_SECONDS, records)
        return records

    def provider_order(self, tenant_id: str) -> list[str]:
        return [credential.provider for credential in self.records(tenant_id).providers]

    def credential(self, tenant_id: str, provider: str) -> Credential | None:
        for stored in self.records(tenant_id).providers:
            if stored.provider == provider:
                token = stored.account_token
                return Credential(
                    api_key=unseal_attribute(self._vault, tenant_id, Purpose.PROVIDER_KEY, stored.api_key),
                    account_token=unseal_attribute(self._vault, tenant_id, Purpose.PROVIDER_KEY, token)
                    if token
                    else None,
                )
        return None

    def signing_secrets(self, tenant_id: str) -> list[str]:
        """Oldest first: the previous secret while its overlap lasts, then the current one.

        Read fresh for every webhook (1 GetItem, not the minute-long cache): right after a rotation
        receivers may already expect the new secret, and api.md promises both signatures meanwhile.
        """
        profile = self._store.profile(tenant_id)
        secrets: list[str] = []
        previous = profile.previous_signing_secret
        if previous is not None and (profile.previous_valid_until or "") > now_iso():
            secrets.append(unseal_attribute(self._vault, tenant_id, Purpose.SIGNING_SECRET, previous))
        if profile.signing_secret is not None:
            secrets.append(
                unseal_attribute(self._vault, tenant_id, Purpose.SIGNING_SECRET, profile.signing_secret)
            )
        return secrets

    def verified_domains(self, tenant_id: str) -> list[str]:
        return self.records(tenant_id).verified_domains()
