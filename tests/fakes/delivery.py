"""In-memory stand-ins for the ports of the delivery side: job store, queue, dead letters, providers
and the tenant table behind the real ``TenantDirectory``.

``FakeDeliveryStore`` keeps each job state in DynamoDB's wire format and rebuilds a fresh ``JobState``
on every read, so a test sees what a worker would read back, and a value the real table could not
hold fails to serialise here too. Its conditions are those of ``herald.adapters.store.delivery_store``.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from herald.adapters.store.delivery_store import AttemptRecord, DeliveryStore
from herald.adapters.store.models import (
    JobState,
    ProviderCredential,
    ProviderDomainAttribute,
    SealedAttribute,
    SendingDomain,
    TenantProfile,
    job_pk,
    tenant_pk,
)
from herald.adapters.store.sealed import seal_attribute
from herald.adapters.store.tenant_store import TenantNotFound, TenantRecords, TenantStore
from herald.adapters.vault import Purpose, Vault
from herald.domain.errors import DependencyError
from herald.domain.jobs import DEFAULT_PRIORITY, JobMessage, JobStatus, queue_priority
from herald.domain.providers import (
    Credential,
    Delivered,
    EmailProvider,
    FailureKind,
    KeyCheck,
    OutboundEmail,
    ProviderFailure,
    ProviderName,
)
from herald.settings import Channel, QueuePriority, Settings

CREATED_AT = "2025-01-01T00:00:00.000Z"


def settings_for_tests(**overrides: Any) -> Settings:
    """Settings as the template gives the workers, with fake queue URLs (nothing is dialled)."""
    queue_urls = {
        (channel, priority): f"https://sqs.test/{channel.value}-{priority.value}"
        for channel in Channel
        for priority in QueuePriority
    }
    values: dict[str, Any] = {
        "table_name": "herald-test",
        "kms_key_id": "alias/herald-test",
        "queue_urls": queue_urls,
        "dlq_url": "https://sqs.test/dlq",
        **overrides,
    }
    return Settings(**values)


class ManualClock:
    """Epoch seconds that only move when a test says so."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# ---------------------------------------------------------------- job store


class FakeDeliveryStore(DeliveryStore):
    """``DeliveryStore`` over dicts. Name a method in ``unavailable`` to make it raise
    ``DependencyError`` as the real one does when DynamoDB cannot be reached."""

    def __init__(self) -> None:
        self._states: dict[tuple[str, str], dict[str, Any]] = {}
        self._payloads: dict[tuple[str, str], dict[str, Any]] = {}
        self.suppressions: dict[tuple[str, str], dict[str, str]] = {}
        self.unavailable: set[str] = set()
        # Method names in call order: the DynamoDB round trips a delivery would make.
        self.calls: list[str] = []

    # -------------------------------------------------- test set-up and inspection

    def add_job(
        self,
        tenant_id: str,
        job_id: str,
        payload: dict[str, Any],
        *,
        channel: Channel = Channel.EMAIL,
        priority: int = DEFAULT_PRIORITY,
        max_attempts: int = 3,
    ) -> None:
        """A job as the API leaves it: PENDING, no attempt yet, payload stored beside the state."""
        self._write(
            JobState(
                job_pk(tenant_id, job_id),
                "STATE",
                job_id=job_id,
                tenant_id=tenant_id,
                type=channel.value,
                status=JobStatus.PENDING.value,
                priority=priority,
                queue=queue_priority(priority).value,
                attempts=0,
                max_attempts=max_attempts,
                created_at=CREATED_AT,
            )
        )
        self._payloads[(tenant_id, job_id)] = copy.deepcopy(payload)

    def set_state(self, tenant_id: str, job_id: str, **changes: Any) -> None:
        """Put the job into a situation a test needs (a crashed attempt, a stale counter)."""
        state = self._read(tenant_id, job_id)
        assert state is not None, f"no job {job_id}"
        for name, value in changes.items():
            setattr(state, name, value)
        self._write(state)

    def state(self, tenant_id: str, job_id: str) -> JobState:
        """The stored state, read without counting as a call of the code under test."""
        state = self._read(tenant_id, job_id)
        assert state is not None, f"no job {job_id}"
        return state

    # -------------------------------------------------- DeliveryStore

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
        self._called("claim")
        state = self._read(tenant_id, job_id)
        if state is None:
            return None  # the real condition fails on a missing item
        attempts = int(state.attempts)
        fresh = state.status == JobStatus.PENDING.value and attempts == seen_attempts
        abandoned = (
            state.status == JobStatus.PROCESSING.value
            and state.lease_until is not None
            and int(state.lease_until) < now
        )
        if not ((fresh or abandoned) and attempts < int(state.max_attempts)):
            return None
        state.status = JobStatus.PROCESSING.value
        state.attempts = attempts + 1
        state.lease_until = now + lease_seconds
        state.started_at = state.started_at or started_at
        self._write(state)
        return self._read(tenant_id, job_id)

    def current(self, tenant_id: str, job_id: str) -> JobState | None:
        self._called("current")
        return self._read(tenant_id, job_id)

    def payload(self, tenant_id: str, job_id: str) -> dict[str, Any]:
        self._called("payload")
        stored = self._payloads.get((tenant_id, job_id))
        if stored is None:
            raise DependencyError("job payload read failed: DoesNotExist")
        return copy.deepcopy(stored)

    def complete(self, tenant_id: str, job_id: str, record: AttemptRecord) -> bool:
        self._called("complete")

        def apply(state: JobState) -> None:
            state.status = JobStatus.COMPLETED.value
            state.completed_at = record.created_at
            if record.used_provider:
                state.used_provider = record.used_provider
            state.error_message = None

        return self._apply_outcome(tenant_id, job_id, record, apply)

    def fail(self, tenant_id: str, job_id: str, record: AttemptRecord, reason: str) -> bool:
        self._called("fail")

        def apply(state: JobState) -> None:
            state.status = JobStatus.FAILED.value
            state.completed_at = record.created_at
            state.error_message = reason
            if record.used_provider:
                state.used_provider = record.used_provider

        return self._apply_outcome(tenant_id, job_id, record, apply)

    def release_for_retry(
        self, tenant_id: str, job_id: str, record: AttemptRecord, reason: str, skip_providers: list[str]
    ) -> bool:
        self._called("release_for_retry")

        def apply(state: JobState) -> None:
            state.status = JobStatus.PENDING.value
            state.error_message = reason
            if skip_providers:
                state.skip_providers = list(skip_providers)

        return self._apply_outcome(tenant_id, job_id, record, apply)

    def is_suppressed(self, tenant_id: str, address: str) -> bool:
        self._called("is_suppressed")
        return (tenant_id, address.lower()) in self.suppressions

    def suppress(self, tenant_id: str, address: str, reason: str, source: str, created_at: str) -> None:
        self._called("suppress")
        self.suppressions[(tenant_id, address.lower())] = {
            "address": address.lower(),
            "reason": reason,
            "source": source,
            "createdAt": created_at,
        }

    # -------------------------------------------------- internals

    def _apply_outcome(
        self, tenant_id: str, job_id: str, record: AttemptRecord, apply: Callable[[JobState], None]
    ) -> bool:
        """The ownership condition of the real ``_record``: still PROCESSING, still this attempt."""
        state = self._read(tenant_id, job_id)
        if (
            state is None
            or state.status != JobStatus.PROCESSING.value
            or int(state.attempts) != record.attempt
        ):
            return False
        apply(state)
        state.delivery_logs = [*(state.delivery_logs or []), record.as_attribute()]
        state.lease_until = None
        self._write(state)
        return True

    def _called(self, method: str) -> None:
        self.calls.append(method)
        if method in self.unavailable:
            raise DependencyError(f"job table unavailable in {method}")

    def _read(self, tenant_id: str, job_id: str) -> JobState | None:
        raw = self._states.get((tenant_id, job_id))
        return None if raw is None else JobState.from_raw_data(copy.deepcopy(raw))

    def _write(self, state: JobState) -> None:
        self._states[(str(state.tenant_id), str(state.job_id))] = state.serialize()


# ---------------------------------------------------------------- queue and dead letters


@dataclass(frozen=True)
class Enqueued:
    message: JobMessage
    priority: QueuePriority
    delay_seconds: int


class FakeQueue:
    """Records what was enqueued, after a trip through the wire format as SQS would carry it."""

    def __init__(self) -> None:
        self.sent: deque[Enqueued] = deque()
        self.failure: Exception | None = None

    def enqueue(self, message: JobMessage, priority: QueuePriority, delay_seconds: int = 0) -> None:
        if self.failure is not None:
            raise self.failure
        self.sent.append(Enqueued(JobMessage.from_json(message.to_json()), priority, delay_seconds))

    def take(self) -> Enqueued:
        return self.sent.popleft()


class FakeDeadLetters:
    """Keeps each record as the SQS body would carry it (JSON, non-JSON values as strings)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.failure: Exception | None = None

    def send(self, record: dict[str, Any]) -> None:
        if self.failure is not None:
            raise self.failure
        self.records.append(json.loads(json.dumps(record, default=str)))


# ---------------------------------------------------------------- email providers

# A scripted answer: None delivers; an exception is raised (a ProviderFailure, or anything else to
# play an adapter bug).
Answer = Exception | None


def transient(
    provider: ProviderName, status: int = 500, retry_after_seconds: float | None = None
) -> ProviderFailure:
    return ProviderFailure(
        provider,
        FailureKind.TRANSIENT,
        "the provider is having trouble",
        status=status,
        retry_after_seconds=retry_after_seconds,
    )


def provider_permanent(provider: ProviderName) -> ProviderFailure:
    return ProviderFailure(provider, FailureKind.PROVIDER_PERMANENT, "the API key is invalid", status=401)


def message_permanent(
    provider: ProviderName, *, suppress_recipient: bool = False, code: str | None = None
) -> ProviderFailure:
    return ProviderFailure(
        provider,
        FailureKind.MESSAGE_PERMANENT,
        "the recipient address is invalid",
        status=422,
        code=code,
        suppress_recipient=suppress_recipient,
    )


@dataclass
class FakeProvider:
    """Answers each send with the next scripted answer; the last answer repeats once the script
    runs out (an empty script always delivers)."""

    provider: ProviderName
    script: list[Answer] = field(default_factory=list)
    sent: list[tuple[OutboundEmail, Credential]] = field(default_factory=list)

    @property
    def name(self) -> ProviderName:
        return self.provider

    def send(self, email: OutboundEmail, credential: Credential) -> Delivered:
        self.sent.append((email, credential))
        answer = self.script[min(len(self.sent), len(self.script)) - 1] if self.script else None
        if answer is not None:
            raise answer
        return Delivered(self.provider, f"{self.provider.value.lower()}-{len(self.sent)}")

    def check_key(self, credential: Credential) -> KeyCheck:
        raise AssertionError("the delivery path never checks keys")


class FakeProviders:
    """The provider registry of ``EmailAttempt``: one ``FakeProvider`` per name."""

    def __init__(self) -> None:
        self.by_name = {name: FakeProvider(name) for name in ProviderName}
        # Provider names in the order they were called, across all attempts.
        self.calls: list[str] = []

    def __call__(self, name: ProviderName) -> EmailProvider:
        self.calls.append(name.value)
        return self.by_name[name]

    def script(self, name: ProviderName, *answers: Answer) -> None:
        self.by_name[name].script = list(answers)


# ---------------------------------------------------------------- tenants


class FakeTenantStore(TenantStore):
    """The tenant partitions behind a real ``TenantDirectory``, sealed with a real ``Vault``.
    ``unavailable`` makes ``load`` fail as the real one does when DynamoDB cannot be reached."""

    def __init__(self, vault: Vault) -> None:
        self._vault = vault
        self._tenants: dict[str, TenantRecords] = {}
        self.loads = 0
        self.unavailable = False

    def add_tenant(
        self,
        tenant_id: str,
        plan: str,
        *,
        provider_keys: Sequence[tuple[ProviderName, str]] = (),
        signing_secret: str | None = None,
        verified_domains: Sequence[str] = (),
    ) -> None:
        """``provider_keys`` in the tenant's priority order."""
        profile = TenantProfile(
            tenant_pk(tenant_id),
            "PROFILE",
            tenant_id=tenant_id,
            name=tenant_id,
            email=f"ops@{tenant_id}.example",
            plan=plan,
            created_at=CREATED_AT,
            api_key_hash="0" * 64,
            signing_secret=self._seal(tenant_id, Purpose.SIGNING_SECRET, signing_secret)
            if signing_secret
            else None,
        )
        providers = [
            ProviderCredential(
                tenant_pk(tenant_id),
                f"PROVIDER#{name.value}",
                provider=name.value,
                priority=index + 1,
                api_key=self._seal(tenant_id, Purpose.PROVIDER_KEY, key),
                last_four=key[-4:],
                added_at=CREATED_AT,
            )
            for index, (name, key) in enumerate(provider_keys)
        ]
        domains = [
            SendingDomain(
                tenant_pk(tenant_id),
                f"DOMAIN#{domain}",
                domain=domain,
                created_at=CREATED_AT,
                # PynamoDB's MapAttribute constructor is untyped.
                providers=[
                    ProviderDomainAttribute(  # type: ignore[no-untyped-call]
                        provider="SENDGRID", provider_domain_id="d-1", verified=True
                    )
                ],
            )
            for domain in verified_domains
        ]
        self._tenants[tenant_id] = TenantRecords(profile, providers, domains)

    def records_of(self, tenant_id: str) -> TenantRecords:
        """The stored records, for a test to alter (not counted as a load)."""
        return self._tenants[tenant_id]

    def load(self, tenant_id: str) -> TenantRecords:
        self.loads += 1
        if self.unavailable:
            raise DependencyError("tenant table read failed: ServiceUnavailable")
        records = self._tenants.get(tenant_id)
        if records is None:
            raise TenantNotFound(tenant_id)
        return records

    def profile(self, tenant_id: str) -> TenantProfile:
        return self.load(tenant_id).profile

    def _seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedAttribute:
        return seal_attribute(self._vault, tenant_id, purpose, plaintext)
