"""The account routes' logic on in-memory ports: plan view, a key's grace period, provider keys (checked live,
stored sealed), signing secrets, sending domains and suppressions — and each change drops the
container's cached view of the tenant."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec import to_builtins

from herald.adapters.vault import Vault
from herald.composition.inbound import delivery_format
from herald.domain.account import TenantContext, generate_api_key, hash_api_key
from herald.domain.addresses import Suppression
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.secrets import Purpose
from herald.domain.signing import SECRET_PREFIX
from herald.domain.vendors import ProviderName
from herald.http import account_answers
from herald.http.envelope import Answer
from herald.services.account import AccountService
from herald.services.keys import KeyService
from herald_harness.vendors.resend import RESEND_SECRET
from herald_harness.vendors.sendgrid import SENDGRID_VERIFICATION_KEY
from tests.fakes.common import full_grant
from tests.fakes.jobs import FakeCounters
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.providers import FakeProviders
from tests.fakes.tenants import FakeSuppressions, FakeTenantTable

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
API = "https://api.herald.test/api/v1"
KEY = "SG.account-test-key-000000000042"
SENDGRID, RESEND, POSTMARK = ProviderName.SENDGRID, ProviderName.RESEND, ProviderName.POSTMARK


class Rig:
    def __init__(self) -> None:
        self.table = FakeTenantTable()
        self.suppressions = FakeSuppressions()
        self.counters = FakeCounters()
        self.vault = Vault(InMemoryKeyManager())
        self.providers = FakeProviders()
        self.service = AccountService(
            tenants=self.table,
            store=self.table,
            suppressions=self.suppressions,
            counters=self.counters,
            secrets=self.vault,
            providers=self.providers,
            inbound_secrets=lambda provider, secret: delivery_format(provider).check_secret(secret),
            clock=lambda: NOW,
        )
        self.viewed = Viewed(self.service)

    def tenant(self, tenant_id: str = "t-1", plan: str = "startup") -> TenantContext:
        api_key = generate_api_key()
        self.table.add_tenant(tenant_id, plan, api_key=api_key)
        return TenantContext(tenant_id, plan, "active", full_grant(), NOW)

    def put(
        self, tenant: TenantContext, provider: str, key: str = KEY, webhook_secret: str | None = None
    ) -> tuple[bool, dict[str, object]]:
        created, stored = self.service.put_provider(
            tenant, provider, api_key=key, account_token=None, webhook_secret=webhook_secret
        )
        return created, document(account_answers.Provider.of(stored, tenant.tenant_id, API))

    def refused(self, call: Callable[[], object]) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            call()
        return caught.value


Document = dict[str, Any]


def document(answer: Answer) -> Document:
    """An answer as a client reads it."""
    read: Document = to_builtins(answer)
    return read


class Viewed:
    """The service's answers as the API's routes render them (herald.http.account_answers)."""

    def __init__(self, service: AccountService) -> None:
        self._service = service

    def overview(self, tenant: TenantContext) -> Document:
        return document(account_answers.Account.of(self._service.overview(tenant)))

    def providers(self, tenant: TenantContext) -> list[Document]:
        return [
            document(account_answers.Provider.of(item, tenant.tenant_id, API))
            for item in self._service.providers(tenant)
        ]

    def set_priority(self, tenant: TenantContext, name: str, priority: int) -> list[Document]:
        listed = self._service.set_priority(tenant, name, priority)
        return [document(account_answers.Provider.of(item, tenant.tenant_id, API)) for item in listed]

    def create_signing_secret(self, tenant: TenantContext) -> Document:
        return document(account_answers.NewSigningSecret.of(self._service.create_signing_secret(tenant)))

    def rotate_signing_secret(self, tenant: TenantContext) -> Document:
        return document(account_answers.NewSigningSecret.of(self._service.rotate_signing_secret(tenant)))

    def signing_secret_status(self, tenant: TenantContext) -> Document:
        return document(account_answers.SigningSecretStatus.of(self._service.signing_secret_status(tenant)))

    def add_domain(self, tenant: TenantContext, name: str) -> Document:
        return document(account_answers.Domain.of(self._service.add_domain(tenant, name)))

    def verify_domain(self, tenant: TenantContext, name: str) -> Document:
        return document(account_answers.Domain.of(self._service.verify_domain(tenant, name)))

    def domains(self, tenant: TenantContext) -> list[Document]:
        return [document(account_answers.Domain.of(item)) for item in self._service.domains(tenant)]

    def suppressions(self, tenant: TenantContext) -> list[Document]:
        return [document(account_answers.Suppression.of(item)) for item in self._service.suppressions(tenant)]


@pytest.fixture
def rig() -> Rig:
    return Rig()


# ---------------------------------------------------------------- plan and key


def test_the_overview_shows_plan_limits_usage_period_and_retention(rig: Rig) -> None:
    tenant = rig.tenant(plan="indie")
    rig.counters.jobs[("t-1", "20261101T000000", "webhooks")] = 12  # the tenant's anchor is 2025-01-01

    overview = rig.viewed.overview(tenant)

    assert overview["plan"] == "indie"
    assert overview["rateLimit"] == {"requestsPerMinute": 50}
    assert overview["limits"] == {"monthlyEmails": None, "monthlyWebhooks": 4000, "sharedQuota": False}
    assert overview["usage"] == {"emails": 0, "webhooks": 12, "total": 12}
    assert (overview["periodStart"], overview["periodEnd"]) == (
        "2026-11-01T00:00:00.000Z",
        "2026-12-01T00:00:00.000Z",
    )
    assert overview["retentionDays"] == 90
    assert overview["billing"] == {"status": None, "paidUntil": None}
    assert overview["previousKeyValidUntil"] is None


def test_a_running_grace_period_reads_in_the_account_after_the_rotation(rig: Rig) -> None:
    tenant = rig.tenant()
    keys = KeyService(rig.table, rig.table, clock=lambda: NOW)

    rotated = account_answers.RotatedApiKey.of(keys.rotate("t-1", tenant.grant, "key_t-1", 86_400))
    overview = rig.viewed.overview(tenant)

    # What the keys page shows after a reload: "the old key keeps working until" this time.
    assert document(rotated)["previousKeyValidUntil"] == "2026-12-01T12:00:00.000Z"
    assert overview["previousKeyValidUntil"] == "2026-12-01T12:00:00.000Z"
    assert rig.table.named["t-1"]["key_t-1"].key_hash == hash_api_key(rotated.api_key)


# ---------------------------------------------------------------- providers


def test_a_provider_key_is_checked_live_then_stored_sealed_and_shown_masked(rig: Rig) -> None:
    tenant = rig.tenant()

    created, view = rig.put(tenant, "sendgrid")

    assert created is True
    assert view == {
        "provider": "SENDGRID",
        "priority": 1,
        "lastFour": KEY[-4:],
        "addedAt": "2026-11-30T12:00:00.000Z",
        "hasWebhookSecret": False,
        "hasAccountToken": False,
        "webhookUrl": f"{API}/webhooks/sendgrid/t-1",
    }
    assert [credential.api_key for credential in rig.providers.by_name[SENDGRID].checked] == [KEY]
    stored = rig.table.providers["t-1"]["SENDGRID"]
    assert KEY.encode() not in stored.api_key.ciphertext
    assert rig.vault.open("t-1", Purpose.PROVIDER_KEY, stored.api_key) == KEY


def test_storing_a_key_again_keeps_its_priority_and_answers_updated(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "SENDGRID")
    rig.put(tenant, "RESEND")

    created, view = rig.put(tenant, "SENDGRID", "SG.replacement-key-0000000099")

    assert created is False
    assert (view["priority"], view["lastFour"]) == (1, "0099")


def test_a_refused_key_is_400_provider_key_invalid_and_nothing_is_stored(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.providers.by_name[SENDGRID].refused_keys.add(KEY)

    error = rig.refused(lambda: rig.put(tenant, "SENDGRID"))

    assert error.code is ErrorCode.PROVIDER_KEY_INVALID
    assert error.message == "SendGrid did not accept the key: the key was revoked"
    assert rig.table.providers["t-1"] == {}


@pytest.mark.parametrize(
    ("provider", "secret", "reason"),
    [
        ("SENDGRID", "not-a-key", "the SendGrid verification key is not base64 of a DER public key"),
        ("RESEND", "whsec_%%%", "the Resend signing secret is not whsec_ followed by base64"),
        ("POSTMARK", "herald:short", "the Postmark webhook password must be at least 16 characters"),
    ],
)
def test_a_webhook_secret_its_verifier_could_never_use_is_refused_with_the_reason(
    rig: Rig, provider: str, secret: str, reason: str
) -> None:
    tenant = rig.tenant()

    error = rig.refused(lambda: rig.put(tenant, provider, webhook_secret=secret))

    assert error.code is ErrorCode.VALIDATION_ERROR
    assert error.message.startswith(f"Invalid request: webhookSecret: {reason}")
    assert [(problem.field, problem.message[: len(reason)]) for problem in error.details] == [
        ("webhookSecret", reason)
    ]
    assert rig.table.providers["t-1"] == {}
    assert rig.providers.by_name[ProviderName(provider)].checked == []


@pytest.mark.parametrize(
    ("provider", "secret"),
    [
        ("SENDGRID", SENDGRID_VERIFICATION_KEY),
        ("RESEND", RESEND_SECRET),
        ("POSTMARK", "herald:herald-test-only-postmark-password"),
        ("POSTMARK", "a-password-without-a-user-name"),
    ],
)
def test_a_usable_webhook_secret_is_stored_sealed_for_inbound_use(
    rig: Rig, provider: str, secret: str
) -> None:
    tenant = rig.tenant()

    _, view = rig.put(tenant, provider, webhook_secret=secret)

    assert view["hasWebhookSecret"] is True
    sealed = rig.table.providers["t-1"][provider].webhook_secret
    assert sealed is not None
    assert rig.vault.open("t-1", Purpose.INBOUND_SECRET, sealed) == secret


def test_a_provider_that_cannot_answer_the_check_is_provider_unavailable(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.providers.by_name[RESEND].unavailable = True

    error = rig.refused(lambda: rig.put(tenant, "RESEND"))

    assert error.code is ErrorCode.PROVIDER_UNAVAILABLE
    assert error.message.startswith("Resend could not check the key right now")
    assert KEY not in error.message


@pytest.mark.parametrize(
    ("name", "code"), [("SPARKPOST", ErrorCode.UNKNOWN_PROVIDER), ("SES", ErrorCode.UNKNOWN_PROVIDER)]
)
def test_only_the_provider_tables_vendors_are_tenant_providers(rig: Rig, name: str, code: ErrorCode) -> None:
    assert rig.refused(lambda: rig.put(rig.tenant(), name)).code is code


def test_the_free_plan_cannot_bring_provider_keys(rig: Rig) -> None:
    error = rig.refused(lambda: rig.put(rig.tenant(plan="free"), "SENDGRID"))
    assert error.code is ErrorCode.PLAN_REQUIRED
    assert rig.providers.by_name[SENDGRID].checked == []


def test_a_priority_change_swaps_with_the_holder(rig: Rig) -> None:
    tenant = rig.tenant()
    for name in ("SENDGRID", "RESEND", "POSTMARK"):
        rig.put(tenant, name)

    listed = rig.viewed.set_priority(tenant, "POSTMARK", 1)

    assert [(item["provider"], item["priority"]) for item in listed] == [
        ("POSTMARK", 1),
        ("RESEND", 2),
        ("SENDGRID", 3),
    ]
    error = rig.refused(lambda: rig.viewed.set_priority(tenant, "POSTMARK", 4))
    assert (error.code, error.message) == (ErrorCode.INVALID_PRIORITY, "priority must be between 1 and 3.")


def test_deleting_a_provider_moves_the_ones_below_up(rig: Rig) -> None:
    tenant = rig.tenant()
    for name in ("SENDGRID", "RESEND", "POSTMARK"):
        rig.put(tenant, name)

    rig.service.delete_provider(tenant, "SENDGRID")

    assert [(item["provider"], item["priority"]) for item in rig.viewed.providers(tenant)] == [
        ("RESEND", 1),
        ("POSTMARK", 2),
    ]
    assert (
        rig.refused(lambda: rig.service.delete_provider(tenant, "SENDGRID")).code
        is ErrorCode.PROVIDER_NOT_FOUND
    )


def test_another_tenants_providers_are_invisible(rig: Rig) -> None:
    owner, intruder = rig.tenant("owner"), rig.tenant("intruder")
    rig.put(owner, "SENDGRID")

    assert rig.viewed.providers(intruder) == []
    assert (
        rig.refused(lambda: rig.service.delete_provider(intruder, "SENDGRID")).code
        is ErrorCode.PROVIDER_NOT_FOUND
    )
    assert "SENDGRID" in rig.table.providers["owner"]


# ---------------------------------------------------------------- signing secret


def test_a_signing_secret_is_created_once_rotated_with_overlap_and_deleted(rig: Rig) -> None:
    tenant = rig.tenant()

    created = rig.viewed.create_signing_secret(tenant)
    assert created["secret"].startswith(SECRET_PREFIX)
    assert (
        rig.refused(lambda: rig.viewed.create_signing_secret(tenant)).code is ErrorCode.SIGNING_SECRET_EXISTS
    )

    rotated = rig.viewed.rotate_signing_secret(tenant)
    assert rotated["secret"] != created["secret"]
    assert rotated["previousValidUntil"] == "2026-12-01T12:00:00.000Z"
    assert rig.viewed.signing_secret_status(tenant) == {
        "hasSecret": True,
        "createdAt": "2026-11-30T12:00:00.000Z",
        "previousValidUntil": "2026-12-01T12:00:00.000Z",
    }
    profile = rig.table.profiles["t-1"]
    assert profile.signing_secret is not None
    assert rig.vault.open("t-1", Purpose.SIGNING_SECRET, profile.signing_secret) == rotated["secret"]

    rig.service.delete_signing_secret(tenant)
    assert rig.viewed.signing_secret_status(tenant)["hasSecret"] is False
    assert (
        rig.refused(lambda: rig.viewed.rotate_signing_secret(tenant)).code
        is ErrorCode.SIGNING_SECRET_NOT_FOUND
    )
    assert (
        rig.refused(lambda: rig.service.delete_signing_secret(tenant)).code
        is ErrorCode.SIGNING_SECRET_NOT_FOUND
    )


# ---------------------------------------------------------------- domains


def test_a_domain_is_registered_with_every_provider_and_verified_when_they_say_so(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "SENDGRID")
    rig.put(tenant, "RESEND")

    added = rig.viewed.add_domain(tenant, "mail.acme.test")

    assert [(entry["provider"], entry["verified"]) for entry in added["providers"]] == [
        ("SENDGRID", False),
        ("RESEND", False),
    ]
    assert added["providers"][0]["records"] == [
        {
            "type": "TXT",
            "host": "dkim.mail.acme.test",
            "value": "sendgrid-key",
            "purpose": "dkim",
            "priority": None,
        }
    ]
    rig.providers.by_name[RESEND].verifiable = True

    verified = rig.viewed.verify_domain(tenant, "mail.acme.test")

    assert verified["verified"] is True
    assert [(entry["provider"], entry["verified"]) for entry in verified["providers"]] == [
        ("SENDGRID", False),
        ("RESEND", True),
    ]


def test_a_provider_failing_the_registration_is_recorded_not_fatal(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "SENDGRID")
    rig.put(tenant, "POSTMARK")
    rig.providers.by_name[POSTMARK].unavailable = True

    added = rig.viewed.add_domain(tenant, "mail.acme.test")

    assert added["providers"][1] == {
        "provider": "POSTMARK",
        "verified": False,
        "error": "the provider is having trouble",
        "records": [],
    }


def test_a_domain_needs_a_provider_and_belongs_to_one_tenant(rig: Rig) -> None:
    owner, other = rig.tenant("owner"), rig.tenant("other")
    assert (
        rig.refused(lambda: rig.viewed.add_domain(owner, "mail.acme.test")).code
        is ErrorCode.PROVIDER_NOT_CONFIGURED
    )
    rig.put(owner, "SENDGRID")
    rig.put(other, "SENDGRID")
    rig.viewed.add_domain(owner, "mail.acme.test")

    taken = rig.refused(lambda: rig.viewed.add_domain(other, "mail.acme.test"))

    assert (taken.code, taken.message) == (
        ErrorCode.DOMAIN_TAKEN,
        "This domain is registered by another account.",
    )
    assert (
        rig.refused(lambda: rig.viewed.verify_domain(other, "mail.acme.test")).code
        is ErrorCode.DOMAIN_NOT_FOUND
    )


def test_deleting_a_domain_removes_it_at_every_provider_and_frees_the_name(rig: Rig) -> None:
    owner, other = rig.tenant("owner"), rig.tenant("other")
    rig.put(owner, "SENDGRID")
    rig.put(other, "SENDGRID")
    rig.viewed.add_domain(owner, "mail.acme.test")

    rig.service.delete_domain(owner, "mail.acme.test")

    assert rig.providers.by_name[SENDGRID].deleted == ["mail.acme.test@SENDGRID"]
    assert rig.viewed.domains(owner) == []
    rig.viewed.add_domain(other, "mail.acme.test")


# ---------------------------------------------------------------- suppressions


def test_suppressions_are_listed_and_lifted_per_tenant(rig: Rig) -> None:
    owner, other = rig.tenant("owner"), rig.tenant("other")
    rig.suppressions.suppress(
        "owner", Suppression("gone@example.com", "hard bounce", "2026-11-01T00:00:00.000Z", "SENDGRID")
    )

    assert rig.viewed.suppressions(other) == []
    assert rig.refused(lambda: rig.service.delete_suppression(other, "gone@example.com")).code is (
        ErrorCode.SUPPRESSION_NOT_FOUND
    )
    assert rig.viewed.suppressions(owner) == [
        {
            "email": "gone@example.com",
            "reason": "hard bounce",
            "source": "SENDGRID",
            "createdAt": "2026-11-01T00:00:00.000Z",
        }
    ]
    rig.service.delete_suppression(owner, "Gone@Example.com")
    assert rig.viewed.suppressions(owner) == []
