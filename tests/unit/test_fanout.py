"""Sending an event and fanning it out: who receives it, what it is charged, and that a fan-out that
fails anywhere and runs again makes every delivery exactly once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from herald.domain.account import TenantContext
from herald.domain.breakers import BreakerState
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.events import (
    EventRequest,
    EventType,
    Subscription,
    SubscriptionSecrets,
    delivery_job_id,
    fanout_pages,
)
from herald.domain.jobs import Channel, QueuePriority
from herald.domain.notifications import WebhookNotification
from herald.domain.plans import Plan
from herald.domain.secrets import SealedSecret
from herald.services.auth import Credentials
from herald.services.events import EventService
from herald.services.fanout import FanoutWorker
from tests.fakes.common import full_grant
from tests.fakes.events import (
    FakeBatchQueue,
    FakeCatalog,
    FakeDeliveryJobs,
    FakeEventStore,
    FakeFanoutQueue,
    pending,
)
from tests.fakes.jobs import FakeCounters

TENANT = "tenant-events"
NOW = datetime(2026, 12, 5, 9, 30, tzinfo=UTC)
EARLIER = "2026-12-01T08:00:00.000Z"
SEALED = SealedSecret(1, b"wrapped", b"nonce-12byte", b"ciphertext")
PAID = {"orderId": "o_42", "amount": 2900}
KEY = Credentials(api_key="hk_test")


def subscription(
    number: int,
    types: tuple[str, ...] = ("order.paid",),
    channels: tuple[str, ...] = (),
    created_at: str = EARLIER,
) -> Subscription:
    return Subscription(
        subscription_id=f"sub_{number:016x}",
        url=f"https://hooks{number}.example.com/herald",
        event_types=types,
        secrets=SubscriptionSecrets(SEALED),
        created_at=created_at,
        updated_at=created_at,
        channels=channels,
    )


class Rig:
    def __init__(self, plan: str = Plan.STARTUP, quota_limit: int | None = None) -> None:
        self.tenant = TenantContext(TENANT, plan, "active", full_grant(), NOW, quota_limit=quota_limit)
        self.catalog = FakeCatalog(
            {"order.paid": EventType("order.paid", EARLIER, EARLIER)}, {"order.paid": ("orderId",)}
        )
        self.store = FakeEventStore()
        self.counters = FakeCounters()
        self.fanout_queue = FakeFanoutQueue()
        self.jobs = FakeDeliveryJobs()
        self.queue = FakeBatchQueue()
        self.service = EventService(
            authenticate=lambda _caller: self.tenant,
            catalog=lambda: self.catalog,
            events=self.store,
            counters=self.counters,
            fanout=self.fanout_queue,
            clock=lambda: NOW,
        )
        self.worker = FanoutWorker(events=self.store, jobs=self.jobs, queue=self.queue, max_attempts=3)

    def send(self, request: EventRequest | None = None, key: str | None = None) -> str:
        accepted = self.service.send(KEY, request or EventRequest("order.paid", PAID), key)
        return accepted.event_id

    def fan_out(self) -> None:
        """Every queued page, in order, each until it succeeds (as SQS redelivers a failed one)."""
        while self.fanout_queue.pages:
            page = self.fanout_queue.pages[0]
            try:
                self.worker.run(page)
            except DependencyError:
                continue
            self.fanout_queue.pages.pop(0)

    def delivered_to(self) -> list[str]:
        return sorted(_webhook(message.request).url for message, _ in self.queue.sent)


def _webhook(request: object) -> WebhookNotification:
    notification = getattr(request, "notification", None)
    assert isinstance(notification, WebhookNotification)
    return notification


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_given_three_subscriptions_when_an_event_is_sent_then_each_receiving_one_gets_one_delivery(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.store.add(TENANT, subscription(2))
    rig.store.add(TENANT, subscription(3, types=("order.refunded",)))

    accepted = rig.service.send(KEY, EventRequest("order.paid", PAID))
    rig.fan_out()

    assert (accepted.type, accepted.subscriptions) == ("order.paid", 2)
    assert rig.delivered_to() == ["https://hooks1.example.com/herald", "https://hooks2.example.com/herald"]
    message, priority = rig.queue.sent[0]
    webhook = _webhook(message.request)
    assert priority is QueuePriority.NORMAL
    assert message.job_id == delivery_job_id(TENANT, accepted.event_id, "sub_0000000000000001")
    assert webhook.payload == {
        "id": accepted.event_id,
        "type": "order.paid",
        "timestamp": "2026-12-05T09:30:00.000Z",
        "data": PAID,
    }
    assert webhook.delivery is not None
    assert webhook.delivery.subscription_id == "sub_0000000000000001"


def test_given_channels_when_sent_then_only_subscriptions_sharing_one_or_naming_none_receive_it(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1, channels=("cust_1",)))
    rig.store.add(TENANT, subscription(2, channels=("cust_2",)))
    rig.store.add(TENANT, subscription(3))

    accepted = rig.service.send(KEY, EventRequest("order.paid", PAID, ("cust_1",)))
    rig.fan_out()

    assert accepted.subscriptions == 2
    assert rig.delivered_to() == ["https://hooks1.example.com/herald", "https://hooks3.example.com/herald"]


def test_given_a_disabled_subscription_when_sent_then_it_is_neither_counted_nor_delivered(rig: Rig) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.store.add(TENANT, subscription(2), state=BreakerState.DISABLED)
    rig.store.add(TENANT, subscription(3), state=BreakerState.OPEN)

    accepted = rig.service.send(KEY, EventRequest("order.paid", PAID))
    rig.fan_out()

    # An open breaker delays deliveries (the worker's gate); only a disabled one stops them.
    assert accepted.subscriptions == 2
    assert rig.delivered_to() == ["https://hooks1.example.com/herald", "https://hooks3.example.com/herald"]


def test_given_a_payload_the_schema_refuses_when_sent_then_nothing_is_stored_charged_or_queued(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1))

    with pytest.raises(HeraldError, match="The payload lacks orderId"):
        rig.send(EventRequest("order.paid", {"amount": 1}))

    assert (rig.store.events, rig.fanout_queue.pages, rig.counters.calls) == ({}, [], [])


def test_given_an_event_for_n_subscriptions_then_the_quota_counts_n_webhooks_and_the_rate_one_request(
    rig: Rig,
) -> None:
    for number in range(1, 6):
        rig.store.add(TENANT, subscription(number))

    rig.send()

    [period] = {period for _, period, _ in rig.counters.jobs}
    assert rig.counters.usage(TENANT, period).webhooks == 5
    assert rig.counters.jobs[(TENANT, period, "total")] == 5
    assert sum(rig.counters.requests.values()) == 1


def test_given_a_quota_too_small_for_every_delivery_when_sent_then_it_is_refused_naming_what_it_needs() -> (
    None
):
    rig = Rig(plan=Plan.INDIE, quota_limit=3)
    for number in range(1, 6):
        rig.store.add(TENANT, subscription(number))

    with pytest.raises(HeraldError) as refused:
        rig.send()

    assert refused.value.code is ErrorCode.QUOTA_EXCEEDED
    assert "(0 of 3; this request needs 5)" in refused.value.message
    assert rig.store.events == {}


def test_given_no_subscription_when_sent_then_the_event_is_kept_with_nothing_to_fan_out(rig: Rig) -> None:
    accepted = rig.service.send(KEY, EventRequest("order.paid", PAID))

    assert accepted.subscriptions == 0
    assert rig.fanout_queue.pages == []
    assert rig.store.get(TENANT, accepted.event_id) is not None


def test_given_250_subscriptions_then_three_pages_cover_each_once(rig: Rig) -> None:
    ids = [f"sub_{number:016x}" for number in range(250)]

    ends = fanout_pages(ids)

    assert ends == (ids[99], ids[199], ids[249])


def test_given_a_fan_out_of_1000_that_fails_halfway_in_writes_and_in_queueing_then_each_delivery_is_made_once(
    rig: Rig,
) -> None:
    for number in range(1000):
        rig.store.add(TENANT, subscription(number))
    event_id = rig.send()
    rig.jobs.fail_at = 37  # the 38th put of the first page times out
    rig.queue.fail_after = 450  # SQS refuses a message of the fifth page

    rig.fan_out()

    queued_ids = [message.job_id for message, _ in rig.queue.sent]
    expected = {delivery_job_id(TENANT, event_id, f"sub_{number:016x}") for number in range(1000)}
    assert set(rig.jobs.written) == expected
    assert set(queued_ids) == expected
    # The page that failed to queue queued its first messages twice: the worker's claim sends once.
    assert len(queued_ids) == 1000 + 50


def test_given_a_page_run_again_after_its_jobs_were_claimed_then_it_queues_nothing_again(rig: Rig) -> None:
    for number in range(3):
        rig.store.add(TENANT, subscription(number))
    rig.send()
    page = rig.fanout_queue.pages[0]
    rig.worker.run(page)
    rig.jobs.claimed.update(rig.jobs.written)

    again = rig.worker.run(page)

    assert (again.deliveries, again.queued, len(rig.queue.sent)) == (3, 0, 3)


def test_given_a_subscription_created_after_the_event_when_its_page_runs_then_it_is_not_delivered(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.send()
    later = (NOW + timedelta(seconds=1)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    rig.store.add(TENANT, subscription(0, created_at=later))

    rig.fan_out()

    assert rig.delivered_to() == ["https://hooks1.example.com/herald"]


def test_given_a_free_tenant_when_fanned_out_then_its_deliveries_go_to_the_low_queue() -> None:
    rig = Rig(plan=Plan.FREE)
    rig.store.add(TENANT, subscription(1))

    rig.send()
    rig.fan_out()

    assert [priority for _, priority in rig.queue.sent] == [QueuePriority.LOW]


def test_given_an_idempotency_key_repeated_when_sent_again_then_409_and_the_fan_out_is_queued_again(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1))
    event_id = rig.send(key="order-42-paid")
    rig.fanout_queue.pages.clear()  # as if the first fan-out was never queued (a crash)

    with pytest.raises(HeraldError) as repeated:
        rig.send(key="order-42-paid")
    rig.fan_out()

    assert repeated.value.code is ErrorCode.DUPLICATE_REQUEST
    assert repeated.value.extra == {"eventId": event_id}
    assert rig.delivered_to() == ["https://hooks1.example.com/herald"]
    # The repeat's charge was taken back: one delivery counted.
    [period] = {period for _, period, _ in rig.counters.jobs}
    assert rig.counters.usage(TENANT, period).webhooks == 1


def test_given_an_idempotency_key_reused_for_another_event_then_422_and_nothing_queued(rig: Rig) -> None:
    rig.send(key="k-1")
    with pytest.raises(HeraldError) as reused:
        rig.send(EventRequest("order.paid", {"orderId": "o_43"}), key="k-1")

    assert reused.value.code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    assert reused.value.message == "This idempotency key was already used with a different event."


def test_given_the_fan_out_queue_refuses_when_sent_then_503_names_the_event_and_how_to_retry(
    rig: Rig,
) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.fanout_queue.failure = DependencyError("queue fanout unavailable: throttled")

    with pytest.raises(HeraldError) as refused:
        rig.send(key="k-2")

    assert refused.value.code is ErrorCode.QUEUE_UNAVAILABLE
    assert "send the same request again with its idempotency key" in refused.value.message
    assert set(refused.value.extra) == {"eventId"}


def test_given_an_event_when_read_then_each_delivery_shows_its_job_state(rig: Rig) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.store.add(TENANT, subscription(2))
    event_id = rig.send()
    rig.fan_out()
    first = rig.jobs.written[delivery_job_id(TENANT, event_id, "sub_0000000000000001")]
    rig.store.states[first.job_id] = pending(first)

    detail = rig.service.get(TENANT, event_id)

    assert [(d.subscription_id, d.state is not None) for d in detail.deliveries] == [
        ("sub_0000000000000001", True),
        ("sub_0000000000000002", False),
    ]
    assert detail.next_cursor is None


def test_given_another_tenants_event_id_when_read_then_it_is_not_found(rig: Rig) -> None:
    event_id = rig.send()

    with pytest.raises(HeraldError) as missing:
        rig.service.get("tenant-other", event_id)

    assert (missing.value.code, missing.value.message) == (
        ErrorCode.EVENT_NOT_FOUND,
        "No event with this id.",
    )


def test_given_a_delivery_when_queued_then_it_travels_as_a_webhook_job(rig: Rig) -> None:
    rig.store.add(TENANT, subscription(1))
    rig.send()
    rig.fan_out()

    assert rig.queue.sent[0][0].channel is Channel.WEBHOOK


def test_given_a_delivery_then_its_job_item_holds_no_body_and_its_message_carries_the_events(
    rig: Rig,
) -> None:
    """The event's payload is written once, in the event: each job item refers to it."""
    rig.store.add(TENANT, subscription(1))
    event_id = rig.send()
    rig.fan_out()

    [stored] = rig.jobs.written.values()
    [(message, _)] = rig.queue.sent
    assert _webhook(stored.request).payload == {}
    assert _webhook(message.request).payload["data"] == PAID
    ref = _webhook(stored.request).delivery
    assert ref == _webhook(message.request).delivery
    assert ref is not None
    assert ref.event_id == event_id
