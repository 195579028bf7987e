"""A rate-limited subscription's deliveries: each reserves one send slot, a slot ahead sends the
message back to its queue holding it (no claim, no attempt), a short wait is slept in the worker."""

from __future__ import annotations

import random

import pytest

from herald.domain.job_records import JobMessage
from herald.domain.jobs import Channel
from herald.domain.notifications import DeliveryRef, NotificationRequest, WebhookNotification
from herald.domain.pacing import interval_ms, queue_delay_seconds
from herald.services.pacing import Pacer
from tests.fakes.common import ManualClock
from tests.fakes.events import FakeRateSlots

TENANT = "tenant-paced"


def delivery(number: int, rate: int | None, slot: int | None = None) -> JobMessage:
    webhook = WebhookNotification(
        url="https://hooks.example.com/in",
        payload={"n": number},
        delivery=DeliveryRef("evt_1", "sub_00000000000000aa", "order.paid", rate),
    )
    return JobMessage(
        f"job-{number}", TENANT, Channel.WEBHOOK, "startup", 0, NotificationRequest(webhook), rate_slot=slot
    )


class Rig:
    def __init__(self) -> None:
        self.clock = ManualClock(1_764_900_000.0)
        self.slots = FakeRateSlots()
        self.slept: list[float] = []
        self.pacer = Pacer(self.slots, clock=self.clock, sleep=self.slept.append)


def test_given_rates_then_slots_are_one_interval_apart_and_waits_are_whole_seconds_up_to_900() -> None:
    assert (interval_ms(1), interval_ms(10), interval_ms(1000)) == (1000, 100, 1)
    assert (queue_delay_seconds(1), queue_delay_seconds(1001), queue_delay_seconds(10_000_000)) == (1, 2, 900)


@pytest.mark.parametrize("seed", range(5))
def test_given_a_burst_and_a_busy_worker_then_each_delivery_starts_in_its_own_slot_interval(
    seed: int,
) -> None:
    """Twenty deliveries at 2 per second, returning from their queue up to 1.5 s late: every one
    starts inside the interval of a slot of its own, and the intervals never overlap."""
    rig, late = Rig(), random.Random(seed)
    due = [(int(rig.clock() * 1000), number, delivery(number, 2)) for number in range(20)]
    starts: list[tuple[int, int]] = []  # (start time, slot it started in)
    while due:
        due.sort(key=lambda entry: (entry[0], entry[1]))
        at_ms, number, message = due.pop(0)
        rig.clock.now = at_ms / 1000
        reserved = rig.slots.reservations
        paced = rig.pacer.pace(message)
        if paced is None:
            slot = rig.slots.given[-1] if rig.slots.reservations > reserved else message.rate_slot
            assert slot is not None
            starts.append((at_ms + round(rig.slept.pop() * 1000) if rig.slept else at_ms, slot))
            continue
        back = at_ms + paced.delay_seconds * 1000 + late.randint(0, 1500)
        due.append((back, number, paced.message))

    assert len(starts) == 20
    assert all(slot <= start < slot + 500 for start, slot in starts)
    slots = sorted(slot for _, slot in starts)
    assert all(later - earlier >= 500 for earlier, later in zip(slots, slots[1:], strict=False))


def test_given_a_slot_a_few_hundred_ms_ahead_then_the_worker_sleeps_it_out_and_sends() -> None:
    rig = Rig()
    now_ms = int(rig.clock() * 1000)

    assert rig.pacer.pace(delivery(1, 5, slot=now_ms + 300)) is None

    assert rig.slept == [0.3]
    assert rig.slots.reservations == 0


def test_given_a_slot_far_ahead_then_the_message_goes_back_holding_it_without_a_new_reservation() -> None:
    rig = Rig()
    now_ms = int(rig.clock() * 1000)

    paced = rig.pacer.pace(delivery(1, 1, slot=now_ms + 2500))

    assert paced is not None
    assert (paced.delay_seconds, paced.message.rate_slot, rig.slots.reservations) == (3, now_ms + 2500, 0)


def test_given_no_rate_or_no_subscription_then_nothing_is_paced_or_reserved() -> None:
    rig = Rig()
    plain = JobMessage(
        "job-x",
        TENANT,
        Channel.WEBHOOK,
        "startup",
        0,
        NotificationRequest(WebhookNotification(url="https://a.example.com", payload={})),
    )

    assert rig.pacer.pace(delivery(1, None)) is None
    assert rig.pacer.pace(plain) is None
    assert rig.slots.reservations == 0
