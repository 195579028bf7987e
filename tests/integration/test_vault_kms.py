"""The vault on KMS (moto): data keys from GenerateDataKey, the encryption context enforced by Decrypt,
AWS errors translated at the adapter, and one Decrypt per record in a warm process."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber
from moto import mock_aws
from msgspec.structs import replace

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.vault import KeyServiceUnavailable, KmsKeyManager, Vault
from herald.composition import common
from herald.domain.secrets import Purpose, SecretTampered, encryption_context
from tests.fakes.common import settings_environment
from tests.support.ports import refusing_port

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

REGION = "us-east-1"
TENANT = "tenant-a"
SECRET = "re_live_0123456789abcdefghij_WXYZ"
NO_RETRIES = Config(region_name=REGION, retries={"total_max_attempts": 1}, connect_timeout=2, read_timeout=5)


class DecryptCounter:
    """Counts the Decrypt requests a client is about to send (a botocore event hook, no mock)."""

    def __init__(self, client: KMSClient) -> None:
        self.calls = 0
        client.meta.events.register("before-call.kms.Decrypt", self._count)

    def _count(self, **_: Any) -> None:
        self.calls += 1


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_KMS", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


@pytest.fixture
def kms_client(aws: None) -> KMSClient:
    client: KMSClient = boto3.client("kms", config=NO_RETRIES)
    return client


@pytest.fixture
def key_id(kms_client: KMSClient) -> str:
    return kms_client.create_key(Description="herald test key")["KeyMetadata"]["KeyId"]


@pytest.fixture
def vault(kms_client: KMSClient, key_id: str) -> Vault:
    return Vault(KmsKeyManager(key_id, kms_client), DataKeyCache())


def test_given_kms_when_a_secret_is_sealed_and_opened_then_the_plaintext_returns(vault: Vault) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    assert vault.open(TENANT, Purpose.PROVIDER_KEY, sealed) == SECRET
    assert SECRET.encode() not in sealed.wrapped_key + sealed.ciphertext


def test_given_kms_then_the_data_key_is_a_256_bit_key_wrapped_under_the_context(
    kms_client: KMSClient, key_id: str
) -> None:
    manager = KmsKeyManager(key_id, kms_client)
    context = encryption_context(TENANT, Purpose.SIGNING_SECRET)

    data_key, wrapped = manager.generate_data_key(context)

    assert len(data_key) == 32
    assert manager.decrypt_data_key(wrapped, context) == data_key


def test_given_a_wrapped_key_when_unwrapped_under_another_tenants_context_then_kms_refuses(
    kms_client: KMSClient, key_id: str
) -> None:
    manager = KmsKeyManager(key_id, kms_client)
    data_key, wrapped = manager.generate_data_key(encryption_context(TENANT, Purpose.PROVIDER_KEY))

    for tenant_id, purpose in [("tenant-b", Purpose.PROVIDER_KEY), (TENANT, Purpose.INBOUND_SECRET)]:
        with pytest.raises(SecretTampered) as raised:
            manager.decrypt_data_key(wrapped, encryption_context(tenant_id, purpose))
        assert data_key.hex() not in str(raised.value)


def test_given_another_tenants_record_when_opened_through_kms_then_it_raises_secret_tampered(
    vault: Vault,
) -> None:
    theirs = vault.seal("tenant-b", Purpose.PROVIDER_KEY, SECRET)

    with pytest.raises(SecretTampered) as raised:
        vault.open(TENANT, Purpose.PROVIDER_KEY, theirs)
    assert SECRET not in str(raised.value)


def test_given_a_wrapped_key_with_a_flipped_last_byte_then_kms_refuses_it_as_tampered(vault: Vault) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    wrapped = sealed.wrapped_key[:-1] + bytes([sealed.wrapped_key[-1] ^ 0x01])

    with pytest.raises(SecretTampered):
        vault.open(TENANT, Purpose.PROVIDER_KEY, replace(sealed, wrapped_key=wrapped))


def test_given_a_warm_process_when_one_record_is_opened_100_times_then_kms_decrypt_is_called_once(
    kms_client: KMSClient, vault: Vault
) -> None:
    counter = DecryptCounter(kms_client)
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)

    opened = {vault.open(TENANT, Purpose.PROVIDER_KEY, sealed) for _ in range(100)}

    assert opened == {SECRET}
    assert counter.calls == 1


def test_given_the_kms_key_does_not_exist_when_sealing_then_the_key_service_is_unavailable(
    kms_client: KMSClient,
) -> None:
    vault = Vault(KmsKeyManager(str(uuid.uuid4()), kms_client))

    with pytest.raises(KeyServiceUnavailable, match="GenerateDataKey failed: NotFoundException"):
        vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "KMSInternalException"])
def test_given_kms_answers_an_error_when_opening_then_the_key_service_is_unavailable(
    kms_client: KMSClient, vault: Vault, code: str
) -> None:
    sealed = vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)
    with Stubber(kms_client) as stubber:
        stubber.add_client_error("decrypt", service_error_code=code, http_status_code=400)

        with pytest.raises(KeyServiceUnavailable, match=f"Decrypt failed: {code}") as raised:
            vault.open(TENANT, Purpose.PROVIDER_KEY, sealed)
    assert SECRET not in str(raised.value)


def test_given_kms_cannot_be_reached_when_sealing_then_the_key_service_is_unavailable() -> None:
    with refusing_port() as port:
        client = boto3.client(
            "kms",
            endpoint_url=f"http://127.0.0.1:{port}",
            config=NO_RETRIES,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        vault = Vault(KmsKeyManager(str(uuid.uuid4()), client))

        with pytest.raises(KeyServiceUnavailable, match="GenerateDataKey failed: EndpointConnectionError"):
            vault.seal(TENANT, Purpose.PROVIDER_KEY, SECRET)


@pytest.fixture
def deployed_settings(aws: None, monkeypatch: pytest.MonkeyPatch, key_id: str) -> Iterator[None]:
    """The environment the template gives a function, with this test's KMS key."""
    for name, value in settings_environment(HERALD_KMS_KEY_ID=key_id, HERALD_AWS_MAX_ATTEMPTS="1").items():
        monkeypatch.setenv(name, value)
    _cold_start()
    yield
    _cold_start()


def _cold_start() -> None:
    common.reset()


def test_given_a_warm_container_then_the_default_vault_opens_each_record_with_one_kms_call(
    deployed_settings: None,
) -> None:
    counter = DecryptCounter(common.foundation().clients.kms())
    sealed = common.vault().seal(TENANT, Purpose.INBOUND_SECRET, SECRET)

    for _ in range(100):  # one invocation after another in the same container
        assert common.vault().open(TENANT, Purpose.INBOUND_SECRET, sealed) == SECRET

    assert common.vault() is common.vault()
    assert counter.calls == 1
