"""A worker's view of tenants: provider order, decrypted credentials, signing secrets.

A warm worker reads a tenant's partition at most once a minute (provider keys, order and domains
may lag an account change by that long) and, thanks to the vault's data key cache, makes no KMS
call per message. Signing secrets are read fresh per webhook. Plaintext secrets are decrypted per
use, never cached.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from herald.domain.clock import parse_iso, utc_now
from herald.domain.providers import Credential
from herald.domain.records import TenantRecords
from herald.domain.secrets import Purpose
from herald.services.ports import SecretBox, TenantStore
from herald.services.tenant_cache import TenantCache

MAX_TENANTS = 1024


class TenantDirectory:
    def __init__(
        self,
        store: TenantStore,
        secrets: SecretBox,
        cache: TenantCache[str, TenantRecords] | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._cache = cache or TenantCache(lambda records: records.profile.tenant_id, max_entries=MAX_TENANTS)
        self._clock = clock

    def records(self, tenant_id: str) -> TenantRecords:
        cached = self._cache.get(tenant_id)
        if cached is not None:
            return cached
        records = self._store.load(tenant_id)
        self._cache.put(tenant_id, records)
        return records

    def provider_order(self, tenant_id: str) -> list[str]:
        return [credential.provider for credential in self.records(tenant_id).providers]

    def credential(self, tenant_id: str, provider: str) -> Credential | None:
        stored = self.records(tenant_id).provider(provider)
        if stored is None:
            return None
        token = stored.account_token
        return Credential(
            api_key=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, stored.api_key),
            account_token=self._secrets.open(tenant_id, Purpose.PROVIDER_KEY, token) if token else None,
        )

    def signing_secrets(self, tenant_id: str) -> list[str]:
        """Oldest first: the previous secret while its overlap lasts, then the current one.

        Read fresh for every webhook (1 GetItem, not the minute-long cache): right after a rotation
        receivers may already expect the new secret, and both signatures are promised meanwhile.
        """
        profile = self._store.profile(tenant_id)
        secrets: list[str] = []
        previous = profile.previous_signing_secret
        if (
            previous is not None
            and profile.previous_valid_until
            and parse_iso(profile.previous_valid_until) > self._clock()
        ):
            secrets.append(self._secrets.open(tenant_id, Purpose.SIGNING_SECRET, previous))
        if profile.signing_secret is not None:
            secrets.append(self._secrets.open(tenant_id, Purpose.SIGNING_SECRET, profile.signing_secret))
        return secrets

    def verified_domains(self, tenant_id: str) -> list[str]:
        return self.records(tenant_id).verified_domains()
