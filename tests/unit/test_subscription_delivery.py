"""A delivery of an event: sent to the subscription's URL as it is now, with its headers, signed
with the subscription's own secrets, and judged by the subscription's own breaker."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest
from msgspec.structs import replace

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.vault import Vault
from herald.domain.attempts import AttemptOutcome
from herald.domain.breakers import ENDPOINT_POLICY, Breaker, BreakerKey, BreakerKind, BreakerState
from herald.domain.events import Event, Subscription, SubscriptionSecrets
from herald.domain.job_records import Claim, JobMessage
from herald.domain.jobs import Channel, compact_json
from herald.domain.notifications import DeliveryRef, NotificationRequest, SealedHeaders, WebhookNotification
from herald.domain.plans import Plan
from herald.domain.secrets import Purpose
from herald.domain.webhooks import WebhookOutcome
from herald.observability import metrics
from herald.services.health import BreakerBoard, EndpointHealth
from herald.services.tenant_directory import TenantDirectory
from herald.services.webhook_attempt import (
    EVENT_GONE,
    SUBSCRIPTION_DELETED,
    SUBSCRIPTION_DISABLED,
    WebhookAttempt,
)
from tests.fakes.breakers import FakeBreakers
from tests.fakes.common import ManualClock
from tests.fakes.console import FakeMail
from tests.fakes.events import FakeEventStore
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.tenants import FakeTenantTable
from tests.unit.test_webhook_attempt import FakeSender

TENANT = "tenant-subscribed"
ACCOUNT_SECRET = "whsec_YWNjb3VudC1zZWNyZXQtbm90LWZvci1ldmVudHM="
SUBSCRIPTION_SECRET = "whsec_c3Vic2NyaXB0aW9uLXNlY3JldC0xMjM0NTY3OA=="
OLD_SUBSCRIPTION_SECRET = "whsec_b2xkLXN1YnNjcmlwdGlvbi1zZWNyZXQtMTIzNDU="
SUB = "sub_00000000000000aa"
BODY = {
    "id": "evt_1",
    "type": "order.paid",
    "timestamp": "2026-12-05T09:30:00.000Z",
    "data": {"orderId": "o_1"},
}


@pytest.fixture(autouse=True)
def _clear_metrics() -> Iterator[None]:
    yield
    metrics.clear_metrics()


class Rig:
    def __init__(self) -> None:
        self.vault = Vault(InMemoryKeyManager(), DataKeyCache(max_entries=16, ttl_seconds=300))
        self.tenants = FakeTenantTable()
        self.tenants.add_tenant(TENANT, Plan.STARTUP, secrets=self.vault, signing_secret=ACCOUNT_SECRET)
        self.breakers = FakeBreakers(self.tenants)
        self.clock = ManualClock()
        self.mail = FakeMail()
        self.sender = FakeSender()
        health = EndpointHealth(BreakerBoard(self.breakers, ENDPOINT_POLICY, clock=self.clock), self.mail)
        self.events = FakeEventStore()
        self.attempt = WebhookAttempt(
            directory=TenantDirectory(self.tenants, self.vault),
            sender=self.sender,
            health=health,
            events=self.events,
        )

    def subscribe(self, url: str = "https://hooks.example.com/now", **fields: object) -> Subscription:
        headers = SealedHeaders(
            ("X-Customer",), self.vault.seal(TENANT, Purpose.WEBHOOK_HEADERS, '{"X-Customer":"c-9"}')
        )
        subscription = Subscription(
            subscription_id=SUB,
            url=url,
            event_types=("order.paid",),
            secrets=SubscriptionSecrets(
                self.vault.seal(TENANT, Purpose.SUBSCRIPTION_SECRET, SUBSCRIPTION_SECRET)
            ),
            created_at="2026-12-01T00:00:00.000Z",
            updated_at="2026-12-01T00:00:00.000Z",
            headers=headers,
        )
        subscription = replace(subscription, **fields) if fields else subscription
        self.breakers.subscriptions[(TENANT, SUB)] = subscription
        return subscription

    def run(self, body: Mapping[str, object] = BODY) -> AttemptOutcome:
        """``body``: {} for a delivery read from the table (its job item does not repeat the body)."""
        webhook = WebhookNotification(
            url="https://hooks.example.com/then",
            payload=body,
            delivery=DeliveryRef("evt_1", SUB, "order.paid"),
        )
        request = NotificationRequest(webhook)
        message = JobMessage("job-d", TENANT, Channel.WEBHOOK, Plan.STARTUP, 0, request)
        return self.attempt.run(message, request, Claim(1, 3))


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_given_a_delivery_then_it_goes_to_the_subscriptions_url_now_with_its_headers_and_its_own_secret(
    rig: Rig,
) -> None:
    rig.subscribe()

    outcome = rig.run()

    [call] = rig.sender.calls
    assert outcome.delivered is True
    assert (call["hook"].url, dict(call["hook"].headers)) == (
        "https://hooks.example.com/now",
        {"X-Customer": "c-9"},
    )
    assert call["hook"].body == compact_json(BODY)
    assert call["secrets"] == [SUBSCRIPTION_SECRET]


def test_given_a_rotation_in_its_overlap_then_both_subscription_secrets_sign_oldest_first(rig: Rig) -> None:
    old = rig.vault.seal(TENANT, Purpose.SUBSCRIPTION_SECRET, OLD_SUBSCRIPTION_SECRET)
    current = rig.vault.seal(TENANT, Purpose.SUBSCRIPTION_SECRET, SUBSCRIPTION_SECRET)
    rig.subscribe(secrets=SubscriptionSecrets(current, old, "2999-01-01T00:00:00.000Z"))

    rig.run()

    assert rig.sender.calls[0]["secrets"] == [OLD_SUBSCRIPTION_SECRET, SUBSCRIPTION_SECRET]


def test_given_another_tenants_sealed_secret_then_it_does_not_open_and_nothing_is_sent(rig: Rig) -> None:
    stolen = rig.vault.seal("tenant-other", Purpose.SUBSCRIPTION_SECRET, SUBSCRIPTION_SECRET)
    rig.subscribe(secrets=SubscriptionSecrets(stolen))

    outcome = rig.run()

    assert rig.sender.calls == []
    assert outcome.final is True
    assert outcome.error_message == "the subscription's signing secret cannot be decrypted"


def test_given_a_deleted_subscription_then_the_delivery_ends_unsent_saying_so(rig: Rig) -> None:
    outcome = rig.run()

    assert rig.sender.calls == []
    assert (outcome.final, outcome.error_message) == (True, SUBSCRIPTION_DELETED)


def test_given_a_disabled_subscription_then_the_delivery_ends_unsent_naming_the_subscription(
    rig: Rig,
) -> None:
    rig.subscribe()
    key = BreakerKey(BreakerKind.SUBSCRIPTION, TENANT, SUB)
    rig.breakers.stored[key] = Breaker(key, state=BreakerState.DISABLED, version=1)

    outcome = rig.run()

    assert rig.sender.calls == []
    assert outcome.error_message == SUBSCRIPTION_DISABLED
    assert "subscription_disabled" in SUBSCRIPTION_DISABLED


def test_given_five_failures_then_the_subscriptions_breaker_opens_not_its_origins(rig: Rig) -> None:
    rig.subscribe()
    rig.sender.outcomes = [
        WebhookOutcome(ok=False, status_code=503, error_class="transient", error_message="503")
    ]

    for _ in range(5):
        rig.run()

    opened = rig.breakers.stored[BreakerKey(BreakerKind.SUBSCRIPTION, TENANT, SUB)]
    assert opened.state is BreakerState.OPEN
    assert not any(key.kind is BreakerKind.ENDPOINT for key in rig.breakers.stored)
    deferred = rig.run()
    assert deferred.defer_seconds is not None
    assert len(rig.sender.calls) == 5


def test_given_five_days_of_failures_then_the_notice_names_the_subscription_and_its_url(rig: Rig) -> None:
    rig.subscribe()
    key = BreakerKey(BreakerKind.SUBSCRIPTION, TENANT, SUB)
    opened_at = int(rig.clock.now) - 5 * 86400 - 60
    rig.breakers.stored[key] = Breaker(
        key, state=BreakerState.OPEN, opened_at=opened_at, open_until=opened_at + 60, version=3
    )
    rig.sender.outcomes = [
        WebhookOutcome(ok=False, status_code=503, error_class="transient", error_message="503")
    ]

    outcome = rig.run()

    assert rig.breakers.stored[key].state is BreakerState.DISABLED
    assert outcome.error_message == SUBSCRIPTION_DISABLED
    [(_, subject, text)] = rig.mail.sent
    assert subject == f"Webhook subscription disabled: {SUB}"
    assert text.startswith(
        f"Herald disabled your webhook subscription {SUB} (https://hooks.example.com/now): "
    )
    assert f"POST /api/v1/subscriptions/{SUB}/enable" in text


def test_given_a_delivery_read_from_the_table_then_its_body_is_the_events(rig: Rig) -> None:
    rig.subscribe()
    event = Event("evt_1", TENANT, "order.paid", {"orderId": "o_1"}, "2026-12-05T09:30:00.000Z")
    rig.events.insert(event, None)

    outcome = rig.run(body={})

    assert outcome.delivered is True
    assert rig.sender.calls[0]["hook"].body == compact_json(BODY)


def test_given_a_delivery_whose_event_is_gone_then_it_ends_unsent_saying_so(rig: Rig) -> None:
    rig.subscribe()

    outcome = rig.run(body={})

    assert rig.sender.calls == []
    assert (outcome.final, outcome.error_message) == (True, EVENT_GONE)
    assert (
        outcome.error_message
        == "the event is past its retention (event_not_found); the delivery was not sent"
    )
