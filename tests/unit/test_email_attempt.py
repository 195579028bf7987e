"""One email attempt: a pass over the providers in order, each failure classified."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from msgspec.structs import replace

from herald.adapters.store.conversions import request_from_document
from herald.adapters.vault import KeyServiceUnavailable, Vault
from herald.domain.addresses import Suppression
from herald.domain.attempts import AttemptOutcome
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import Channel
from herald.domain.notifications import EmailNotification
from herald.domain.plans import Plan
from herald.domain.unsubscribes import ALL_TOPICS, Subscriber, Unsubscribe, UnsubscribeSource, verify
from herald.domain.vendors import ProviderName
from herald.services.email_attempt import ATTACHMENT_GONE, SUPPRESSED, EmailAttempt, provider_pass
from herald.services.tenant_directory import TenantDirectory
from tests.fakes.attachments import FakeAttachmentStore
from tests.fakes.common import settings_for_tests
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.providers import FakeProviders, message_permanent, provider_permanent, transient
from tests.fakes.tenants import (
    UNSUBSCRIBE_KEY,
    FakeSuppressions,
    FakeTenantTable,
    FakeUnsubscribes,
    unsubscribe_gate,
)

SENDGRID, RESEND, POSTMARK, SES = (
    ProviderName.SENDGRID,
    ProviderName.RESEND,
    ProviderName.POSTMARK,
    ProviderName.SES,
)
TENANT = "tenant-trio"
BARE = "tenant-bare"  # a paid tenant with no provider key and no domain
UNVERIFIED = "tenant-unverified"  # a paid tenant with a key but no verified domain
KEYS = {SENDGRID: "SG.trio-sendgrid-key-0001", RESEND: "re_trio_key_0002", POSTMARK: "pm-trio-server-0003"}
EMAIL: dict[str, Any] = {"to": "ada@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
ALL = ["SENDGRID", "RESEND", "POSTMARK"]


class SwitchableKeyManager(InMemoryKeyManager):
    """A key service that can be taken down, as KMS is during an outage."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def decrypt_data_key(self, wrapped: bytes, context: Mapping[str, str]) -> bytes:
        if self.down:
            raise KeyServiceUnavailable("key service unavailable: ThrottlingException")
        return super().decrypt_data_key(wrapped, context)


@dataclass
class Setup:
    suppressions: FakeSuppressions
    providers: FakeProviders
    tenants: FakeTenantTable
    keys: SwitchableKeyManager
    attempt: EmailAttempt
    unsubscribes: FakeUnsubscribes
    files: FakeAttachmentStore

    def run(
        self,
        payload: Mapping[str, Any] = EMAIL,
        *,
        tenant: str = TENANT,
        plan: str = Plan.STARTUP,
        skip: Sequence[str] = (),
    ) -> AttemptOutcome:
        request = request_from_document(Channel.EMAIL, payload)
        message = JobMessage("job-1", tenant, Channel.EMAIL, plan, 0, request)
        return self.attempt.run(message, request, Claim(1, 3, tuple(skip)))


@pytest.fixture
def setup() -> Setup:
    keys = SwitchableKeyManager()
    vault = Vault(keys)  # no data key cache: every credential opens through the key manager
    tenants = FakeTenantTable()
    tenants.add_tenant(
        TENANT,
        Plan.STARTUP,
        secrets=vault,
        provider_keys=list(KEYS.items()),
        verified_domains=["mail.trio.example"],
    )
    tenants.add_tenant(BARE, Plan.INDIE)
    tenants.add_tenant(
        UNVERIFIED, Plan.INDIE, secrets=vault, provider_keys=[(SENDGRID, "SG.unverified-0001")]
    )
    suppressions, providers, unsubscribes = FakeSuppressions(), FakeProviders(), FakeUnsubscribes()
    files = FakeAttachmentStore()
    attempt = EmailAttempt(
        attachments=files,
        directory=TenantDirectory(tenants, vault),
        suppressions=suppressions,
        unsubscribes=unsubscribe_gate(unsubscribes),
        providers=providers,
        platform_sender=settings_for_tests().platform_sender,
    )
    return Setup(suppressions, providers, tenants, keys, attempt, unsubscribes, files)


# ---------------------------------------------------------------- which providers, in which order


@pytest.mark.parametrize(
    ("plan", "payload", "skip", "expected"),
    [
        (Plan.STARTUP, {}, [], ALL),
        (Plan.STARTUP, {}, ["SENDGRID"], ["RESEND", "POSTMARK"]),
        (Plan.STARTUP, {"provider": "POSTMARK"}, [], ["POSTMARK"]),
        (Plan.STARTUP, {"provider": "POSTMARK", "fallback": "SENDGRID"}, [], ["POSTMARK", "SENDGRID"]),
        (Plan.STARTUP, {"provider": "POSTMARK", "fallback": "SENDGRID"}, ["POSTMARK"], ["SENDGRID"]),
        (Plan.FREE, {}, [], ["SES"]),
        (Plan.FREE, {"provider": "RESEND"}, [], ["SES"]),
    ],
    ids=["tenant-order", "skip", "forced", "forced-fallback", "forced-skip", "free", "free-ignores-forced"],
)
def test_given_plan_payload_and_skip_list_when_planning_a_pass_then_the_order_is_as_expected(
    plan: str, payload: dict[str, Any], skip: list[str], expected: list[str]
) -> None:
    email = request_from_document(Channel.EMAIL, {**EMAIL, **payload}).notification
    assert isinstance(email, EmailNotification)
    assert provider_pass(plan, ALL, email, skip) == expected


# ---------------------------------------------------------------- what is sent


def test_given_a_paid_tenant_without_from_when_sending_then_its_first_verified_domain_is_the_sender(
    setup: Setup,
) -> None:
    outcome = setup.run({**EMAIL, "text": "Hi", "replyTo": "support@trio.example"})

    assert outcome.delivered
    assert outcome.used_provider == "SENDGRID"
    [(email, routing, credential)] = setup.providers.by_name[SENDGRID].sent
    assert routing.from_address == "notifications@mail.trio.example"
    assert (email.text, email.reply_to, routing.tenant_id, routing.job_id) == (
        "Hi",
        "support@trio.example",
        TENANT,
        "job-1",
    )
    assert credential.api_key == KEYS[SENDGRID]


def test_given_an_explicit_from_when_sending_then_it_is_kept(setup: Setup) -> None:
    setup.run({**EMAIL, "from": "billing@mail.trio.example"})

    assert setup.providers.by_name[SENDGRID].sent[0][1].from_address == "billing@mail.trio.example"


def test_given_a_paid_tenant_without_a_verified_domain_when_sending_then_the_platform_sender_is_used(
    setup: Setup,
) -> None:
    setup.run(tenant=UNVERIFIED, plan=Plan.INDIE)

    assert setup.providers.by_name[SENDGRID].sent[0][1].from_address == settings_for_tests().platform_sender


def test_given_each_provider_when_tried_then_it_receives_its_own_decrypted_key(setup: Setup) -> None:
    setup.providers.script(SENDGRID, transient(SENDGRID))
    setup.providers.script(RESEND, transient(RESEND))

    setup.run()

    for name in (SENDGRID, RESEND, POSTMARK):
        [(_, _, credential)] = setup.providers.by_name[name].sent
        assert credential.api_key == KEYS[name]


# ---------------------------------------------------------------- classification


def test_given_a_transient_then_a_success_when_passing_then_it_delivers_and_logs_both(setup: Setup) -> None:
    setup.providers.script(SENDGRID, transient(SENDGRID, 502))

    outcome = setup.run()

    assert (outcome.delivered, outcome.used_provider, outcome.error_message) == (True, "RESEND", None)
    assert untimed(outcome.tried) == [
        {
            "provider": "SENDGRID",
            "outcome": "transient",
            "status": 502,
            "code": None,
            "error": "the provider is having trouble",
        },
        {"provider": "RESEND", "outcome": "delivered", "messageId": "resend-1"},
    ]


def untimed(tried: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The providers tried without their latency, after checking each call has one."""
    assert all(isinstance(entry["latencyMs"], int) for entry in tried)
    return [{name: value for name, value in entry.items() if name != "latencyMs"} for entry in tried]


def test_given_every_provider_transient_when_passing_then_the_attempt_is_retryable(setup: Setup) -> None:
    for name in (SENDGRID, RESEND, POSTMARK):
        setup.providers.script(name, transient(name))

    outcome = setup.run()

    assert (outcome.delivered, outcome.final, outcome.skip_providers) == (False, False, [])
    assert outcome.used_provider == "POSTMARK"  # the last one tried
    assert setup.providers.calls == ALL


def test_given_a_message_permanent_failure_when_passing_then_the_pass_stops_and_is_final(
    setup: Setup,
) -> None:
    setup.providers.script(SENDGRID, transient(SENDGRID))
    setup.providers.script(RESEND, message_permanent(RESEND))

    outcome = setup.run()

    assert (outcome.delivered, outcome.final, outcome.used_provider) == (False, True, "RESEND")
    assert setup.providers.calls == ["SENDGRID", "RESEND"]
    assert outcome.error_message == "RESEND message_permanent: the recipient address is invalid (HTTP 422)"


def test_given_every_provider_rejects_its_key_when_passing_then_the_attempt_is_final_and_all_are_skipped(
    setup: Setup,
) -> None:
    for name in (SENDGRID, RESEND, POSTMARK):
        setup.providers.script(name, provider_permanent(name))

    outcome = setup.run()

    assert (outcome.delivered, outcome.final) == (False, True)
    assert outcome.skip_providers == ALL


def test_given_permanent_and_transient_failures_when_passing_then_only_the_permanent_one_is_skipped(
    setup: Setup,
) -> None:
    setup.providers.script(SENDGRID, provider_permanent(SENDGRID))
    setup.providers.script(RESEND, transient(RESEND))
    setup.providers.script(POSTMARK, provider_permanent(POSTMARK))

    outcome = setup.run()

    assert (outcome.final, outcome.skip_providers) == (False, ["SENDGRID", "POSTMARK"])


def test_given_several_retry_after_hints_when_passing_then_the_longest_is_kept(setup: Setup) -> None:
    setup.providers.script(SENDGRID, transient(SENDGRID, 429, retry_after_seconds=40))
    setup.providers.script(RESEND, transient(RESEND, 429, retry_after_seconds=90))
    setup.providers.script(POSTMARK, transient(POSTMARK, 503))

    assert setup.run().retry_after_seconds == 90


def test_given_every_provider_skipped_when_attempting_then_it_fails_for_good_without_calls(
    setup: Setup,
) -> None:
    outcome = setup.run(skip=ALL)

    assert outcome == AttemptOutcome(
        delivered=False, error_message="every provider failed permanently", final=True
    )
    assert setup.providers.calls == []


def test_given_a_paid_tenant_without_providers_when_attempting_then_it_fails_for_good(setup: Setup) -> None:
    outcome = setup.run(tenant=BARE, plan=Plan.INDIE)

    assert outcome == AttemptOutcome(
        delivered=False, error_message="no email provider is available for this job", final=True
    )


def test_given_a_forced_provider_without_a_stored_key_when_passing_then_it_is_skipped_as_permanent(
    setup: Setup,
) -> None:
    outcome = setup.run({**EMAIL, "provider": "SENDGRID"}, tenant=BARE, plan=Plan.INDIE)

    assert (outcome.final, outcome.skip_providers) == (True, ["SENDGRID"])
    assert outcome.tried[0]["error"] == "no key is configured for this provider"


def test_given_the_key_service_is_down_when_passing_then_each_provider_fails_transiently(
    setup: Setup,
) -> None:
    setup.keys.down = True

    outcome = setup.run()

    assert (outcome.delivered, outcome.final, outcome.skip_providers) == (False, False, [])
    assert [entry["outcome"] for entry in outcome.tried] == ["transient"] * 3
    assert setup.providers.calls == []  # no provider is called without its key


def test_given_a_key_sealed_for_another_tenant_when_passing_then_that_provider_is_skipped_for_good(
    setup: Setup,
) -> None:
    """A credential record copied into another tenant's partition must not open there."""
    vault = Vault(setup.keys)
    setup.tenants.add_tenant(
        "tenant-thief", Plan.INDIE, secrets=vault, provider_keys=[(SENDGRID, "SG.thief-0001")]
    )
    stolen = setup.tenants.providers[TENANT]["SENDGRID"].api_key
    thief = setup.tenants.providers["tenant-thief"]
    thief["SENDGRID"] = replace(thief["SENDGRID"], api_key=stolen)

    outcome = setup.run(tenant="tenant-thief", plan=Plan.INDIE)

    assert (outcome.delivered, outcome.final, outcome.skip_providers) == (False, True, ["SENDGRID"])
    assert outcome.tried[0]["error"] == "the stored key cannot be decrypted"
    assert setup.providers.calls == []


# ---------------------------------------------------------------- suppressions


def test_given_a_suppressed_recipient_when_attempting_then_no_provider_is_called(setup: Setup) -> None:
    setup.suppressions.suppress(
        TENANT, Suppression("ada@example.com", "hard bounce", "2025-01-01T00:00:00.000Z")
    )

    outcome = setup.run({**EMAIL, "to": "Ada@Example.com"})

    # No retry changes it: the job is not offered for retry.
    assert outcome == AttemptOutcome(
        delivered=False, error_message=SUPPRESSED, final=True, caused_by_tenant=True, retryable=False
    )
    assert setup.providers.calls == []


def test_given_an_inactive_recipient_report_when_passing_then_the_address_is_suppressed_for_this_tenant(
    setup: Setup,
) -> None:
    setup.providers.script(SENDGRID, message_permanent(SENDGRID, suppress_recipient=True))

    outcome = setup.run({**EMAIL, "to": "Gone@Example.com"})

    assert outcome.final
    assert set(setup.suppressions.entries_by_tenant[TENANT]) == {"gone@example.com"}
    assert setup.suppressions.entries_by_tenant[TENANT]["gone@example.com"].source == "SENDGRID"


def test_given_the_suppression_write_fails_when_passing_then_the_attempt_still_ends_the_job(
    setup: Setup,
) -> None:
    setup.providers.script(SENDGRID, message_permanent(SENDGRID, suppress_recipient=True))
    setup.suppressions.unavailable = {"suppress"}

    outcome = setup.run()

    assert (outcome.delivered, outcome.final) == (False, True)
    assert not setup.suppressions.entries_by_tenant


# ---------------------------------------------------------------- the tenant as it is now


def test_given_the_order_changed_after_a_pass_then_the_next_pass_follows_the_new_order(setup: Setup) -> None:
    """Nothing about the tenant is kept between passes: a reorder through the API (another container)
    holds for the next pass of a warm worker."""
    setup.providers.script(SENDGRID, transient(SENDGRID))
    setup.run()
    assert setup.providers.calls == ["SENDGRID", "RESEND"]

    stored = setup.tenants.providers[TENANT]
    setup.tenants.providers[TENANT] = {
        SENDGRID.value: replace(stored[SENDGRID.value], priority=3),
        POSTMARK.value: replace(stored[POSTMARK.value], priority=1),
        RESEND.value: stored[RESEND.value],
    }
    setup.providers.calls.clear()
    setup.run()

    assert setup.providers.calls == ["POSTMARK"]


def test_given_a_provider_removed_after_a_pass_then_the_next_pass_never_calls_it(setup: Setup) -> None:
    setup.run()
    del setup.tenants.providers[TENANT][SENDGRID.value]
    setup.providers.calls.clear()

    outcome = setup.run()

    assert setup.providers.calls == ["RESEND"]
    assert outcome.used_provider == "RESEND"


def test_given_a_disabled_tenant_then_its_job_ends_failed_without_a_send(setup: Setup) -> None:
    setup.tenants.profiles[TENANT] = replace(setup.tenants.profiles[TENANT], status="disabled")

    outcome = setup.run()

    assert setup.providers.calls == []
    assert (outcome.delivered, outcome.final, outcome.caused_by_tenant) == (False, True, True)
    assert outcome.error_message == "the tenant is disabled (tenant_disabled); the job was not sent"


def test_given_the_tenant_table_is_down_then_the_pass_is_retried_later_without_a_send(setup: Setup) -> None:
    setup.tenants.unavailable = True

    outcome = setup.run()

    assert setup.providers.calls == []
    assert (outcome.delivered, outcome.final) == (False, False)
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("provider keys unavailable: ")


# ---------------------------------------------------------------- unsubscribes


def _unsubscribed(setup: Setup, topic: str, address: str = "ada@example.com") -> None:
    unsubscribe = Unsubscribe(address, topic, "2026-12-04T10:00:00.000Z", UnsubscribeSource.ONE_CLICK)
    setup.unsubscribes.record(TENANT, unsubscribe)


def test_given_a_topic_when_sending_then_each_provider_gets_the_one_click_headers_of_that_recipient(
    setup: Setup,
) -> None:
    outcome = setup.run({**EMAIL, "to": "Ada@Example.com", "unsubscribe": {"topic": "newsletter"}})

    assert outcome.delivered
    [(_, routing, _)] = setup.providers.by_name[SENDGRID].sent
    headers = dict(routing.headers)
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = headers["List-Unsubscribe"]
    assert link.startswith("<https://herald.test/u/1.")
    assert link.endswith(">")
    token = link.removeprefix("<https://herald.test/u/").removesuffix(">")
    assert verify(UNSUBSCRIBE_KEY.encode(), token) == Subscriber(TENANT, "ada@example.com", "newsletter")


def test_given_no_topic_when_sending_then_no_unsubscribe_header_is_added_nor_read(setup: Setup) -> None:
    _unsubscribed(setup, ALL_TOPICS)

    outcome = setup.run()

    assert outcome.delivered
    assert setup.providers.by_name[SENDGRID].sent[0][1].headers == ()
    assert setup.unsubscribes.calls == ["record"]


@pytest.mark.parametrize(
    ("recorded", "reason"),
    [
        ("newsletter", "recipient unsubscribed from newsletter"),
        (ALL_TOPICS, "recipient unsubscribed from every topic"),
    ],
)
def test_given_an_unsubscribed_recipient_when_sending_its_topic_then_it_fails_naming_it_and_no_provider_is_called(
    setup: Setup, recorded: str, reason: str
) -> None:
    _unsubscribed(setup, recorded)

    outcome = setup.run({**EMAIL, "to": "ADA@example.com", "unsubscribe": {"topic": "newsletter"}})

    assert outcome == AttemptOutcome(
        delivered=False, error_message=reason, final=True, caused_by_tenant=True, retryable=False
    )
    assert setup.providers.calls == []


def test_given_an_unsubscribe_from_one_topic_when_sending_another_then_it_is_delivered(setup: Setup) -> None:
    _unsubscribed(setup, "newsletter")

    outcome = setup.run({**EMAIL, "unsubscribe": {"topic": "billing"}})

    assert outcome.delivered


# ---------------------------------------------------------------- attachments

INVOICE = b"%PDF-1.7 invoice"
WITH_INVOICE: dict[str, Any] = {
    **EMAIL,
    "attachments": [
        {
            "filename": "invoice.pdf",
            "contentType": "application/pdf",
            "size": 16,
            "sha256": "ab",
            "key": "k/ab",
        }
    ],
}


def test_given_an_attachment_when_a_provider_fails_then_the_next_gets_the_same_file(setup: Setup) -> None:
    setup.files.objects["k/ab"] = (INVOICE, "application/pdf")
    setup.providers.script(SENDGRID, transient(SENDGRID, 502))

    outcome = setup.run(WITH_INVOICE)

    assert (outcome.delivered, outcome.used_provider) == (True, "RESEND")
    sent = [
        email.files() for name in (SENDGRID, RESEND) for email, _, _ in setup.providers.by_name[name].sent
    ]
    assert [[(item.filename, content) for item, content in files] for files in sent] == [
        [("invoice.pdf", INVOICE)],
        [("invoice.pdf", INVOICE)],
    ]


def test_given_an_expired_attachment_when_passing_then_the_job_fails_without_a_provider_call(
    setup: Setup,
) -> None:
    outcome = setup.run(WITH_INVOICE)

    assert (outcome.delivered, outcome.final, outcome.error_message) == (False, True, ATTACHMENT_GONE)
    assert setup.providers.calls == []


def test_given_a_bucket_outage_when_passing_then_the_attempt_is_retried_later(setup: Setup) -> None:
    setup.files.down = True

    outcome = setup.run(WITH_INVOICE)

    assert (outcome.delivered, outcome.final) == (False, False)
    assert outcome.error_message == "attachments unavailable: attachments bucket: unreachable"
    assert setup.providers.calls == []
