"""The operator's dead-letter queue: list and show what it holds, and redrive jobs from it.

A redrive does what POST /notifications/jobs/{id}/retry does for the tenant (the failed job back to
PENDING with a fresh attempt budget, queued again; attempt numbers go on growing), then deletes the
copy. A copy whose job is no longer failed (the tenant retried it, or it is moving again) has
nothing left to act on and is deleted too; a copy whose job is gone, or that is no job at all, stays.
A page of an event's fan-out goes back to the fan-out queue: run again, it writes only the
deliveries it had not written.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import msgspec

from herald.domain.clock import now_iso
from herald.domain.dead_letters import DeadLetter, HeldMessage, LetterKind, read_dead_letter
from herald.domain.errors import DependencyError, HeraldError
from herald.domain.events import FanoutPage
from herald.services.job_queries import requeue_failed
from herald.services.outcomes import TenantNotFound
from herald.services.ports.events import FanoutQueue
from herald.services.ports.jobs import DeadLetterInbox, JobQueue, JobStore
from herald.services.ports.tenants import TenantStore

# How long a look holds the messages it received (released at once when it is done).
HOLD_SECONDS = 60


class Outcome(StrEnum):
    REDRIVEN = "redriven"
    REMOVED = "removed"
    KEPT = "kept"


class Redrive(msgspec.Struct, frozen=True):
    letter: DeadLetter
    outcome: Outcome
    detail: str


class DeadLetterDesk:
    def __init__(
        self,
        inbox: DeadLetterInbox,
        *,
        jobs: JobStore,
        tenants: TenantStore,
        queue: JobQueue,
        fanout: FanoutQueue,
        max_attempts: int,
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self._inbox = inbox
        self._jobs = jobs
        self._tenants = tenants
        self._queue = queue
        self._fanout = fanout
        self._max_attempts = max_attempts
        self._clock = clock

    def letters(self, limit: int | None = None) -> list[DeadLetter]:
        held = self._inbox.take(limit, HOLD_SECONDS)
        self._inbox.release(held)
        return sorted((read_dead_letter(message) for message in held), key=lambda letter: letter.at)

    def letter(self, ident: str) -> list[DeadLetter]:
        """The messages of a job id (a job may have more than one), or the message with that id."""
        return [letter for letter in self.letters() if letter.matches(ident)]

    def redrive(self, job_id: str | None, since: str | None = None) -> list[Redrive]:
        """Redrive the copies of one job, or (``job_id`` None) everything the queue holds, or only
        what failed at or after ``since`` (ISO-8601 UTC, as the copies note their time)."""
        held = self._inbox.take(None, HOLD_SECONDS)
        chosen = [message for message in held if _chosen(read_dead_letter(message), job_id, since)]
        untouched = [message for message in held if message not in chosen]
        results = []
        try:
            for message in chosen:
                letter = read_dead_letter(message)
                page = letter.kind is LetterKind.FANOUT
                result = self._redrive_page(message, letter) if page else self._redrive_job(message, letter)
                results.append(result)
                if result.outcome is Outcome.KEPT:
                    untouched.append(message)
        finally:
            self._inbox.release(untouched)
        return results

    def _redrive_job(self, message: HeldMessage, letter: DeadLetter) -> Redrive:
        if letter.job_id is None or letter.tenant_id is None:
            return Redrive(letter, Outcome.KEPT, "not a job message; read it with herald dlq show")
        try:
            plan = self._tenants.profile(letter.tenant_id).plan
            state = requeue_failed(
                self._jobs,
                self._queue,
                tenant_id=letter.tenant_id,
                plan=plan,
                job_id=letter.job_id,
                max_attempts=self._max_attempts,
                now=self._clock(),
            )
            if state is not None:
                self._inbox.delete(message)
                return Redrive(letter, Outcome.REDRIVEN, f"queued again (attempt {state.attempts + 1} next)")
            view = self._jobs.get(letter.tenant_id, letter.job_id)
        except TenantNotFound:
            return Redrive(letter, Outcome.KEPT, "its tenant no longer exists")
        except (HeraldError, DependencyError) as exc:
            return Redrive(letter, Outcome.KEPT, str(exc))
        if view is None:
            return Redrive(letter, Outcome.KEPT, "the job no longer exists (past its retention)")
        self._inbox.delete(message)
        return Redrive(letter, Outcome.REMOVED, f"the job is {view.state.status.value} already; copy removed")

    def _redrive_page(self, message: HeldMessage, letter: DeadLetter) -> Redrive:
        try:
            self._fanout.enqueue_pages([msgspec.convert(letter.body, FanoutPage)])
        except msgspec.ValidationError as exc:
            return Redrive(letter, Outcome.KEPT, f"not a fan-out page Herald can read: {exc}")
        except DependencyError as exc:
            return Redrive(letter, Outcome.KEPT, str(exc))
        self._inbox.delete(message)
        return Redrive(letter, Outcome.REDRIVEN, "fan-out page queued again (writes only what is missing)")


def _chosen(letter: DeadLetter, job_id: str | None, since: str | None) -> bool:
    if job_id is not None:
        return letter.matches(job_id)
    return since is None or letter.at >= since
