"""Data access of scheduled sends: the status item a scheduled job gets at acceptance, its due-time
index entry (gsi3), the dispatcher's claim and the tenant's cancel.

DynamoDB per scheduled notification (besides the request item every job has):
- accept: 1 conditional PutItem of the status item (status scheduled, ~250 bytes: 1 write unit)
  and its gsi3 entry (~150 bytes: 1 write unit);
- dispatch: its share of 1 Query per due-time shard and minute (0.5 read unit per started 4 KB of
  entries, ~25 entries per half unit), then 1 conditional UpdateItem (scheduled -> pending; 1 write
  unit) that also deletes the gsi3 entry (1 write unit);
- cancel: 1 conditional UpdateItem (scheduled -> cancelled; 1 write unit), deleting the gsi3 entry
  (1 write unit) and writing the gsi2 entry of a cancelled job (1 write unit).
Dispatch and cancel are both conditional on the status being scheduled: exactly one of them wins.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from herald.adapters.store.job_items import state_of
from herald.adapters.store.job_store import ended_index, status_item
from herald.adapters.store.models import (
    STATUS_SK,
    HeraldItem,
    JobStatusItem,
    due_gsi_pk,
    due_gsi_pks,
    due_sort_key,
    job_ids,
    job_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.job_records import JobState, NewJob
from herald.domain.jobs import Channel, JobStatus
from herald.domain.scheduling import DUE_SHARDS, DueJob


class DynamoSchedules:
    def __init__(self, table: Table, shards: int = DUE_SHARDS) -> None:
        self._table = table
        self._shards = shards

    def schedule(self, job: NewJob, send_at: str) -> None:
        item = self._table[JobStatusItem](
            job_pk(job.tenant_id, job.job_id),
            STATUS_SK,
            type=job.request.channel.value,
            status=JobStatus.SCHEDULED.value,
            priority=job.priority,
            created_at=job.created_at,
            attempts=0,
            max_attempts=job.max_attempts,
            send_at=send_at,
            ordering_key=job.request.ordering_key,
            expires_at=job.expires_at,
            gsi3pk=due_gsi_pk(job.job_id, self._shards),
            gsi3sk=due_sort_key(send_at, job.job_id),
        )
        with conditional("job table write"):
            item.save(condition=JobStatusItem.pk.does_not_exist())

    def due(self, until: str) -> Iterator[DueJob]:
        """Every scheduled job due by ``until``, earliest first within each shard."""
        index = self._table.item.due
        for partition in due_gsi_pks(self._shards):
            with translated("due index read"):
                entries = list(index.query(partition, range_key_condition=HeraldItem.gsi3sk <= f"{until}#~"))
            for entry in entries:
                if not isinstance(entry, JobStatusItem):
                    continue
                tenant_id, job_id = job_ids(entry.pk)
                yield DueJob(
                    tenant_id=tenant_id,
                    job_id=job_id,
                    channel=Channel(entry.type),
                    priority=int(entry.priority),
                    send_at=str(entry.gsi3sk).rsplit("#", 1)[0],
                    created_at=entry.created_at,
                    ordering_key=entry.ordering_key,
                )

    def start_dispatch(self, job: DueJob, at: str) -> bool:
        """scheduled -> pending for its dispatch; False when it was cancelled (or claimed) meanwhile.
        ``requeuedAt`` tells the sweeper the job was queued now, not at its acceptance."""
        return self._update(
            job.tenant_id,
            job.job_id,
            [
                JobStatusItem.status.set(JobStatus.PENDING.value),
                JobStatusItem.requeued_at.set(at),
                JobStatusItem.gsi3pk.remove(),
                JobStatusItem.gsi3sk.remove(),
            ],
            expected=JobStatus.SCHEDULED,
        )

    def undo_dispatch(self, job: DueJob) -> bool:
        """Back to scheduled when its message could not be sent, so the next run tries again."""
        return self._update(
            job.tenant_id,
            job.job_id,
            [
                JobStatusItem.status.set(JobStatus.SCHEDULED.value),
                JobStatusItem.requeued_at.remove(),
                JobStatusItem.gsi3pk.set(due_gsi_pk(job.job_id, self._shards)),
                JobStatusItem.gsi3sk.set(due_sort_key(job.send_at, job.job_id)),
            ],
            expected=JobStatus.PENDING,
            untouched=True,
        )

    def cancel(self, tenant_id: str, job_id: str, created_at: str, at: str) -> JobState | None:
        """scheduled -> cancelled; None when the job is not (or no longer) scheduled."""
        item = status_item(self._table, tenant_id, job_id)
        try:
            with conditional("job table write"):
                item.update(
                    actions=[
                        JobStatusItem.status.set(JobStatus.CANCELLED.value),
                        JobStatusItem.completed_at.set(at),
                        JobStatusItem.gsi3pk.remove(),
                        JobStatusItem.gsi3sk.remove(),
                        *ended_index(tenant_id, job_id, created_at, JobStatus.CANCELLED),
                    ],
                    condition=JobStatusItem.status == JobStatus.SCHEDULED.value,
                )
        except ConditionFailed:
            return None
        return state_of(None, item)

    def _update(
        self, tenant_id: str, job_id: str, actions: list[Any], *, expected: JobStatus, untouched: bool = False
    ) -> bool:
        condition = JobStatusItem.status == expected.value
        if untouched:
            condition = condition & (JobStatusItem.attempts == 0)
        try:
            with conditional("job table write"):
                status_item(self._table, tenant_id, job_id).update(actions=actions, condition=condition)
        except ConditionFailed:
            return False
        return True
