"""Data access of the sweeper: a tenant's unfinished jobs of a time range, through the indexes, and
the two conditional writes it makes on a stuck job's status item.

Read units per tenant and run (eventually consistent reads, 0.5 unit per started 4 KB):
- 1 Query of gsi1 for the tenant's jobs created in the range (entries of ~150 bytes, so ~13 jobs per
  half unit); a tenant with no job in the range costs this one Query (0.5 unit) and nothing else;
- 2 Queries of gsi2 (completed, failed) over the same range, to leave finished jobs out (~300 bytes
  per entry);
- 1 BatchGetItem per 100 of what is left (the jobs still in flight, and the stuck ones): 0.5 unit
  each, more for a status item with a long delivery log.
Per action: 1 conditional UpdateItem of the status item (1 write unit; a failure adds its gsi2 entry).
"""

from __future__ import annotations

from typing import Any

from pynamodb.expressions.condition import Condition

from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.adapters.store.failures import ConditionFailed, conditional, translated
from herald.adapters.store.job_store import finished_index, states_of, status_defaults, status_item
from herald.adapters.store.keys import finished_jobs_gsi_pk, jobs_gsi_pk
from herald.adapters.store.models import HeraldItem, JobItem, JobStatusItem
from herald.adapters.store.table import Table
from herald.domain.jobs import FINAL_STATUSES, JobStatus
from herald.domain.notifications import NotificationRequest
from herald.domain.records import JobState


class DynamoSweepStore:
    def __init__(self, table: Table) -> None:
        self._table = table
        self._jobs = DynamoDeliveryStore(table)

    def unfinished(self, tenant_id: str, created_from: str, created_until: str) -> list[JobState]:
        with translated("job index read"):
            entries = [
                entry
                for entry in self._table.item.by_tenant.query(
                    jobs_gsi_pk(tenant_id),
                    range_key_condition=HeraldItem.gsi1sk.between(created_from, created_until),
                )
                if isinstance(entry, JobItem)
            ]
            if not entries:
                return []
            finished = {
                entry.pk
                for status in FINAL_STATUSES
                for entry in self._table.item.finished.query(
                    finished_jobs_gsi_pk(tenant_id, status.value),
                    range_key_condition=HeraldItem.gsi2sk.between(created_from, created_until),
                )
            }
        in_flight = [entry for entry in entries if entry.pk not in finished]
        return [state for state in states_of(self._table, in_flight) if state.status not in FINAL_STATUSES]

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
                *finished_index(state.tenant_id, state.job_id, state.created_at, JobStatus.FAILED),
            ],
        )

    def _update(self, state: JobState, actions: list[Any]) -> bool:
        """Apply ``actions`` if the job is still as the sweeper read it."""
        defaults = status_defaults(state.channel, state.priority, state.created_at, state.max_attempts)
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
