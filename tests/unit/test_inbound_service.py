"""The inbound webhook services on in-memory ports, with the providers' real verifiers and signers:
what a verified event records (job events, suppressions, plans), what a duplicate, a forgery, an
unknown tenant or a failing table leave behind (nothing)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec.structs import replace

from herald.adapters.inbound import mailgun, paystack, polar, postmark, resend, sendgrid
from herald.adapters.vault import Vault
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.job_records import JobEvent
from herald.domain.money import Money
from herald.domain.secrets import Purpose
from herald.domain.unsubscribes import UnsubscribeSource
from herald.domain.vendors import ProviderName
from herald.services.inbound import (
    DELIVERY_MARK_SECONDS,
    TOKEN_MARK_SECONDS,
    DeliveryWebhooks,
    InboundRequest,
    Outcome,
    PaymentWebhooks,
)
from herald.services.ports.providers import DeliveryWebhook
from herald.settings import plan_catalog
from herald_harness.inbound_samples import SIGNED_AT, paystack_charge
from herald_harness.inbound_signers import (
    PAYSTACK_PLAN_STARTUP,
    PAYSTACK_SECRET,
    POLAR_PRODUCT_STARTUP,
    POLAR_SECRET,
    PRICES,
    payment_environment,
    paystack_headers,
    polar_headers,
)
from herald_harness.senders import JOB_ID, TENANT_ID, compact
from herald_harness.vendors.mailgun import MAILGUN_SIGNING_KEY, mailgun_body
from herald_harness.vendors.postmark import POSTMARK_SECRET, postmark_headers
from herald_harness.vendors.resend import RESEND_SECRET, resend_headers
from herald_harness.vendors.sendgrid import SENDGRID_VERIFICATION_KEY, STRANGER_SENDGRID_KEY, sendgrid_headers
from tests.fakes.inbound import FakeBillingLinks, FakeLedger
from tests.fakes.jobs import FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.queues import FakeTopic
from tests.fakes.tenants import FakeSuppressions, FakeTenantTable, FakeUnsubscribes

OTHER_TENANT = "0c3e1f4a-2b5d-4e6f-8a7b-9c0d1e2f3a4b"
JOB_EXPIRES = 1_830_000_000
NOW = datetime.fromtimestamp(SIGNED_AT, UTC)
PERIOD_START, PERIOD_END = "2026-11-30T07:58:10.000Z", "2026-12-30T07:58:10.000Z"
SECRETS = {
    ProviderName.SENDGRID: SENDGRID_VERIFICATION_KEY,
    ProviderName.RESEND: RESEND_SECRET,
    ProviderName.POSTMARK: POSTMARK_SECRET,
    ProviderName.MAILGUN: MAILGUN_SIGNING_KEY,
}


class Rig:
    def __init__(self, webhook: DeliveryWebhook = sendgrid.WEBHOOK) -> None:
        self.tenants = FakeTenantTable()
        self.jobs = FakeJobTable()
        self.ledger = FakeLedger()
        self.suppressions = FakeSuppressions()
        self.unsubscribes = FakeUnsubscribes()
        self.vault = Vault(InMemoryKeyManager())
        self.service = DeliveryWebhooks(
            webhook=webhook,
            tenants=self.tenants,
            secrets=self.vault,
            events=self.jobs,
            ledger=self.ledger,
            suppressions=self.suppressions,
            unsubscribes=self.unsubscribes,
            clock=lambda: SIGNED_AT,
        )

    def tenant(self, tenant_id: str = TENANT_ID, secrets: dict[ProviderName, str] | None = None) -> None:
        """A tenant with keys for the providers of ``secrets``, each with its webhook secret."""
        secrets = SECRETS if secrets is None else secrets
        self.tenants.add_tenant(
            tenant_id, secrets=self.vault, provider_keys=[(name, f"key-{name}") for name in secrets]
        )
        for name, secret in secrets.items():
            stored = self.tenants.providers[tenant_id][name.value]
            sealed = self.vault.seal(tenant_id, Purpose.INBOUND_SECRET, secret)
            self.tenants.save_provider(tenant_id, replace(stored, webhook_secret=sealed))

    def sent_job(self, tenant_id: str = TENANT_ID, job_id: str = JOB_ID) -> None:
        """A job a worker has claimed, so handed to a provider."""
        self.jobs.add_job(
            tenant_id,
            job_id,
            {"to": "ada.lovelace@example.org", "subject": "s", "body": "b"},
            expires_at=JOB_EXPIRES,
        )
        self.jobs.set_state(tenant_id, job_id)

    def events(self, tenant_id: str = TENANT_ID, job_id: str = JOB_ID) -> list[JobEvent]:
        view = self.jobs.get(tenant_id, job_id)
        assert view is not None
        return list(view.events)

    def suppressed(self, tenant_id: str = TENANT_ID) -> list[tuple[str, str, str | None]]:
        return [
            (item.address, item.reason, item.source)
            for item in self.suppressions.entries_by_tenant.get(tenant_id, {}).values()
        ]

    def refused(self, tenant_id: str, request: InboundRequest) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.service.receive(tenant_id, request)
        return caught.value


@pytest.fixture
def rig() -> Rig:
    rig = Rig()
    rig.tenant()
    rig.sent_job()
    return rig


def sendgrid_request(
    events: list[dict[str, Any]], timestamp: int = SIGNED_AT, **signing: Any
) -> InboundRequest:
    body = json.dumps(events, separators=(",", ":")).encode()
    return InboundRequest(sendgrid_headers(body, timestamp, **signing), body)


def bounce(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads(compact("sendgrid-bounce"))[0]
    return {**event, **changes}


# ---------------------------------------------------------------- single-use tokens

# SendGrid's verifier, as a sender whose signature covered a token in this header instead of the body.
TOKEN_HEADER = "x-test-token"
TOKENED = replace(sendgrid.WEBHOOK, single_use=lambda _body, headers: headers[TOKEN_HEADER])


def tokened_request(token: str, events: list[dict[str, Any]]) -> InboundRequest:
    request = sendgrid_request(events)
    return InboundRequest({**request.headers, TOKEN_HEADER: token}, request.raw_body)


@pytest.fixture
def tokened() -> Rig:
    rig = Rig(TOKENED)
    rig.tenant()
    rig.sent_job()
    return rig


def test_a_token_used_once_is_refused_the_second_time_even_with_another_body(tokened: Rig) -> None:
    tokened.service.receive(TENANT_ID, tokened_request("tok-1", [bounce(sg_event_id="a")]))

    refused = tokened.refused(
        TENANT_ID, tokened_request("tok-1", [bounce(sg_event_id="b", email="x@example.org")])
    )

    assert (refused.code, refused.message) == (
        ErrorCode.INVALID_SIGNATURE,
        "The webhook is not verified: its signed token was used before.",
    )
    assert tokened.suppressed() == [("ada.lovelace@example.org", "bounced", "SENDGRID")]
    [(key, expires)] = [(key, at) for key, at in tokened.ledger.marks.items() if "#token#" in key]
    assert (key, expires) == (f"SENDGRID#{TENANT_ID}#token#tok-1", SIGNED_AT + TOKEN_MARK_SECONDS)


def test_a_token_is_used_per_tenant_and_a_new_token_passes(tokened: Rig) -> None:
    tokened.tenant(OTHER_TENANT)
    tokened.service.receive(TENANT_ID, tokened_request("tok-1", [bounce()]))

    tokened.service.receive(OTHER_TENANT, tokened_request("tok-1", [bounce()]))
    tokened.service.receive(TENANT_ID, tokened_request("tok-2", [bounce(sg_event_id="c")]))


def test_when_recording_fails_the_token_is_released_so_the_senders_retry_passes(tokened: Rig) -> None:
    tokened.suppressions.unavailable.add("suppress")

    with pytest.raises(DependencyError):
        tokened.service.receive(TENANT_ID, tokened_request("tok-1", [bounce()]))

    assert not [key for key in tokened.ledger.marks if "#token#" in key]
    tokened.suppressions.unavailable.clear()
    receipt = tokened.service.receive(TENANT_ID, tokened_request("tok-1", [bounce()]))
    assert receipt.outcomes[Outcome.RECORDED] == 1


def test_a_forged_request_uses_no_token(tokened: Rig) -> None:
    forged = tokened_request("tok-1", [bounce()])
    tampered = InboundRequest(forged.headers, forged.raw_body.replace(b"bounce", b"bounxe"))

    tokened.refused(TENANT_ID, tampered)

    assert tokened.ledger.marks == {}


# ---------------------------------------------------------------- Mailgun: a signed token, not a signed body


def mailgun_request(token: str, changes: dict[str, Any] | None = None, at: int = SIGNED_AT) -> InboundRequest:
    event = json.loads(compact("mailgun-failed"))["event-data"] | (changes or {})
    return InboundRequest({}, mailgun_body(event, at, token))


@pytest.fixture
def mailgun_rig() -> Rig:
    rig = Rig(mailgun.WEBHOOK)
    rig.tenant()
    rig.sent_job()
    return rig


def test_a_mailgun_permanent_failure_is_recorded_suppresses_and_uses_its_token(mailgun_rig: Rig) -> None:
    receipt = mailgun_rig.service.receive(TENANT_ID, mailgun_request("tok-a"))

    assert receipt.outcomes[Outcome.RECORDED] == 1
    assert [event.type for event in mailgun_rig.events()] == ["bounced"]
    assert mailgun_rig.suppressed() == [("ada.lovelace@example.org", "bounced", "MAILGUN")]
    assert f"MAILGUN#{TENANT_ID}#token#tok-a" in mailgun_rig.ledger.marks


def test_a_replayed_mailgun_request_is_refused_and_applied_once(mailgun_rig: Rig) -> None:
    request = mailgun_request("tok-a")
    mailgun_rig.service.receive(TENANT_ID, request)

    assert mailgun_rig.refused(TENANT_ID, request).code is ErrorCode.INVALID_SIGNATURE
    assert len(mailgun_rig.events()) == 1


def test_a_captured_mailgun_signature_cannot_carry_another_body(mailgun_rig: Rig) -> None:
    """The signature covers the timestamp and token only: a request that reuses them with another
    job and another recipient is refused, and neither is touched."""
    other_job = str(uuid.uuid4())
    mailgun_rig.sent_job(job_id=other_job)
    mailgun_rig.service.receive(TENANT_ID, mailgun_request("tok-a", {"event": "delivered"}))

    forged = mailgun_request(
        "tok-a", {"recipient": "victim@example.org", "user-variables": {"herald_job_id": other_job}}
    )

    assert mailgun_rig.refused(TENANT_ID, forged).code is ErrorCode.INVALID_SIGNATURE
    assert (mailgun_rig.events(job_id=other_job), mailgun_rig.suppressed()) == ([], [])


def test_a_forged_mailgun_signature_is_refused_and_uses_no_token(mailgun_rig: Rig) -> None:
    document = json.loads(mailgun_request("tok-a").raw_body)
    document["signature"]["signature"] = "0" * 64

    refused = mailgun_rig.refused(TENANT_ID, InboundRequest({}, json.dumps(document).encode()))

    assert refused.code is ErrorCode.INVALID_SIGNATURE
    assert mailgun_rig.ledger.marks == {}


def test_a_stale_mailgun_request_is_refused(mailgun_rig: Rig) -> None:
    refused = mailgun_rig.refused(TENANT_ID, mailgun_request("tok-a", at=SIGNED_AT - 301))

    assert refused.message == "The webhook is not verified: signature timestamp is more than 300 seconds old."


def test_a_mailgun_event_naming_another_tenant_is_ignored(mailgun_rig: Rig) -> None:
    mailgun_rig.tenant(OTHER_TENANT)
    request = mailgun_request(
        "tok-a", {"user-variables": {"herald_job_id": JOB_ID, "herald_tenant_id": TENANT_ID}}
    )

    receipt = mailgun_rig.service.receive(OTHER_TENANT, request)

    assert receipt.outcomes[Outcome.IGNORED] == 1
    assert (mailgun_rig.events(), mailgun_rig.suppressed(OTHER_TENANT)) == ([], [])


# ---------------------------------------------------------------- delivery events


def test_a_hard_bounce_of_a_sent_job_is_recorded_in_the_job_and_suppresses_the_address(rig: Rig) -> None:
    receipt = rig.service.receive(TENANT_ID, sendgrid_request([bounce()]))

    assert receipt.outcomes == {Outcome.RECORDED: 1, Outcome.DUPLICATE: 0, Outcome.IGNORED: 0}
    assert rig.events() == [
        JobEvent(
            "bounced",
            "2026-11-30T07:59:50.000Z",
            "SENDGRID",
            "550 5.1.1 The email account that you tried to reach does not exist.",
            # When Herald received it, which orders a job's events (the provider's time is its claim).
            received_at="2026-11-30T08:00:00.000Z",
        )
    ]
    [(event, expires)] = rig.jobs.stored_events(TENANT_ID, JOB_ID).values()
    assert expires == JOB_EXPIRES  # kept as long as the job
    assert rig.suppressed() == [("ada.lovelace@example.org", "bounced", "SENDGRID")]


def test_the_same_event_delivered_again_is_acknowledged_and_stored_once(rig: Rig) -> None:
    rig.service.receive(TENANT_ID, sendgrid_request([bounce()]))
    rig.suppressions.calls.clear()

    receipt = rig.service.receive(TENANT_ID, sendgrid_request([bounce()]))

    assert receipt.outcomes == {Outcome.RECORDED: 0, Outcome.DUPLICATE: 1, Outcome.IGNORED: 0}
    assert len(rig.events()) == 1
    assert rig.suppressions.calls == []


@pytest.mark.parametrize(
    ("changes", "recorded"),
    [
        ({"event": "deferred", "sg_event_id": "d-1"}, "deferred"),
        ({"type": "blocked", "sg_event_id": "b-1"}, "soft_bounced"),
        ({"event": "delivered", "sg_event_id": "ok-1"}, "delivered"),
    ],
)
def test_soft_bounces_deferrals_and_deliveries_are_only_recorded(
    rig: Rig, changes: dict[str, Any], recorded: str
) -> None:
    rig.service.receive(TENANT_ID, sendgrid_request([bounce(**changes)]))

    assert [event.type for event in rig.events()] == [recorded]
    assert rig.suppressed() == []


def test_a_complaint_suppresses_the_address(rig: Rig) -> None:
    rig.service.receive(TENANT_ID, sendgrid_request([bounce(event="spamreport", sg_event_id="spam-1")]))

    assert rig.suppressed() == [("ada.lovelace@example.org", "complained", "SENDGRID")]


@pytest.mark.parametrize("name", ["unsubscribe", "group_unsubscribe"])
def test_a_providers_unsubscribe_is_an_unsubscribe_from_every_topic_not_a_suppression(
    rig: Rig, name: str
) -> None:
    rig.service.receive(TENANT_ID, sendgrid_request([bounce(event=name, sg_event_id=f"{name}-1")]))
    rig.service.receive(TENANT_ID, sendgrid_request([bounce(event=name, sg_event_id=f"{name}-2")]))

    assert rig.suppressed() == []
    [entry] = rig.unsubscribes.entries_by_tenant[TENANT_ID].values()
    assert (entry.address, entry.topic, entry.source, entry.provider) == (
        "ada.lovelace@example.org",
        "*",
        UnsubscribeSource.PROVIDER,
        "SENDGRID",
    )


def test_a_job_id_of_another_tenant_ties_nothing_but_the_bounce_still_suppresses_for_this_tenant(
    rig: Rig,
) -> None:
    rig.tenant(OTHER_TENANT)
    rig.sent_job(OTHER_TENANT, "11111111-2222-4333-8444-555555555555")
    event = bounce(herald_job_id="11111111-2222-4333-8444-555555555555", herald_tenant_id=None)

    rig.service.receive(TENANT_ID, sendgrid_request([event]))

    assert rig.events(OTHER_TENANT, "11111111-2222-4333-8444-555555555555") == []
    assert rig.suppressed(OTHER_TENANT) == []
    assert rig.suppressed() == [("ada.lovelace@example.org", "bounced", "SENDGRID")]
    assert list(rig.ledger.marks.values()) == [SIGNED_AT + DELIVERY_MARK_SECONDS]


def test_an_event_naming_another_tenant_is_ignored_whole(rig: Rig) -> None:
    """Two tenants sharing one provider account: the other tenant's mail is not this URL's business."""
    receipt = rig.service.receive(TENANT_ID, sendgrid_request([bounce(herald_tenant_id=OTHER_TENANT)]))

    assert receipt.outcomes[Outcome.IGNORED] == 1
    assert (rig.events(), rig.suppressed(), rig.ledger.marks) == ([], [], {})


def test_an_event_of_mail_herald_did_not_send_is_ignored_unless_it_suppresses(rig: Rig) -> None:
    foreign = bounce(event="delivered", herald_job_id=None, herald_tenant_id=None, sg_event_id="x-1")
    never_claimed = bounce(
        event="open", herald_job_id="99999999-8888-4777-8666-555555555555", sg_event_id="x-2"
    )
    rig.jobs.add_job(
        TENANT_ID, "99999999-8888-4777-8666-555555555555", {"to": "a@b.c", "subject": "s", "body": "b"}
    )

    receipt = rig.service.receive(TENANT_ID, sendgrid_request([foreign, never_claimed]))

    assert receipt.outcomes[Outcome.IGNORED] == 2
    assert (rig.events(), rig.suppressed(), rig.ledger.marks) == ([], [], {})


def test_when_the_suppression_cannot_be_written_the_event_is_taken_back_and_the_retry_records_it(
    rig: Rig,
) -> None:
    rig.suppressions.unavailable.add("suppress")

    with pytest.raises(DependencyError):
        rig.service.receive(TENANT_ID, sendgrid_request([bounce()]))

    assert rig.events() == []
    rig.suppressions.unavailable.clear()
    receipt = rig.service.receive(TENANT_ID, sendgrid_request([bounce()]))
    assert receipt.outcomes[Outcome.RECORDED] == 1
    assert len(rig.events()) == 1


@pytest.mark.parametrize(
    ("request_of", "reason"),
    [
        (lambda: sendgrid_request([bounce()], key=STRANGER_SENDGRID_KEY), "does not match the body"),
        (lambda: sendgrid_request([bounce()], timestamp=SIGNED_AT - 301), "more than 300 seconds old"),
        (
            lambda: InboundRequest(
                sendgrid_request([bounce()]).headers, json.dumps([bounce(email="eve@example.com")]).encode()
            ),
            "does not match the body",
        ),
        (lambda: InboundRequest({}, json.dumps([bounce()]).encode()), "missing"),
    ],
    ids=["forged", "replayed-old", "tampered", "missing-header"],
)
def test_an_unverified_request_is_401_and_touches_nothing(rig: Rig, request_of: Any, reason: str) -> None:
    error = rig.refused(TENANT_ID, request_of())

    assert error.code is ErrorCode.INVALID_SIGNATURE
    assert error.message.startswith("The webhook is not verified: ")
    assert reason in error.message
    assert (rig.jobs.calls, rig.ledger.calls, rig.suppressions.calls) == ([], [], [])


@pytest.mark.parametrize(
    ("tenant_id", "secrets"),
    [
        ("7d9e8f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a", None),
        (OTHER_TENANT, {}),
        (OTHER_TENANT, {ProviderName.RESEND: RESEND_SECRET}),
    ],
    ids=["unknown-tenant", "no-secret", "secret-of-another-provider"],
)
def test_no_tenant_or_no_secret_for_this_provider_is_404_and_touches_nothing(
    rig: Rig, tenant_id: str, secrets: dict[ProviderName, str] | None
) -> None:
    if secrets is not None:
        rig.tenant(tenant_id, secrets)

    error = rig.refused(tenant_id, sendgrid_request([bounce()]))

    assert (error.code, error.message) == (
        ErrorCode.WEBHOOK_NOT_FOUND,
        "No webhook is configured at this URL.",
    )
    assert (rig.jobs.calls, rig.ledger.calls, rig.suppressions.calls) == ([], [], [])


def test_a_verified_body_that_is_not_the_providers_shape_is_400(rig: Rig) -> None:
    body = b'{"event": "bounce"}'

    error = rig.refused(TENANT_ID, InboundRequest(sendgrid_headers(body, SIGNED_AT), body))

    assert error.code is ErrorCode.INVALID_JSON
    assert error.message == "The webhook body cannot be read: the body is not a JSON array of events."


@pytest.mark.parametrize(
    ("webhook", "name", "headers"),
    [
        (resend.WEBHOOK, "resend-bounced", lambda body: resend_headers(body, SIGNED_AT, "msg_1")),
        (postmark.WEBHOOK, "postmark-bounce", lambda body: postmark_headers()),
    ],
    ids=["resend", "postmark"],
)
def test_resend_and_postmark_events_are_verified_with_their_own_secrets(
    webhook: DeliveryWebhook, name: str, headers: Callable[[bytes], dict[str, str]]
) -> None:
    rig = Rig(webhook)
    rig.tenant()
    rig.sent_job()
    body = compact(name)

    receipt = rig.service.receive(TENANT_ID, InboundRequest(headers(body), body))

    assert receipt.outcomes[Outcome.RECORDED] == 1
    assert [(event.type, event.provider) for event in rig.events()] == [("bounced", webhook.provider.value)]


# ---------------------------------------------------------------- payments


class PaymentRig:
    def __init__(self, webhook: Any = polar.WEBHOOK, secret: str = POLAR_SECRET) -> None:
        self.tenants = FakeTenantTable()
        self.ledger = FakeLedger()
        self.links = FakeBillingLinks()
        self.topic = FakeTopic()
        self.tenants.add_tenant(TENANT_ID, plan="free")
        self.service = PaymentWebhooks(
            webhook=webhook,
            secret=lambda: secret,
            # The plans and prices the local stack's payment functions read.
            catalog=plan_catalog(webhook.processor, payment_environment()),
            tenants=self.tenants,
            ledger=self.ledger,
            links=self.links,
            alerts=self.topic,
            clock=lambda: NOW,
        )

    def billing(self) -> tuple[object, ...]:
        profile = self.tenants.profiles[TENANT_ID]
        return (
            profile.plan,
            profile.period_anchor,
            profile.paid_until,
            profile.billing_status,
            profile.subscription,
        )


def polar_request(
    kind: str = "subscription.active", message_id: str = "evt-1", **data: Any
) -> InboundRequest:
    event = json.loads(compact("polar-subscription-active"))
    event["type"] = kind
    event["data"].update(data)
    body = json.dumps(event, separators=(",", ":")).encode()
    return InboundRequest(polar_headers(body, SIGNED_AT, message_id), body)


SUBSCRIPTION = "POLAR:d7a3c2f1-5b6e-4c8d-9a0b-1c2d3e4f5a6b"


def test_an_active_polar_subscription_moves_the_tenant_to_its_plan_for_the_paid_period() -> None:
    rig = PaymentRig()

    receipt = rig.service.receive(polar_request())

    assert receipt.outcomes[Outcome.RECORDED] == 1
    assert rig.billing() == ("indie", PERIOD_START, PERIOD_END, "active", SUBSCRIPTION)


def test_a_payment_that_moves_the_plan_is_recorded_in_the_audit_log_as_the_processor() -> None:
    rig = PaymentRig()

    rig.service.receive(polar_request())
    rig.service.receive(polar_request("subscription.past_due", "evt-2"))

    changed, past_due = rig.tenants.audit
    assert (changed.action.value, changed.actor.kind.value, changed.actor.name, changed.actor.ip) == (
        "plan.changed",
        "processor",
        "Polar",
        None,
    )
    assert changed.details["plan"] == "indie"
    assert changed.details["subscription"] == SUBSCRIPTION
    assert changed.details["eventId"] == "evt-1"
    assert (past_due.action.value, past_due.details["billingStatus"]) == ("tenant.changed", "past_due")


def test_a_polar_event_delivered_again_changes_nothing_more() -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())
    rig.tenants.update_profile(TENANT_ID, plan="startup")  # an operator's change meanwhile

    receipt = rig.service.receive(polar_request())

    assert receipt.outcomes[Outcome.DUPLICATE] == 1
    assert rig.tenants.profiles[TENANT_ID].plan == "startup"


def test_cancel_at_period_end_past_due_and_revoke_follow_the_subscription() -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())

    rig.service.receive(polar_request("subscription.canceled", "evt-2", cancel_at_period_end=True))
    assert rig.billing() == ("indie", PERIOD_START, PERIOD_END, "canceling", SUBSCRIPTION)
    rig.service.receive(polar_request("subscription.past_due", "evt-3"))
    assert rig.billing()[3] == "past_due"
    rig.service.receive(polar_request("subscription.revoked", "evt-4"))
    assert rig.billing() == ("free", "2026-11-30T08:00:00.000Z", None, None, None)


def test_a_revoke_of_a_subscription_the_tenant_no_longer_pays_with_changes_nothing() -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())

    rig.service.receive(polar_request("subscription.revoked", "evt-2", id="an-older-subscription"))

    assert rig.billing()[0:4] == ("indie", PERIOD_START, PERIOD_END, "active")


def test_a_renewal_keeps_the_periods_and_extends_what_is_paid_and_a_new_plan_restarts_them() -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())

    renewed = {"current_period_start": PERIOD_END, "current_period_end": "2027-01-30T07:58:10.000Z"}
    rig.service.receive(polar_request("subscription.active", "evt-2", **renewed))
    assert rig.billing()[0:3] == ("indie", PERIOD_START, "2027-01-30T07:58:10.000Z")
    rig.service.receive(
        polar_request(
            "subscription.active",
            "evt-3",
            product_id=POLAR_PRODUCT_STARTUP,
            amount=PRICES[POLAR_PRODUCT_STARTUP].amount,
            **renewed,
        )
    )
    assert rig.billing()[0:3] == ("startup", PERIOD_END, "2027-01-30T07:58:10.000Z")


def test_a_product_that_is_not_a_herald_plan_or_a_tenant_herald_does_not_know_changes_nothing() -> None:
    rig = PaymentRig()

    other_product = rig.service.receive(polar_request(product_id="a-t-shirt"))
    unknown = rig.service.receive(
        polar_request("subscription.active", "evt-2", customer={"external_id": OTHER_TENANT})
    )

    assert other_product.outcomes[Outcome.IGNORED] == unknown.outcomes[Outcome.IGNORED] == 1
    assert rig.billing()[0] == "free"
    assert set(rig.ledger.marks) == {"POLAR#evt-1", "POLAR#evt-2"}


def test_another_products_subscription_neither_takes_over_the_plan_nor_ends_it() -> None:
    """The replayed probe: Indie's sub_X, then another product's sub_Y active (it rewrote paidUntil
    and the subscription), sub_Y revoked (it dropped the tenant to free), sub_X revoked (ignored)."""
    rig = PaymentRig()
    rig.service.receive(polar_request("subscription.active", "evt-x", id="sub_X"))
    indie = rig.billing()
    assert indie[0::4] == ("indie", "POLAR:sub_X")
    later = {"current_period_start": PERIOD_END, "current_period_end": "2027-06-30T00:00:00.000Z"}

    other = rig.service.receive(
        polar_request("subscription.active", "evt-y", id="sub_Y", product_id="a-t-shirt", **later)
    )
    assert (other.outcomes[Outcome.IGNORED], rig.billing()) == (1, indie)
    gone = rig.service.receive(
        polar_request("subscription.revoked", "evt-y-end", id="sub_Y", product_id="a-t-shirt")
    )
    assert (gone.outcomes[Outcome.IGNORED], rig.billing()) == (1, indie)

    rig.service.receive(polar_request("subscription.revoked", "evt-x-end", id="sub_X"))
    assert rig.billing() == ("free", "2026-11-30T08:00:00.000Z", None, None, None)


def test_a_forged_payment_is_401_and_changes_nothing() -> None:
    rig = PaymentRig()
    request = polar_request()
    forged = InboundRequest(
        polar_headers(
            request.raw_body, SIGNED_AT, "evt-1", secret="whsec_Zm9yZ2VkIHNlY3JldCBmb3JnZWQgc2VjcmV0IQ=="
        ),
        request.raw_body,
    )

    with pytest.raises(HeraldError) as caught:
        rig.service.receive(forged)

    assert caught.value.code is ErrorCode.INVALID_SIGNATURE
    assert (rig.billing()[0], rig.ledger.calls, rig.links.calls) == ("free", [], [])


def test_when_the_plan_cannot_be_written_the_mark_is_removed_so_the_retry_applies_it() -> None:
    rig = PaymentRig()
    rig.tenants.unavailable = True

    with pytest.raises(DependencyError):
        rig.service.receive(polar_request())

    assert rig.ledger.marks == {}
    rig.tenants.unavailable = False
    rig.service.receive(polar_request())
    assert rig.billing()[0] == "indie"


def paystack_request(name: str) -> InboundRequest:
    body = compact(name)
    return InboundRequest(paystack_headers(body), body)


def test_a_paystack_charge_activates_the_plan_and_its_later_events_find_the_tenant_by_customer() -> None:
    rig = PaymentRig(paystack.WEBHOOK, PAYSTACK_SECRET)

    rig.service.receive(paystack_request("paystack-charge-success"))
    assert rig.billing() == ("indie", "2026-11-30T07:59:40.000Z", "2026-12-30T07:59:40.000Z", "active", None)

    # subscription.* events carry no tenant id: the customer's link, written by the charge, has it.
    rig.service.receive(paystack_request("paystack-subscription-create"))
    assert rig.billing()[4] == "PAYSTACK:SUB_vsyqdmlzble3uii"
    rig.service.receive(paystack_request("paystack-subscription-disable"))
    assert rig.billing() == ("free", "2026-11-30T08:00:00.000Z", None, None, None)


def test_an_event_applied_while_another_changed_the_billing_is_computed_again_on_the_new_billing() -> None:
    """Polar delivers canceled and revoked together: the cancel must not undo the revoke."""
    rig = PaymentRig()
    rig.service.receive(polar_request())
    revoke = polar_request("subscription.revoked", "evt-revoke")
    cancel = polar_request("subscription.canceled", "evt-cancel", cancel_at_period_end=True)
    concurrent = [lambda: rig.service.receive(revoke)]

    def revoked_meanwhile(_tenant_id: str) -> None:
        while concurrent:
            concurrent.pop()()

    rig.tenants.before_update = revoked_meanwhile
    rig.service.receive(cancel)

    assert rig.billing() == ("free", "2026-11-30T08:00:00.000Z", None, None, None)


def test_a_billing_that_keeps_changing_is_a_503_and_the_event_is_retried_later() -> None:
    rig = PaymentRig()

    def always_changed(tenant_id: str) -> None:
        rig.tenants.profiles[tenant_id] = replace(
            rig.tenants.profiles[tenant_id], subscription=str(uuid.uuid4())
        )

    rig.tenants.before_update = always_changed

    with pytest.raises(DependencyError, match="kept changing concurrently"):
        rig.service.receive(polar_request())
    assert rig.ledger.marks == {}


# ---------------------------------------------------------------- payments that do not pay the price


def refusal(rig: PaymentRig) -> dict[str, Any]:
    """The one alert published, after checking it carries no secret."""
    [(subject, message)] = rig.topic.published
    assert subject == f"Herald: a {message['processor'].title()} payment was refused"
    for secret in (PAYSTACK_SECRET, POLAR_SECRET):
        assert secret not in json.dumps(message)
    return message


def test_the_probes_paystack_charge_of_100_kobo_for_startup_leaves_the_tenant_free_and_alerts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Replayed: a correctly signed charge.success for the Startup plan code with amount 100."""
    rig = PaymentRig(paystack.WEBHOOK, PAYSTACK_SECRET)
    before = rig.billing()
    body = paystack_charge(
        tenant_id=TENANT_ID, plan_code=PAYSTACK_PLAN_STARTUP, reference="probe", paid=Money(100, "NGN")
    )
    request = InboundRequest(paystack_headers(body), body)

    receipt = rig.service.receive(request)

    assert (receipt.outcomes[Outcome.IGNORED], rig.billing()) == (1, before)
    [mark] = rig.ledger.marks
    assert refusal(rig) == {
        "type": "herald.payment-refused",
        "processor": "PAYSTACK",
        "event": "charge.success",
        "eventId": mark.removeprefix("PAYSTACK#"),
        "tenantId": TENANT_ID,
        "plan": "startup",
        "reason": "paid 100 NGN; the startup plan costs 4500000 NGN",
    }
    assert '"PaymentsRefused"' in capsys.readouterr().out
    # Recorded: the redelivery is a duplicate, and alerts nobody again.
    assert rig.service.receive(request).outcomes[Outcome.DUPLICATE] == 1
    assert len(rig.topic.published) == 1


def test_a_paystack_charge_of_the_startup_amount_in_another_currency_is_refused() -> None:
    rig = PaymentRig(paystack.WEBHOOK, PAYSTACK_SECRET)
    body = paystack_charge(
        tenant_id=TENANT_ID, plan_code=PAYSTACK_PLAN_STARTUP, reference="r", paid=Money(4_500_000, "USD")
    )

    rig.service.receive(InboundRequest(paystack_headers(body), body))

    assert rig.billing()[0] == "free"
    assert refusal(rig)["reason"] == "paid 4500000 USD; the startup plan costs 4500000 NGN"


def test_a_paystack_charge_of_the_startup_price_moves_the_tenant_to_startup() -> None:
    rig = PaymentRig(paystack.WEBHOOK, PAYSTACK_SECRET)
    body = paystack_charge(tenant_id=TENANT_ID, plan_code=PAYSTACK_PLAN_STARTUP, reference="r")

    receipt = rig.service.receive(InboundRequest(paystack_headers(body), body))

    assert (receipt.outcomes[Outcome.RECORDED], rig.billing()[0], rig.topic.published) == (1, "startup", [])


@pytest.mark.parametrize(
    ("paid", "reason"),
    [
        ({"currency": "eur"}, "paid 2900 EUR; the indie plan costs 2900 USD"),
        ({"amount": 100}, "paid 100 USD; the indie plan costs 2900 USD"),
        ({"discount_id": "5b6c7d8e-0000-4000-8000-000000000001"}, "the event does not say what was paid"),
    ],
    ids=["another currency", "too low", "discounted"],
)
def test_a_polar_subscription_that_does_not_pay_the_price_leaves_the_tenant_free(
    paid: dict[str, Any], reason: str
) -> None:
    rig = PaymentRig()

    receipt = rig.service.receive(polar_request(**paid))

    assert (receipt.outcomes[Outcome.IGNORED], rig.billing()[0]) == (1, "free")
    assert refusal(rig)["reason"].startswith(reason)


def polar_order(message_id: str, **data: Any) -> InboundRequest:
    event = json.loads(compact("polar-order-paid"))
    event["data"].update(data)
    body = json.dumps(event, separators=(",", ":")).encode()
    return InboundRequest(polar_headers(body, SIGNED_AT, message_id), body)


@pytest.mark.parametrize(
    "paid",
    [{"net_amount": 100, "total_amount": 3500}, {"currency": "gbp"}],
    ids=["too low (whatever the tax)", "another currency"],
)
def test_a_polar_renewal_that_does_not_pay_the_price_extends_nothing(paid: dict[str, Any]) -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())
    paying = rig.billing()

    receipt = rig.service.receive(polar_order("evt-renewal", **paid))

    assert (receipt.outcomes[Outcome.IGNORED], rig.billing()) == (1, paying)
    assert refusal(rig)["event"] == "order.paid"


def test_a_polar_renewal_of_the_price_extends_the_paid_period() -> None:
    rig = PaymentRig()
    rig.service.receive(polar_request())

    receipt = rig.service.receive(polar_order("evt-renewal"))

    assert (receipt.outcomes[Outcome.RECORDED], rig.billing()[2]) == (1, "2027-01-30T07:58:10.000Z")
    assert rig.topic.published == []


def test_when_the_alert_cannot_be_published_the_mark_is_removed_so_the_retry_alerts() -> None:
    rig = PaymentRig()
    rig.topic.failure = DependencyError("alert topic unavailable: EndpointConnectionError")

    with pytest.raises(DependencyError):
        rig.service.receive(polar_request(amount=100))

    assert (rig.ledger.marks, rig.billing()[0]) == ({}, "free")
    rig.topic.failure = None
    rig.service.receive(polar_request(amount=100))
    assert refusal(rig)["tenantId"] == TENANT_ID
