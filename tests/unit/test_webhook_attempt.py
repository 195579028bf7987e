"""One webhook attempt: the tenant's secrets sign the exact payload bytes, and the sender's outcome
becomes the engine's AttemptOutcome; then the engine's view of webhook jobs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from msgspec.structs import replace

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.store.conversions import request_from_document
from herald.adapters.vault import Vault
from herald.domain.attempts import AttemptOutcome
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import Channel, JobStatus, compact_json
from herald.domain.notifications import NotificationRequest, WebhookNotification
from herald.domain.plans import Plan
from herald.domain.webhooks import OutboundWebhook, WebhookExchange, WebhookOutcome
from herald.observability import metrics
from herald.services.delivery import DeliveryEngine, DeliveryPolicy, Handled
from herald.services.tenant_directory import TenantDirectory
from herald.services.webhook_attempt import WebhookAttempt
from herald.services.webhook_headers import sealed
from tests.fakes.common import ManualClock
from tests.fakes.jobs import FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.queues import FakeAlerts, FakeDeadLetters, FakeQueue
from tests.fakes.tenants import FakeTenantTable

TENANT = "tenant-hooks"
OTHER = "tenant-other"
SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
RECEIVER_TOKEN = "Bearer receiver-credential-7f3a"
WEBHOOK: dict[str, Any] = {
    "url": "https://hooks.example.com/herald",
    "method": "PUT",
    "headers": {"Authorization": RECEIVER_TOKEN, "X-Tenant-Ref": "acct-42"},
    "payload": {"event": "invoice.paid", "amount": 1999, "note": "café ✓", "items": [1, 2]},
}


@pytest.fixture(autouse=True)
def _clear_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


@dataclass
class FakeSender:
    """Stands in for ``send_webhook``: records each call and answers with the scripted outcomes."""

    outcomes: list[WebhookOutcome] = field(default_factory=lambda: [WebhookOutcome(ok=True, status_code=200)])
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, hook: OutboundWebhook, *, secrets: Sequence[str]) -> WebhookOutcome:
        self.calls.append({"hook": hook, "secrets": list(secrets)})
        return self.outcomes[min(len(self.calls), len(self.outcomes)) - 1]


@dataclass
class Hooks:
    tenants: FakeTenantTable
    sender: FakeSender
    attempt: WebhookAttempt
    vault: Vault

    def run(self, payload: dict[str, Any] = WEBHOOK, tenant: str = TENANT) -> AttemptOutcome:
        return self.run_request(request_from_document(Channel.WEBHOOK, payload), tenant)

    def run_request(self, request: NotificationRequest, tenant: str = TENANT) -> AttemptOutcome:
        message = JobMessage("job-7", tenant, Channel.WEBHOOK, Plan.INDIE, 0, request)
        return self.attempt.run(message, request, Claim(1, 3))


@pytest.fixture
def hooks() -> Hooks:
    vault = Vault(InMemoryKeyManager(), DataKeyCache(max_entries=16, ttl_seconds=300))
    tenants = FakeTenantTable()
    tenants.add_tenant(TENANT, Plan.INDIE, secrets=vault, signing_secret=SIGNING_SECRET)
    tenants.add_tenant(
        OTHER, Plan.INDIE, secrets=vault, signing_secret="whsec_b3RoZXItdGVuYW50LXNlY3JldC0xMjM0NTY="
    )
    sender = FakeSender()
    attempt = WebhookAttempt(directory=TenantDirectory(tenants, vault), sender=sender)
    return Hooks(tenants, sender, attempt, vault)


# ---------------------------------------------------------------- the request


def test_given_a_webhook_job_when_attempted_then_the_compact_payload_is_signed_with_the_tenant_secret(
    hooks: Hooks,
) -> None:
    hooks.run()

    [call] = hooks.sender.calls
    hook: OutboundWebhook = call["hook"]
    assert hook.body == compact_json(WEBHOOK["payload"])
    assert hook.body == '{"event":"invoice.paid","amount":1999,"note":"café ✓","items":[1,2]}'.encode()
    assert (hook.job_id, hook.url, hook.method) == ("job-7", WEBHOOK["url"], "PUT")
    assert dict(hook.headers) == WEBHOOK["headers"]
    assert call["secrets"] == [SIGNING_SECRET]


def test_given_no_method_or_headers_when_attempted_then_it_posts_without_custom_headers(hooks: Hooks) -> None:
    hooks.run({"url": WEBHOOK["url"], "payload": {"a": 1}})

    hook: OutboundWebhook = hooks.sender.calls[0]["hook"]
    assert (hook.method, dict(hook.headers), hook.body) == ("POST", {}, b'{"a":1}')


def test_given_a_tenant_without_a_secret_when_attempted_then_it_sends_unsigned(hooks: Hooks) -> None:
    hooks.tenants.add_tenant("tenant-plain", Plan.INDIE)

    hooks.run(tenant="tenant-plain")

    assert hooks.sender.calls[0]["secrets"] == []


# ---------------------------------------------------------------- outcome mapping

ANSWERED_OK = WebhookExchange(request_headers={"webhook-id": "job-7"}, body_excerpt='{"ok":true}')
ANSWERED_OOPS = WebhookExchange(response_headers={"Retry-After": "5"}, body_excerpt="oops")


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        (
            WebhookOutcome(ok=True, status_code=200, latency_ms=12, exchange=ANSWERED_OK),
            AttemptOutcome(delivered=True, response_status=200, latency_ms=12, exchange=ANSWERED_OK),
        ),
        (
            WebhookOutcome(
                ok=False,
                status_code=500,
                exchange=ANSWERED_OOPS,
                error_class="transient",
                error_message="the endpoint answered HTTP 500",
            ),
            AttemptOutcome(
                delivered=False,
                error_message="the endpoint answered HTTP 500",
                response_status=500,
                exchange=ANSWERED_OOPS,
                receiver_outage=True,
            ),
        ),
        (
            WebhookOutcome(
                ok=False,
                status_code=404,
                error_class="permanent",
                error_message="the endpoint answered HTTP 404",
            ),
            AttemptOutcome(
                delivered=False,
                error_message="the endpoint answered HTTP 404",
                final=True,
                caused_by_tenant=True,
                response_status=404,
            ),
        ),
        (
            WebhookOutcome(
                ok=False,
                status_code=301,
                error_class="permanent",
                error_message="the endpoint answered HTTP 301; redirects are not followed",
            ),
            AttemptOutcome(
                delivered=False,
                error_message="the endpoint answered HTTP 301; redirects are not followed",
                final=True,
                caused_by_tenant=True,
                response_status=301,
            ),
        ),
        (
            WebhookOutcome(
                ok=False,
                status_code=429,
                error_class="transient",
                error_message="the endpoint answered HTTP 429",
                retry_after_seconds=120.0,
            ),
            AttemptOutcome(
                delivered=False,
                error_message="the endpoint answered HTTP 429",
                retry_after_seconds=120.0,
                response_status=429,
                receiver_outage=True,
            ),
        ),
        (
            WebhookOutcome(
                ok=False, error_class="transient", error_message="the endpoint refused the connection"
            ),
            AttemptOutcome(
                delivered=False, error_message="the endpoint refused the connection", receiver_outage=True
            ),
        ),
    ],
    ids=["ok", "transient-500", "permanent-404", "redirect", "retry-after", "network"],
)
def test_given_a_sender_outcome_when_attempted_then_it_maps_to_the_engines_outcome(
    hooks: Hooks, sent: WebhookOutcome, expected: AttemptOutcome
) -> None:
    hooks.sender.outcomes = [sent]

    assert hooks.run() == expected


def test_given_the_tenant_table_is_down_when_attempted_then_the_attempt_is_transient_and_nothing_is_sent(
    hooks: Hooks,
) -> None:
    hooks.tenants.unavailable = True

    outcome = hooks.run()

    assert (outcome.delivered, outcome.final) == (False, False)
    assert outcome.error_message is not None
    assert outcome.error_message.startswith("signing secret unavailable")
    assert hooks.sender.calls == []


def test_given_a_signing_secret_sealed_for_another_tenant_when_attempted_then_it_is_refused_for_good(
    hooks: Hooks,
) -> None:
    """A secret record copied from another tenant's row must not open (encryption context binds it)."""
    profiles = hooks.tenants.profiles
    profiles[TENANT] = replace(profiles[TENANT], signing_secret=profiles[OTHER].signing_secret)

    outcome = hooks.run()

    assert outcome == AttemptOutcome(
        delivered=False, error_message="the signing secret cannot be decrypted", final=True
    )
    assert hooks.sender.calls == []


# ---------------------------------------------------------------- the engine with webhooks


@dataclass
class WebhookRig:
    store: FakeJobTable
    queue: FakeQueue
    dead_letters: FakeDeadLetters
    engine: DeliveryEngine

    def submit(self) -> JobMessage:
        self.store.add_job(TENANT, "job-7", WEBHOOK, channel=Channel.WEBHOOK)
        return JobMessage(
            "job-7",
            TENANT,
            Channel.WEBHOOK,
            Plan.INDIE,
            0,
            request_from_document(Channel.WEBHOOK, WEBHOOK),
            5,
            "2025-01-01T00:00:00.000Z",
        )


@pytest.fixture
def rig(hooks: Hooks) -> WebhookRig:
    store, queue, dead_letters = FakeJobTable(), FakeQueue(), FakeDeadLetters()
    engine = DeliveryEngine(
        DeliveryPolicy(max_attempts=3, retry_base_delay_seconds=30),
        store=store,
        queue=queue,
        dead_letters=dead_letters,
        alerts=FakeAlerts(),
        attempt=hooks.attempt,
        clock=ManualClock(),
    )
    return WebhookRig(store, queue, dead_letters, engine)


def test_given_the_endpoint_answers_200_when_handled_then_the_job_completes_without_a_provider(
    hooks: Hooks, rig: WebhookRig
) -> None:
    answered = WebhookExchange(request_headers={"webhook-id": "job-7"}, body_excerpt="accepted")
    hooks.sender.outcomes = [WebhookOutcome(ok=True, status_code=202, latency_ms=5, exchange=answered)]

    handled = rig.engine.handle(rig.submit())

    assert handled == Handled("job-7", "completed", 1)
    state = rig.store.state(TENANT, "job-7")
    assert state.status == "completed"
    assert state.used_provider is None
    [log] = state.delivery_logs
    assert (log.status, log.response_status, log.latency_ms, log.exchange) == ("success", 202, 5, answered)
    assert log.used_provider is None


def test_given_the_endpoint_keeps_failing_when_attempts_run_out_then_the_job_fails_without_a_dead_letter(
    hooks: Hooks, rig: WebhookRig
) -> None:
    hooks.sender.outcomes = [
        WebhookOutcome(
            ok=False, status_code=503, error_class="transient", error_message="the endpoint answered HTTP 503"
        )
    ]

    results = [rig.engine.handle(rig.submit())]
    while rig.queue.sent:
        results.append(rig.engine.handle(rig.queue.take().message))

    assert [(result.result, result.attempt) for result in results] == [
        ("retrying", 1),
        ("retrying", 2),
        ("failed", 3),
    ]
    assert len(hooks.sender.calls) == 3
    # The receiver's outage is the tenant's to fix: no operator copy, no alarm.
    assert rig.dead_letters.records == []
    state = rig.store.state(TENANT, "job-7")
    assert (state.status, state.error_message) == (JobStatus.FAILED, "the endpoint answered HTTP 503")
    # The tenant's own view keeps the request as accepted.
    kept = rig.store.request(TENANT, "job-7").notification
    assert isinstance(kept, WebhookNotification)
    assert kept.headers == WEBHOOK["headers"]
    assert [log.response_status for log in state.delivery_logs] == [503] * 3


def test_given_a_disabled_tenant_when_attempted_then_nothing_is_sent_and_the_job_ends(hooks: Hooks) -> None:
    hooks.tenants.profiles[TENANT] = replace(hooks.tenants.profiles[TENANT], status="disabled")

    outcome = hooks.run()

    assert hooks.sender.calls == []
    assert (outcome.delivered, outcome.final, outcome.caused_by_tenant) == (False, True, True)
    assert outcome.error_message == "the tenant is disabled (tenant_disabled); the job was not sent"


def test_given_the_secret_deleted_after_a_delivery_when_attempted_then_the_next_one_is_unsigned(
    hooks: Hooks,
) -> None:
    """A warm worker keeps no profile: a change made through the API holds for the next webhook."""
    hooks.run()
    hooks.tenants.profiles[TENANT] = replace(hooks.tenants.profiles[TENANT], signing_secret=None)

    hooks.run()

    assert [call["secrets"] for call in hooks.sender.calls] == [[SIGNING_SECRET], []]


def test_given_headers_sealed_at_acceptance_when_attempted_then_the_receiver_gets_them_in_clear(
    hooks: Hooks,
) -> None:
    request = sealed(hooks.vault, TENANT, request_from_document(Channel.WEBHOOK, WEBHOOK))

    outcome = hooks.run_request(request)

    assert outcome.delivered
    [call] = hooks.sender.calls
    assert dict(call["hook"].headers) == WEBHOOK["headers"]


def test_given_headers_sealed_for_another_tenant_when_attempted_then_nothing_is_sent(hooks: Hooks) -> None:
    """A record copied into another tenant's job does not open: the job fails, nothing leaves."""
    request = sealed(hooks.vault, OTHER, request_from_document(Channel.WEBHOOK, WEBHOOK))

    outcome = hooks.run_request(request, tenant=TENANT)

    assert hooks.sender.calls == []
    assert (outcome.delivered, outcome.final) == (False, True)
    assert outcome.error_message == "the webhook's headers cannot be decrypted"
