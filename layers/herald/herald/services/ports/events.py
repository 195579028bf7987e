"""What the event services need from the outside: the catalog that checks a payload, the table's
events and subscriptions, the delivery jobs' writes and the queues."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from herald.domain.breakers import Breaker
from herald.domain.events import Event, EventType, FanoutPage, Subscription
from herald.domain.job_records import JobMessage, JobState, NewJob
from herald.domain.jobs import QueuePriority


class EventCatalog(Protocol):
    def checked(self, tenant_id: str, name: str, payload: Mapping[str, Any]) -> EventType:
        """The event type ``name`` if ``payload`` meets its schema; a ``HeraldError`` saying what is
        wrong otherwise (unknown or archived type, the schema's errors)."""


class EventStore(Protocol):
    def insert(self, event: Event, digest: bytes | None) -> None:
        """Write the event once; ``DuplicateRequest`` when its id (its idempotency key) is taken."""

    def get(self, tenant_id: str, event_id: str) -> Event | None: ...

    def listing(self, tenant_id: str, cursor: str | None, limit: int) -> tuple[list[Event], str | None]:
        """Newest first; ValueError for a cursor this store did not hand out."""

    def subscriptions(self, tenant_id: str) -> list[tuple[Subscription, Breaker]]: ...

    def page(self, tenant_id: str, after: str | None, last: str) -> list[tuple[Subscription, Breaker]]:
        """The subscriptions with ids in (after, last], with their breakers."""

    def delivery_states(self, tenant_id: str, job_ids_wanted: Sequence[str]) -> dict[str, JobState]: ...


class DeliveryJobs(Protocol):
    def insert_deliveries(self, jobs: Sequence[NewJob]) -> list[str]:
        """Write each job unless it exists; the ids to queue (new ones, and unclaimed old ones)."""


class DeliveryQueue(Protocol):
    def enqueue_batch(self, messages: Sequence[JobMessage], priority: QueuePriority) -> None:
        """Queue every message (``DependencyError`` if any one was refused: the caller repeats all)."""


class FanoutQueue(Protocol):
    def enqueue_pages(self, pages: Sequence[FanoutPage]) -> None:
        """Queue every page (``DependencyError`` if any one was refused)."""
