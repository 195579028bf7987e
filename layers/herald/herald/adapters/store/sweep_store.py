"""Data access of the sweeper: the tenants active lately, a tenant's unfinished jobs of a time range
through the indexes, and the two conditional writes it makes on a stuck job's status item.

Per run: 1 consistent GetItem and 1 UpdateItem of the sweeper's mark (when the last complete run
was: each run reads the ranges of creation times that reached a checkpoint age since). Read units
(eventually consistent reads, 0.5 unit per started 4 KB):
- 1 Query of gsi1 per hour since the oldest range began (``ACTIVE#<hour>``: the counter items of the
  tenants that accepted jobs since, ~120 bytes each), so a run reads the tenants that may have jobs
  in its ranges, not every tenant;
- per such tenant and range, 1 Query of gsi1 for its jobs created in the range (entries of ~150
  bytes) and 1 BatchGetItem of their status items (0.5 unit each); a tenant with no job in a range
  costs that Query (0.5 unit) alone.
Per action: 1 conditional UpdateItem of the status item (1 write unit; a failure adds its gsi2 entry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.job_store import ended_index, states_of, status_defaults, status_item
from herald.adapters.store.models import (
    SWEEPER_PK,
    SWEEPER_SK,
    HeraldItem,
    JobItem,
    JobStatusItem,
    SweepMarkItem,
    active_gsi_pk,
    active_hour,
    jobs_gsi_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.job_records import JobState
from herald.domain.jobs import FINAL_STATUSES, JobStatus
from herald.domain.notifications import NotificationRequest


class DynamoSweepStore:
    def __init__(self, table: Table, clock: Callable[[], datetime] = utc_now) -> None:
        self._table = table
        self._clock = clock
        self._jobs = DynamoDeliveryStore(table)

    def last_sweep(self) -> datetime | None:
        with translated("sweep mark read"):
            try:
                mark: SweepMarkItem = self._table[SweepMarkItem].get(
                    SWEEPER_PK, SWEEPER_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return parse_iso(mark.swept_at)

    def swept(self, at: datetime) -> None:
        mark = self._table[SweepMarkItem](SWEEPER_PK, SWEEPER_SK)
        with translated("sweep mark write"):
            mark.update(
                actions=[
                    SweepMarkItem.kind.set(SweepMarkItem.kind | SweepMarkItem),
                    SweepMarkItem.swept_at.set(iso(at)),
                ]
            )

    def active_tenants(self, since: datetime) -> Iterator[str]:
        seen: set[str] = set()
        hour = since.replace(minute=0, second=0, microsecond=0)
        while hour <= self._clock():
            with translated("counter index read"):
                entries = list(self._table.item.by_tenant.query(active_gsi_pk(active_hour(hour))))
            for entry in entries:
                if entry.gsi1sk not in seen:
                    seen.add(str(entry.gsi1sk))
                    yield str(entry.gsi1sk)
            hour += timedelta(hours=1)

    def unfinished(self, tenant_id: str, created_from: str, created_until: str) -> list[JobState]:
        with translated("job index read"):
            entries = [
                entry
                for entry in self._table.item.by_tenant.query(
                    jobs_gsi_pk(tenant_id),
                    # Sort keys are createdAt#jobId: "#" sorts below every digit, so this is [from, until).
                    range_key_condition=HeraldItem.gsi1sk.between(created_from, created_until),
                )
                if isinstance(entry, JobItem)
            ]
        return [state for state in states_of(self._table, entries) if state.status not in FINAL_STATUSES]

    def request(self, tenant_id: str, job_id: str) -> NotificationRequest:
        return self._jobs.request(tenant_id, job_id)

    def mark_requeued(self, state: JobState, at: str, expires_at: int) -> bool:
        return self._update(
            state,
            [
                JobStatusItem.status.set(JobStatusItem.status | state.status.value),
                JobStatusItem.attempts.set(JobStatusItem.attempts | state.attempts),
                JobStatusItem.requeued_at.set(at),
                JobStatusItem.sweeps.set((JobStatusItem.sweeps | 0) + 1),
                JobStatusItem.expires_at.set(JobStatusItem.expires_at | expires_at),
            ],
        )

    def fail(self, state: JobState, reason: str, at: str) -> bool:
        return self._update(
            state,
            [
                JobStatusItem.status.set(JobStatus.FAILED.value),
                JobStatusItem.attempts.set(JobStatusItem.attempts | state.attempts),
                JobStatusItem.error_message.set(reason),
                JobStatusItem.completed_at.set(at),
                JobStatusItem.lease_until.remove(),
                *ended_index(state.tenant_id, state.job_id, state.created_at, JobStatus.FAILED),
            ],
        )

    def _update(self, state: JobState, actions: list[Any]) -> bool:
        """Apply ``actions`` if the job is still as the sweeper read it."""
        defaults = status_defaults(
            state.channel, state.priority, state.created_at, state.max_attempts, state.ordering_key
        )
        try:
            with conditional("job table write"):
                status_item(self._table, state.tenant_id, state.job_id).update(
                    actions=[*defaults, *actions], condition=_unchanged(state)
                )
        except ConditionFailed:
            return False
        return True


def _unchanged(state: JobState) -> Condition:
    same: Condition = (
        (JobStatusItem.status == state.status.value)
        & (JobStatusItem.attempts == state.attempts)
        & (
            JobStatusItem.requeued_at.does_not_exist()
            if state.requeued_at is None
            else JobStatusItem.requeued_at == state.requeued_at
        )
    )
    if state.status is JobStatus.PENDING and state.attempts == 0 and state.requeued_at is None:
        # Never claimed nor re-queued: its status item may not exist yet.
        either: Condition = JobStatusItem.pk.does_not_exist() | same
        return either
    return same
