"""In-memory events, subscriptions, delivery jobs and queues with the adapters' conditions: an event
or a delivery job is written once, a queue may fail after some of its messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from herald.adapters.fanout_queue import decode_page, encode_page
from herald.adapters.queueing import decode_message, encode_message
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind, BreakerState
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.events import Event, EventType, FanoutPage, Subscription
from herald.domain.job_records import JobMessage, JobState, NewJob
from herald.domain.jobs import JobStatus, QueuePriority
from herald.services.outcomes import DuplicateRequest


@dataclass
class FakeCatalog:
    """Event types by name; a payload is valid when it holds every key the type requires."""

    types: dict[str, EventType] = field(default_factory=dict)
    required: dict[str, tuple[str, ...]] = field(default_factory=dict)
    checks: int = 0

    def checked(self, tenant_id: str, name: str, payload: Mapping[str, Any]) -> EventType:
        self.checks += 1
        if name not in self.types:
            raise HeraldError(f"No event type {name}.", ErrorCode.VALIDATION_ERROR)
        missing = [key for key in self.required.get(name, ()) if key not in payload]
        if missing:
            raise HeraldError(f"The payload lacks {missing[0]}.", ErrorCode.VALIDATION_ERROR)
        return self.types[name]


@dataclass
class FakeEventStore:
    events: dict[tuple[str, str], tuple[Event, bytes | None]] = field(default_factory=dict)
    subscribed: dict[str, dict[str, Subscription]] = field(default_factory=dict)
    breakers: dict[tuple[str, str], Breaker] = field(default_factory=dict)
    # The delivery jobs' states (shared with FakeDeliveryJobs).
    states: dict[str, JobState] = field(default_factory=dict)

    def add(
        self, tenant_id: str, subscription: Subscription, state: BreakerState = BreakerState.CLOSED
    ) -> None:
        self.subscribed.setdefault(tenant_id, {})[subscription.subscription_id] = subscription
        key = BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, subscription.subscription_id)
        self.breakers[(tenant_id, subscription.subscription_id)] = Breaker(key, state=state)

    def insert(self, event: Event, digest: bytes | None) -> None:
        key = (event.tenant_id, event.event_id)
        if key in self.events:
            stored_digest = self.events[key][1]
            if digest is None:
                raise DependencyError("event write failed: event id collision")
            raise DuplicateRequest(event.event_id, stored_digest == digest)
        self.events[key] = (event, digest)

    def get(self, tenant_id: str, event_id: str) -> Event | None:
        found = self.events.get((tenant_id, event_id))
        return found[0] if found else None

    def listing(self, tenant_id: str, cursor: str | None, limit: int) -> tuple[list[Event], str | None]:
        mine = sorted(
            (event for (tenant, _), (event, _) in self.events.items() if tenant == tenant_id),
            key=lambda event: event.created_at,
            reverse=True,
        )
        return mine[:limit], None

    def subscriptions(self, tenant_id: str) -> list[tuple[Subscription, Breaker]]:
        return self.page(tenant_id, None, "\uffff")

    def page(self, tenant_id: str, after: str | None, last: str) -> list[tuple[Subscription, Breaker]]:
        return [
            (subscription, self.breakers[(tenant_id, sid)])
            for sid, subscription in sorted(self.subscribed.get(tenant_id, {}).items())
            if (after is None or sid > after) and sid <= last
        ]

    def delivery_states(self, tenant_id: str, job_ids_wanted: Sequence[str]) -> dict[str, JobState]:
        return {job_id: self.states[job_id] for job_id in job_ids_wanted if job_id in self.states}


@dataclass
class FakeDeliveryJobs:
    """Delivery jobs written once; ``claimed`` plays the workers' status items."""

    written: dict[str, NewJob] = field(default_factory=dict)
    claimed: set[str] = field(default_factory=set)
    puts: int = 0
    # Fails the put of the job at this position of the next call (a crash halfway through a page).
    fail_at: int | None = None

    def insert_deliveries(self, jobs: Sequence[NewJob]) -> list[str]:
        queued: list[str] = []
        for position, job in enumerate(jobs):
            if self.fail_at is not None and position == self.fail_at:
                self.fail_at = None
                raise DependencyError("job table write failed: timeout")
            self.puts += 1
            if job.job_id not in self.written:
                self.written[job.job_id] = job
                queued.append(job.job_id)
            elif job.job_id not in self.claimed:
                queued.append(job.job_id)
        return queued


@dataclass
class FakeBatchQueue:
    """Delivery messages as SQS would carry them; ``fail_after`` refuses every message past it."""

    sent: list[tuple[JobMessage, QueuePriority]] = field(default_factory=list)
    fail_after: int | None = None

    def enqueue_batch(self, messages: Sequence[JobMessage], priority: QueuePriority) -> None:
        for message in messages:
            if self.fail_after is not None and len(self.sent) >= self.fail_after:
                self.fail_after = None
                raise DependencyError("queue webhook-normal refused 1 messages: throttled")
            self.sent.append((decode_message(encode_message(message)), priority))


@dataclass
class FakeFanoutQueue:
    pages: list[FanoutPage] = field(default_factory=list)
    failure: Exception | None = None

    def enqueue_pages(self, pages: Sequence[FanoutPage]) -> None:
        if self.failure is not None:
            raise self.failure
        self.pages.extend(decode_page(encode_page(page)) for page in pages)


def pending(job: NewJob) -> JobState:
    return JobState(
        job.job_id,
        job.tenant_id,
        job.request.channel,
        JobStatus.PENDING,
        job.priority,
        0,
        job.max_attempts,
        job.created_at,
    )


@dataclass
class FakeRateSlots:
    """The slot item's rule: the next free slot moves one interval per reservation."""

    next_at: dict[tuple[str, str], int] = field(default_factory=dict)
    given: list[int] = field(default_factory=list)

    @property
    def reservations(self) -> int:
        return len(self.given)

    def reserve(self, tenant_id: str, subscription_id: str, interval_ms: int, now_ms: int) -> int:
        key = (tenant_id, subscription_id)
        slot = max(self.next_at.get(key, 0), now_ms)
        self.next_at[key] = slot + interval_ms
        self.given.append(slot)
        return slot
