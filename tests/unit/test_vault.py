"""Envelope encryption of tenant secrets: sealing, opening, tamper detection and the data key cache."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping

import pytest
from msgspec.structs import replace

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.store.conversions import (
    MalformedSecretRecord,
    sealed_from_record,
    sealed_record,
    sealed_secret,
)
from herald.adapters.vault import Vault
from herald.domain.secrets import (
    FORMAT_VERSION,
    Purpose,
    SealedSecret,
    SecretTampered,
    encryption_context,
    last_four,
)
from herald.observability import logger as herald_logger
from tests.fakes.key_manager import InMemoryKeyManager

TENANT = "tenant-a"
OTHER_TENANT = "tenant-b"
SECRET = "SG.live-key-0123456789abcdef-WXYZ"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def key_manager() -> InMemoryKeyManager:
    return InMemoryKeyManager()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def cache(clock: FakeClock) -> DataKeyCache:
    return DataKeyCache(max_entries=8, ttl_seconds=300, clock=clock)


@pytest.fixture
def vault(key_manager: InMemoryKeyManager, cache: DataKeyCache) -> Vault:
    return Vault(key_manager, cache)


def flipped(raw: bytes, index: int, mask: int) -> bytes:
    return raw[:index] + bytes([raw[index] ^ mask]) + raw[index + 1 :]


def single_byte_flips(sealed: SealedSecret) -> list[SealedSecret]:
    """Every record that differs from ``sealed`` in one byte of one of its binary fields."""
    rebuilds: list[tuple[bytes, Callable[[bytes], SealedSecret]]] = [
        (sealed.wrapped_key, lambda raw: replace(sealed, wrapped_key=raw)),
        (sealed.nonce, lambda raw: replace(sealed, nonce=raw)),
        (sealed.ciphertext, lambda raw: replace(sealed, ciphertext=raw)),
    ]
    return [
        rebuild(flipped(original, index, mask))
        for original, rebuild in rebuilds
        for index in range(len(original))
        for mask in (0x01, 0xFF)
    ]


# ---------------------------------------------------------------- sealing and opening


@pytest.mark.parametrize("purpose", list(Purpose))
def test_given_a_sealed_secret_when_opened_by_its_tenant_and_purpose_then_the_plaintext_returns(
    vault: Vault, purpose: Purpose
) -> None:
    sealed = vault.seal(TENANT, purpose, SECRET)

    assert vault.open(TENANT, purpose, sealed) == SECRET


def test_given_a_sealed_secret_when_stored_as_a_record_and_read_back_then_it_still_opens(
    vault: Vault,
) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, "clé-ünïcode-☃-0123456789")

    record = json.loads(json.dumps(sealed_record(sealed)))  # the record survives any JSON-ish store
    restored = sealed_from_record(record)

    assert restored == sealed
    assert record["version"] == FORMAT_VERSION
    assert vault.open(TENANT, Purpose.PROVIDER_KEY, restored) == "clé-ünïcode-☃-0123456789"


def test_given_a_sealed_secret_then_the_record_holds_no_plaintext(vault: Vault) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    assert SECRET.encode() not in sealed.ciphertext
    assert SECRET not in json.dumps(sealed_record(sealed))


def test_when_1000_values_are_sealed_then_every_nonce_and_every_data_key_is_fresh(
    vault: Vault, key_manager: InMemoryKeyManager
) -> None:
    sealed = [vault.seal(TENANT, Purpose.SIGNING_SECRET, SECRET) for _ in range(1000)]

    assert len({item.nonce for item in sealed}) == 1000
    assert all(len(item.nonce) == 12 for item in sealed)
    assert len({item.wrapped_key for item in sealed}) == 1000
    assert key_manager.generate_calls == 1000


# ---------------------------------------------------------------- values sealed on a request path


@pytest.fixture
def request_vault(key_manager: InMemoryKeyManager, cache: DataKeyCache, clock: FakeClock) -> Vault:
    return Vault(key_manager, cache, clock=clock)


def test_when_webhook_headers_are_sealed_a_thousand_times_then_one_data_key_serves_them_with_fresh_nonces(
    request_vault: Vault, key_manager: InMemoryKeyManager
) -> None:
    sealed = [request_vault.seal(TENANT, Purpose.WEBHOOK_HEADERS, SECRET) for _ in range(1000)]

    assert key_manager.generate_calls == 1
    assert len({item.wrapped_key for item in sealed}) == 1
    assert len({item.nonce for item in sealed}) == 1000
    assert {request_vault.open(TENANT, Purpose.WEBHOOK_HEADERS, item) for item in sealed} == {SECRET}
    assert key_manager.decrypt_calls == 0  # the container that sealed opens without KMS


def test_a_shared_data_key_is_one_tenants_and_lasts_five_minutes(
    request_vault: Vault, key_manager: InMemoryKeyManager, clock: FakeClock
) -> None:
    first = request_vault.seal(TENANT, Purpose.WEBHOOK_HEADERS, SECRET)
    other_tenant = request_vault.seal("tenant-b", Purpose.WEBHOOK_HEADERS, SECRET)
    clock.now += 299
    still = request_vault.seal(TENANT, Purpose.WEBHOOK_HEADERS, SECRET)
    clock.now += 2
    later = request_vault.seal(TENANT, Purpose.WEBHOOK_HEADERS, SECRET)

    assert other_tenant.wrapped_key != first.wrapped_key
    assert still.wrapped_key == first.wrapped_key
    assert later.wrapped_key != first.wrapped_key
    assert key_manager.generate_calls == 3
    with pytest.raises(SecretTampered):
        request_vault.open("tenant-b", Purpose.WEBHOOK_HEADERS, first)


def test_long_lived_secrets_never_share_a_data_key(
    request_vault: Vault, key_manager: InMemoryKeyManager
) -> None:
    keys = {request_vault.seal(TENANT, purpose, SECRET).wrapped_key for purpose in Purpose for _ in range(3)}

    assert len(keys) == 3 * (len(Purpose) - 1) + 1


def test_given_the_same_plaintext_sealed_twice_then_the_ciphertexts_differ(vault: Vault) -> None:
    first = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    second = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    assert first.ciphertext != second.ciphertext


# ---------------------------------------------------------------- attacks


def test_given_any_single_byte_flipped_when_opened_then_it_raises_secret_tampered(
    key_manager: InMemoryKeyManager,
) -> None:
    """Given a warm cache (the data key at hand), flipping any one byte still fails loudly."""
    vault = Vault(key_manager, DataKeyCache(max_entries=4096))
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    assert vault.open(TENANT, Purpose.PROVIDER_KEY, sealed) == SECRET

    variants = single_byte_flips(sealed)
    assert len(variants) == 2 * (len(sealed.wrapped_key) + 12 + len(sealed.ciphertext))
    for variant in variants:
        with pytest.raises(SecretTampered) as raised:
            vault.open(TENANT, Purpose.PROVIDER_KEY, variant)
        assert SECRET not in str(raised.value)
        assert SECRET not in repr(raised.value)


def test_given_another_tenants_record_when_opened_then_it_raises_secret_tampered(vault: Vault) -> None:
    theirs = vault.seal(OTHER_TENANT, Purpose.PROVIDER_KEY, SECRET)
    vault.open(OTHER_TENANT, Purpose.PROVIDER_KEY, theirs)  # their data key is now in the cache

    with pytest.raises(SecretTampered) as raised:
        vault.open(TENANT, Purpose.PROVIDER_KEY, theirs)
    assert SECRET not in str(raised.value)


def test_given_a_record_of_another_purpose_when_opened_then_it_raises_secret_tampered(vault: Vault) -> None:
    inbound = vault.seal(TENANT, Purpose.INBOUND_SECRET, SECRET)
    vault.open(TENANT, Purpose.INBOUND_SECRET, inbound)

    with pytest.raises(SecretTampered):
        vault.open(TENANT, Purpose.SIGNING_SECRET, inbound)


class ContextBlindKeyManager:
    """A key service that leaks: it unwraps under the sealing context whatever context is asked for."""

    def __init__(self, inner: InMemoryKeyManager, sealing_context: Mapping[str, str]) -> None:
        self._inner = inner
        self._sealing_context = sealing_context

    def generate_data_key(self, context: Mapping[str, str]) -> tuple[bytes, bytes]:
        return self._inner.generate_data_key(context)

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        return self._inner.decrypt_data_key(wrapped, self._sealing_context)


@pytest.mark.parametrize(
    ("tenant_id", "purpose"),
    [
        (OTHER_TENANT, Purpose.PROVIDER_KEY),
        (TENANT, Purpose.SIGNING_SECRET),
        (OTHER_TENANT, Purpose.INBOUND_SECRET),
    ],
)
def test_given_the_data_key_leaked_when_a_record_is_moved_to_another_tenant_or_purpose_then_it_still_fails(
    key_manager: InMemoryKeyManager, tenant_id: str, purpose: Purpose
) -> None:
    sealed = Vault(key_manager).seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    leaky = Vault(ContextBlindKeyManager(key_manager, encryption_context(TENANT, Purpose.PROVIDER_KEY)))
    assert leaky.open(TENANT, Purpose.PROVIDER_KEY, sealed) == SECRET

    with pytest.raises(SecretTampered):
        leaky.open(tenant_id, purpose, sealed)


def test_given_a_record_with_its_fields_swapped_from_another_record_then_it_raises_secret_tampered(
    vault: Vault,
) -> None:
    first = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    second = vault.seal(TENANT, Purpose.PROVIDER_KEY, "another-secret-value-9876")

    with pytest.raises(SecretTampered):
        vault.open(TENANT, Purpose.PROVIDER_KEY, replace(first, ciphertext=second.ciphertext))
    with pytest.raises(SecretTampered):
        vault.open(TENANT, Purpose.PROVIDER_KEY, replace(first, wrapped_key=second.wrapped_key))


# ---------------------------------------------------------------- record shape


def test_given_an_unknown_format_version_when_read_then_it_raises(vault: Vault) -> None:
    record = sealed_record(vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET))

    for version in (2, 0, "1", True, None):
        with pytest.raises(MalformedSecretRecord, match="version"):
            sealed_from_record({**record, "version": version})
    with pytest.raises(MalformedSecretRecord, match="version"):
        sealed_secret(2, record["wrappedKey"], record["nonce"], record["ciphertext"])


@pytest.mark.parametrize(
    "change",
    [
        {"nonce": None},
        {"ciphertext": "not base64!"},
        {"wrappedKey": ""},
        {"nonce": "AAAA"},  # 3 bytes, not 12
        {"ciphertext": "AAAA"},  # shorter than the GCM tag
        {"extra": "field"},
    ],
)
def test_given_a_malformed_record_when_read_then_it_raises(vault: Vault, change: dict[str, object]) -> None:
    record: dict[str, object] = {**sealed_record(vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)), **change}

    with pytest.raises(MalformedSecretRecord) as raised:
        sealed_from_record(record)
    assert SECRET not in str(raised.value)


def test_given_a_record_missing_a_field_when_read_then_it_raises(vault: Vault) -> None:
    record = sealed_record(vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET))
    del record["nonce"]

    with pytest.raises(MalformedSecretRecord):
        sealed_from_record(record)


def test_the_repr_of_a_sealed_secret_shows_neither_plaintext_nor_key_material(vault: Vault) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    shown = repr(sealed)
    assert SECRET not in shown
    assert repr(sealed.wrapped_key) not in shown
    assert repr(sealed.ciphertext) not in shown
    assert shown == "SealedSecret(version=1)"


# ---------------------------------------------------------------- the data key cache


def test_given_a_warm_cache_when_one_record_is_opened_100_times_then_the_key_service_is_asked_once(
    vault: Vault, key_manager: InMemoryKeyManager, cache: DataKeyCache
) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    opened = {vault.open(TENANT, Purpose.PROVIDER_KEY, sealed) for _ in range(100)}

    assert opened == {SECRET}
    assert key_manager.decrypt_calls == 1
    assert (cache.hits, cache.misses) == (99, 1)


def test_given_no_cache_when_a_record_is_opened_three_times_then_the_key_service_is_asked_three_times(
    key_manager: InMemoryKeyManager,
) -> None:
    vault = Vault(key_manager)
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    for _ in range(3):
        vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)

    assert key_manager.decrypt_calls == 3


def test_given_a_cached_data_key_when_its_ttl_passes_then_the_key_service_is_asked_again(
    vault: Vault, key_manager: InMemoryKeyManager, clock: FakeClock
) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)

    clock.now += 299
    vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)
    assert key_manager.decrypt_calls == 1

    clock.now += 1
    assert vault.open(TENANT, Purpose.PROVIDER_KEY, sealed) == SECRET
    assert key_manager.decrypt_calls == 2


def test_given_a_full_cache_when_a_new_key_arrives_then_the_least_recently_used_is_evicted(
    key_manager: InMemoryKeyManager,
) -> None:
    cache = DataKeyCache(max_entries=2)
    vault = Vault(key_manager, cache)
    oldest, recent, newest = (
        vault.seal(TENANT, Purpose.PROVIDER_KEY, f"secret-value-{n:04d}") for n in range(3)
    )
    vault.open(TENANT, Purpose.PROVIDER_KEY, oldest)
    vault.open(TENANT, Purpose.PROVIDER_KEY, recent)
    vault.open(TENANT, Purpose.PROVIDER_KEY, oldest)  # now `recent` is the least recently used
    vault.open(TENANT, Purpose.PROVIDER_KEY, newest)
    assert key_manager.decrypt_calls == 3
    assert len(cache) == 2

    vault.open(TENANT, Purpose.PROVIDER_KEY, oldest)
    assert key_manager.decrypt_calls == 3
    vault.open(TENANT, Purpose.PROVIDER_KEY, recent)
    assert key_manager.decrypt_calls == 4


@pytest.mark.parametrize(("max_entries", "ttl_seconds"), [(256, 301), (256, 0), (256, -1), (0, 60)])
def test_a_cache_that_would_hold_keys_over_five_minutes_or_nothing_is_rejected(
    max_entries: int, ttl_seconds: float
) -> None:
    with pytest.raises(ValueError, match="max_entries|ttl_seconds"):
        DataKeyCache(max_entries=max_entries, ttl_seconds=ttl_seconds)


def test_given_records_opened_from_many_threads_then_each_returns_its_own_plaintext(
    key_manager: InMemoryKeyManager,
) -> None:
    cache = DataKeyCache(max_entries=16)
    vault = Vault(key_manager, cache)
    plaintexts = [f"secret-number-{n:04d}" for n in range(40)]
    records = [vault.seal(f"tenant-{n}", Purpose.PROVIDER_KEY, text) for n, text in enumerate(plaintexts)]
    mismatches: list[int] = []

    def open_all() -> None:
        for _ in range(5):
            for n, sealed in enumerate(records):
                if vault.open(f"tenant-{n}", Purpose.PROVIDER_KEY, sealed) != plaintexts[n]:
                    mismatches.append(n)

    threads = [threading.Thread(target=open_all) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert mismatches == []
    assert len(cache) == 16
    assert cache.hits + cache.misses == 8 * 5 * 40


# ---------------------------------------------------------------- logs and previews


def test_when_secrets_are_sealed_and_opened_then_the_logs_hold_no_secret(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=herald_logger.name)
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)
    vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)
    with pytest.raises(SecretTampered):
        vault.open(OTHER_TENANT, Purpose.PROVIDER_KEY, sealed)

    messages = [record.getMessage() for record in caplog.records]
    assert messages.count("data key cache miss") == 2
    assert messages.count("data key cache hit") == 1
    everything_logged = caplog.text + "".join(str(vars(record)) for record in caplog.records)
    assert SECRET not in everything_logged
    assert SECRET[-8:] not in everything_logged
    record = sealed_record(sealed)
    for name in ("wrappedKey", "nonce", "ciphertext"):
        assert str(record[name]) not in everything_logged


def test_the_masked_preview_shows_the_last_four_characters_of_a_real_sized_secret() -> None:
    assert last_four(SECRET) == "WXYZ"


def test_the_masked_preview_of_a_very_short_secret_shows_nothing() -> None:
    assert last_four("abcd1234") == ""
