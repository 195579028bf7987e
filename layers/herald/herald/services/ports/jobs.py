"""Ports of a job's storage and queues: the accepted jobs, their schedules, deliveries, sweeps and events,
the work queues, message returns and the dead-letter queue."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # Only named in signatures: a function imports the domain modules its own path uses.
    from herald.domain.dead_letters import FailedJobCopy, HeldMessage, UnreadableMessage
    from herald.domain.job_records import (
        Claim,
        DeliveryLog,
        JobEvent,
        JobMessage,
        JobPage,
        JobState,
        JobView,
        NewJob,
    )
    from herald.domain.jobs import Channel, JobStatus, QueuePriority
    from herald.domain.notifications import NotificationRequest
    from herald.domain.scheduling import DueJob
    from herald.domain.search import JobSearch


class JobStore(Protocol):
    def insert(self, job: NewJob) -> None:
        """Store an accepted job once; ``DuplicateRequest`` when its id exists already."""

    def get(self, tenant_id: str, job_id: str) -> JobView | None: ...

    def listing(
        self,
        tenant_id: str,
        *,
        page: int,
        limit: int,
        channel: Channel | None,
        status: JobStatus | None,
        cursor: str | None,
        day: date | None = None,
    ) -> JobPage:
        """Newest first, of the UTC ``day`` when given; ``total`` only where the store counted the
        matches on the way (in-flight statuses). ValueError for a cursor this store did not hand out."""

    def search(self, tenant_id: str, search: JobSearch, *, limit: int, cursor: str | None) -> JobPage:
        """The tenant's jobs that ``search`` finds, newest first, at most ``limit``; the entries read
        per call are bounded, so a page may hold fewer and ``next_cursor`` goes on (None at the end).
        ValueError for a cursor this store did not hand out."""

    def failed_between(
        self,
        tenant_id: str,
        created_from: str,
        created_until: str,
        *,
        channel: Channel | None,
        cursor: str | None,
        limit: int,
    ) -> JobPage:
        """The tenant's FAILED jobs accepted in [from, until), newest first, at most ``limit``, from
        the finished-jobs index; ``next_cursor`` continues after the last. ValueError for a cursor
        this store did not hand out."""

    def mark_enqueue_failed(self, message: JobMessage, reason: str, failed_at: str) -> None:
        """The queue refused the job of ``message``: it ends FAILED with the reason (retryable)."""

    def reopen_failed(
        self, tenant_id: str, job_id: str, extra_attempts: int, reopened_at: str
    ) -> JobState | None:
        """FAILED -> PENDING with a fresh attempt budget; None when the job is not failed."""

    def owner(self, job_id: str, tenant_ids: Iterable[str]) -> str | None:
        """Which of these tenants has a job with this id (the operator looking a job up by id alone)."""


class Schedules(Protocol):
    """Scheduled jobs: their waiting state from acceptance to dispatch or cancel (one of the two wins)."""

    def schedule(self, job: NewJob, send_at: str) -> None:
        """The stored job waits for ``send_at``; DependencyError when that cannot be recorded."""

    def due(self, until: str) -> Iterator[DueJob]:
        """The waiting jobs due by ``until``."""

    def start_dispatch(self, job: DueJob, at: str) -> bool:
        """scheduled -> pending, for its dispatch; False when it is no longer scheduled."""

    def undo_dispatch(self, job: DueJob) -> bool:
        """pending -> scheduled again, when its dispatch could not be queued."""

    def cancel(self, tenant_id: str, job_id: str, created_at: str, at: str) -> JobState | None:
        """scheduled -> cancelled; None when it is no longer scheduled."""


class DeliveryStore(Protocol):
    def claim(
        self,
        message: JobMessage,
        *,
        now: int,
        lease_seconds: int,
        started_at: str,
        max_attempts: int,
        expires_at: int,
    ) -> Claim | None:
        """Take the job for one attempt, or None when another delivery owns it or it is done."""

    def current(self, tenant_id: str, job_id: str) -> JobState | None: ...

    def request(self, tenant_id: str, job_id: str) -> NotificationRequest: ...

    def finish(self, message: JobMessage, log: DeliveryLog, status: JobStatus, reason: str | None) -> bool:
        """Record the last attempt's outcome (COMPLETED or FAILED); False when the lease was lost."""

    def release_for_retry(
        self, message: JobMessage, log: DeliveryLog, reason: str, skip_providers: Sequence[str], due_at: str
    ) -> bool:
        """PENDING again after a failed attempt, noted as re-queued for ``due_at`` (when the retry
        is to start: the job's document says so); False when the lease was lost."""

    def release_deferred(self, message: JobMessage, attempt: int, due_at: str) -> bool:
        """Hand back claimed ``attempt`` unspent (nothing was sent): PENDING at ``attempt - 1``,
        noted as re-queued for ``due_at`` (when its message comes back, so the sweeper does not take
        a waiting job for a lost one); False when the lease was lost."""


class SweepStore(Protocol):
    """What the sweeper reads and writes: unfinished jobs of a time range, through the indexes."""

    def last_sweep(self) -> datetime | None:
        """When the last complete sweep ran; None before the first."""

    def swept(self, at: datetime) -> None:
        """Note a complete sweep at ``at``."""

    def active_tenants(self, since: datetime) -> Iterator[str]:
        """Every tenant that accepted a job at or after ``since`` (and maybe a few more)."""

    def unfinished(self, tenant_id: str, created_from: str, created_until: str) -> list[JobState]:
        """The tenant's jobs created in [from, until) that are neither completed nor failed."""

    def request(self, tenant_id: str, job_id: str) -> NotificationRequest: ...

    def mark_requeued(self, state: JobState, at: str, expires_at: int) -> bool:
        """Note one more re-queue of the job; False when it changed since ``state`` was read."""

    def fail(self, state: JobState, reason: str, at: str) -> bool:
        """End the job FAILED with ``reason``; False when it changed since ``state`` was read."""


class JobEvents(Protocol):
    """The delivery events of jobs, stored in each job's own partition."""

    def expiry(self, tenant_id: str, job_id: str) -> int | None:
        """When the job's items expire (epoch seconds); None when ``tenant_id`` has no job with this
        id that was ever handed to a provider."""

    def add(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent, expires_at: int) -> bool:
        """Store the event once, keyed by its provider and ``event_id``; False when it is stored
        already (a duplicate)."""

    def remove(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent) -> None: ...


class JobQueue(Protocol):
    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None: ...


class MessageReturns(Protocol):
    def hold(self, queue_name: str, receipt_handle: str, seconds: int) -> None:
        """Keep one received message in flight for ``seconds`` more (then it is delivered again)."""

    def return_now(self, messages: Sequence[tuple[str, str]]) -> None:
        """Make received messages (queue name, receipt handle) visible on their queue again now."""


class DeadLetters(Protocol):
    def send(self, letter: FailedJobCopy | UnreadableMessage) -> None: ...


class DeadLetterInbox(Protocol):
    """The operator's side of the dead-letter queue."""

    def take(self, limit: int | None, hold_seconds: int) -> list[HeldMessage]:
        """Receive what is visible (up to ``limit``), held invisible for ``hold_seconds``."""

    def delete(self, message: HeldMessage) -> None: ...

    def release(self, messages: list[HeldMessage]) -> None:
        """Make held messages visible again at once."""


class QueueDepths(Protocol):
    def visible(self, queue_url: str) -> int:
        """Messages waiting in the queue now (SQS's approximate count)."""
