"""Data access of the workers: claiming a job, recording each attempt, suppressions.

DynamoDB calls per delivered message: 1 conditional UpdateItem to claim + 1 UpdateItem to record
the outcome (both on the small state item: write units do not grow with the email's size);
0 reads when the payload travelled in the message. Emails add 1 GetItem for the suppression check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pynamodb.exceptions import DoesNotExist, PynamoDBException, UpdateError

from herald.adapters.store.models import DeliveryLogAttribute, JobPayload, JobState, Suppression, job_pk
from herald.domain.errors import DependencyError
from herald.domain.jobs import JobStatus

UPDATE_FAILED = "job table write failed"


@dataclass(frozen=True)
class AttemptRecord:
    """What one attempt did, appended to the job's delivery log."""

    log_id: str
    attempt: int
    succeeded: bool
    used_provider: str | None
    error_message: str | None
    created_at: str
    tried: list[dict[str, Any]]
    response_status: int | None = None
    response_body: str | None = None

    def as_attribute(self) -> DeliveryLogAttribute:
        return DeliveryLogAttribute(
            id=self.log_id,
            attempt=self.attempt,
            status="success" if self.succeeded else "failed",
            used_provider=self.used_provider,
            error_message=self.error_message,
            created_at=self.created_at,
            tried=self.tried,
            response_status=self.response_status,
            response_body=self.response_body,
        )


def suppression_pk(tenant_id: str) -> str:
    return f"SUPPRESSION#{tenant_id}"


def _state(tenant_id: str, job_id: str) -> JobState:
    return JobState(job_pk(tenant_id, job_id), "STATE")


class DeliveryStore:
    def claim(
        self,
        tenant_id: str,
        job_id: str,
        *,
        seen_attempts: int,
        now: int,
        lease_seconds: int,
        started_at: str,
    ) -> JobState | None:
        """Take the job for one attempt, or None when another delivery owns it or it is done.

        Claimable: PENDING with the attempt count this message was sent for, or PROCESSING whose
        lease ran out (the previous worker crashed or timed out; that attempt counts).
        """
        state = _state(tenant_id, job_id)
        fresh = (JobState.status == JobStatus.PENDING.value) & (JobState.attempts == seen_attempts)
        abandoned = (JobState.status == JobStatus.PROCESSING.value) & (JobState.lease_until < now)
        try:
            state.update(
                actions=[
                    JobState.status.set(JobStatus.PROCESSING.value),
                    JobState.attempts.set(JobState.attempts + 1),
                    JobState.lease_until.set(now + lease_seconds),
                    JobState.started_at.set(JobState.started_at | started_at),
                ],
                condition=(fresh | abandoned) & (JobState.attempts < JobState.max_attempts),
            )
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return None
            raise DependencyError(f"{UPDATE_FAILED}: {exc.cause_response_code}") from exc
        return state

    def current(self, tenant_id: str, job_id: str) -> JobState | None:
        try:
            state: JobState = JobState.get(job_pk(tenant_id, job_id), "STATE")
        except DoesNotExist:
            return None
        except PynamoDBException as exc:
            raise DependencyError(f"job table read failed: {exc.cause_response_code}") from exc
        return state

    def payload(self, tenant_id: str, job_id: str) -> dict[str, Any]:
        try:
            item: JobPayload = JobPayload.get(job_pk(tenant_id, job_id), "PAYLOAD")
        except PynamoDBException as exc:
            raise DependencyError(f"job payload read failed: {exc.cause_response_code}") from exc
        payload: dict[str, Any] = item.payload
        return payload

    def complete(self, tenant_id: str, job_id: str, record: AttemptRecord) -> bool:
        return self._record(
            tenant_id,
            job_id,
            record,
            [
                JobState.status.set(JobStatus.COMPLETED.value),
                JobState.completed_at.set(record.created_at),
                JobState.used_provider.set(record.used_provider) if record.used_provider else None,
                JobState.error_message.remove(),
            ],
        )

    def fail(self, tenant_id: str, job_id: str, record: AttemptRecord, reason: str) -> bool:
        return self._record(
            tenant_id,
            job_id,
            record,
            [
                JobState.status.set(JobStatus.FAILED.value),
                JobState.completed_at.set(record.created_at),
                JobState.error_message.set(reason),
                JobState.used_provider.set(record.used_provider) if record.used_provider else None,
            ],
        )

    def release_for_retry(
        self, tenant_id: str, job_id: str, record: AttemptRecord, reason: str, skip_providers: list[str]
    ) -> bool:
        actions = [JobState.status.set(JobStatus.PENDING.value), JobState.error_message.set(reason)]
        if skip_providers:
            actions.append(JobState.skip_providers.set(skip_providers))
        return self._record(tenant_id, job_id, record, actions)

    def _record(self, tenant_id: str, job_id: str, record: AttemptRecord, actions: list[Any]) -> bool:
        """Apply the outcome of an attempt we still own; False when the lease was lost meanwhile."""
        state = _state(tenant_id, job_id)
        try:
            state.update(
                actions=[
                    *[action for action in actions if action is not None],
                    JobState.delivery_logs.set(JobState.delivery_logs.append([record.as_attribute()])),
                    JobState.lease_until.remove(),
                ],
                condition=(JobState.status == JobStatus.PROCESSING.value)
                & (JobState.attempts == record.attempt),
            )
        except UpdateError as exc:
            if exc.cause_response_code == "ConditionalCheckFailedException":
                return False
            raise DependencyError(f"{UPDATE_FAILED}: {exc.cause_response_code}") from exc
        return True

    def is_suppressed(self, tenant_id: str, address: str) -> bool:
        try:
            Suppression.get(suppression_pk(tenant_id), address.lower())
        except DoesNotExist:
            return False
        except PynamoDBException as exc:
            raise DependencyError(f"suppression read failed: {exc.cause_response_code}") from exc
        return True

    def suppress(self, tenant_id: str, address: str, reason: str, source: str, created_at: str) -> None:
        item = Suppression(
            suppression_pk(tenant_id),
            address.lower(),
            address=address.lower(),
            reason=reason,
            source=source,
            created_at=created_at,
        )
        try:
            item.save()
        except PynamoDBException as exc:
            raise DependencyError(f"suppression write failed: {exc.cause_response_code}") from exc
