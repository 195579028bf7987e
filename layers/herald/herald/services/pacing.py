"""Pacing deliveries of rate-limited subscriptions before they are claimed: a delivery whose slot
is ahead goes back to its queue holding the slot, without a claim or an attempt spent
(``herald.domain.pacing``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import msgspec
from msgspec.structs import replace

from herald.domain.job_records import JobMessage
from herald.domain.notifications import WebhookNotification
from herald.domain.pacing import SLEEP_LIMIT_MS, interval_ms, queue_delay_seconds
from herald.observability import count


class RateSlots(Protocol):
    def reserve(self, tenant_id: str, subscription_id: str, interval_ms: int, now_ms: int) -> int:
        """The send slot (epoch ms) reserved for one delivery (``DependencyError`` if the table fails)."""


class Paced(msgspec.Struct, frozen=True):
    """A delivery that waits: the message to queue again (holding its slot) and for how long."""

    message: JobMessage
    delay_seconds: int


class Pacer:
    def __init__(
        self,
        slots: RateSlots,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._slots = slots
        self._clock = clock
        self._sleep = sleep

    def pace(self, message: JobMessage) -> Paced | None:
        """None: send now (after sleeping out a wait under a second); else the delivery waits. Only
        a delivery of an event to a rate-limited subscription is paced, with the rate it was fanned
        out with (carried by the message)."""
        request = message.request
        webhook = request.notification if request is not None else None
        if not isinstance(webhook, WebhookNotification) or webhook.delivery is None:
            return None
        rate = webhook.delivery.rate_limit_per_second
        if rate is None:
            return None
        now_ms, interval = int(self._clock() * 1000), interval_ms(rate)
        slot = message.rate_slot
        if slot is None or now_ms >= slot + interval:
            # A slot is good for one interval: a message back later than that (a busy worker) takes
            # a new one, so no two deliveries start within one interval of the subscription's rate.
            slot = self._slots.reserve(message.tenant_id, webhook.delivery.subscription_id, interval, now_ms)
        wait_ms = slot - now_ms
        if wait_ms <= 0:
            return None
        if wait_ms < SLEEP_LIMIT_MS:
            self._sleep(wait_ms / 1000)
            return None
        count("DeliveriesPaced", {})
        return Paced(replace(message, rate_slot=slot), queue_delay_seconds(wait_ms))
