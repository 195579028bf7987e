"""Data access of the workers: claiming a job and recording each attempt on its status item.

DynamoDB per delivered message: 1 conditional UpdateItem to claim + 1 UpdateItem to record the
outcome, both on the small status item (write units do not grow with the email's size, and the
request item is never rewritten); 0 reads when the payload travelled in the message. Only a failure
adds an index entry (gsi2): completed jobs, the common case, are listed from gsi1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from herald.adapters.store.job_items import exchange_text, log_attribute, request_of, view_of
from herald.adapters.store.job_store import ended_index, status_defaults, status_item
from herald.adapters.store.models import JOB_SK, JobAttemptItem, JobItem, JobStatusItem, attempt_sk, job_pk
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.clock import parse_iso
from herald.domain.errors import DependencyError
from herald.domain.job_records import Claim, DeliveryLog, JobMessage, JobState
from herald.domain.jobs import JobStatus
from herald.domain.notifications import NotificationRequest


class DynamoDeliveryStore:
    def __init__(self, table: Table) -> None:
        self._table = table

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
        """Take the job for one attempt, or None when another delivery owns it or it is done.

        Claimable: never claimed yet (a first message), PENDING with the attempt count this message
        was sent for, or PROCESSING whose lease ran out (the previous worker crashed or timed out;
        that attempt counts)."""
        item = status_item(self._table, message.tenant_id, message.job_id)
        fresh: Condition = (JobStatusItem.status == JobStatus.PENDING.value) & (
            JobStatusItem.attempts == message.seen_attempts
        )
        if message.ordering_key is not None:
            # A keyed job has one message, held in flight between its attempts (its seenAttempts
            # stays 0); its FIFO group hands it to one worker at a time, and the lease covers a
            # redelivery while an attempt still runs.
            fresh = JobStatusItem.pk.does_not_exist() | (JobStatusItem.status == JobStatus.PENDING.value)
        elif message.seen_attempts == 0:
            fresh = JobStatusItem.pk.does_not_exist() | fresh
        abandoned = (JobStatusItem.status == JobStatus.PROCESSING.value) & (JobStatusItem.lease_until < now)
        budget = JobStatusItem.max_attempts.does_not_exist() | (
            JobStatusItem.attempts < JobStatusItem.max_attempts
        )
        try:
            with conditional("job table write"):
                item.update(
                    actions=[
                        *status_defaults(
                            message.channel,
                            message.priority,
                            message.created_at,
                            max_attempts,
                            message.ordering_key,
                        ),
                        JobStatusItem.status.set(JobStatus.PROCESSING.value),
                        JobStatusItem.attempts.set((JobStatusItem.attempts | 0) + 1),
                        JobStatusItem.lease_until.set(now + lease_seconds),
                        JobStatusItem.started_at.set(JobStatusItem.started_at | started_at),
                        JobStatusItem.expires_at.set(JobStatusItem.expires_at | expires_at),
                    ],
                    condition=(fresh | abandoned) & budget,
                )
        except ConditionFailed:
            return None
        return Claim(int(item.attempts), int(item.max_attempts), tuple(item.skip_providers or ()))

    def current(self, tenant_id: str, job_id: str) -> JobState | None:
        with translated("job table read"):
            view = view_of(list(self._table.item.query(job_pk(tenant_id, job_id))))
        return None if view is None else view.state

    def request(self, tenant_id: str, job_id: str) -> NotificationRequest:
        with translated("job payload read"):
            try:
                item: JobItem = self._table[JobItem].get(job_pk(tenant_id, job_id), JOB_SK)
            except DoesNotExist as exc:
                raise DependencyError("job payload read failed: DoesNotExist") from exc
        return request_of(item)

    def finish(self, message: JobMessage, log: DeliveryLog, status: JobStatus, reason: str | None) -> bool:
        actions: list[Any] = [
            JobStatusItem.status.set(status.value),
            JobStatusItem.completed_at.set(log.created_at),
            JobStatusItem.error_message.set(reason) if reason else JobStatusItem.error_message.remove(),
        ]
        if status is JobStatus.FAILED:
            actions += ended_index(message.tenant_id, message.job_id, message.created_at, status)
        # The job's last write: its exchange rides along inline, as nothing rewrites the item after.
        return self._record(message, log, actions, with_exchange=True)

    def release_for_retry(
        self, message: JobMessage, log: DeliveryLog, reason: str, skip_providers: Sequence[str], due_at: str
    ) -> bool:
        actions: list[Any] = [
            JobStatusItem.status.set(JobStatus.PENDING.value),
            JobStatusItem.error_message.set(reason),
            JobStatusItem.requeued_at.set(due_at),
        ]
        if skip_providers:
            actions.append(JobStatusItem.skip_providers.set(list(skip_providers)))
        self._keep_exchange(message, log)
        return self._record(message, log, actions, with_exchange=False)

    def _keep_exchange(self, message: JobMessage, log: DeliveryLog) -> None:
        """A retried attempt's exchange in an item of its own, written once: inline, its answer would
        be rewritten by every later claim and outcome of the job. Written before the outcome: an
        attempt whose lease was lost leaves an item no log entry names, never shown."""
        if log.exchange is None:
            return
        item = self._table[JobAttemptItem](
            job_pk(message.tenant_id, message.job_id),
            attempt_sk(log.log_id),
            exchange=exchange_text(log.exchange),
            expires_at=message.expires_at(parse_iso(log.created_at)),
        )
        with translated("job attempt write"):
            item.save()

    def release_deferred(self, message: JobMessage, attempt: int, due_at: str) -> bool:
        try:
            with conditional("job table write"):
                status_item(self._table, message.tenant_id, message.job_id).update(
                    actions=[
                        JobStatusItem.status.set(JobStatus.PENDING.value),
                        JobStatusItem.attempts.set(attempt - 1),
                        JobStatusItem.requeued_at.set(due_at),
                        JobStatusItem.lease_until.remove(),
                    ],
                    condition=(JobStatusItem.status == JobStatus.PROCESSING.value)
                    & (JobStatusItem.attempts == attempt),
                )
        except ConditionFailed:
            return False
        return True

    def _record(
        self, message: JobMessage, log: DeliveryLog, actions: list[Any], *, with_exchange: bool
    ) -> bool:
        """Apply the outcome of an attempt we still own; False when the lease was lost meanwhile."""
        if log.used_provider:
            actions.append(JobStatusItem.used_provider.set(log.used_provider))
        try:
            with conditional("job table write"):
                status_item(self._table, message.tenant_id, message.job_id).update(
                    actions=[
                        *actions,
                        JobStatusItem.delivery_logs.set(
                            (JobStatusItem.delivery_logs | []).append(
                                [log_attribute(log, with_exchange=with_exchange)]
                            )
                        ),
                        JobStatusItem.lease_until.remove(),
                    ],
                    condition=(JobStatusItem.status == JobStatus.PROCESSING.value)
                    & (JobStatusItem.attempts == log.attempt),
                )
        except ConditionFailed:
            return False
        return True
