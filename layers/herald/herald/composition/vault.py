"""The process-wide vault: a warm container reuses its data key cache across invocations."""

from __future__ import annotations

from functools import lru_cache

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.vault import KmsKeyManager, Vault
from herald.composition.common import foundation


@lru_cache(maxsize=1)
def process_vault() -> Vault:
    base = foundation()
    return Vault(KmsKeyManager(base.settings.kms_key_id, base.clients.kms()), DataKeyCache())
