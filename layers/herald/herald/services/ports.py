"""The ports of the services: what they need from storage, queues, key management, providers and the
network, as small protocols over domain values. Adapters implement them; composition roots wire them;
tests substitute in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    # Only named in signatures: a function imports the domain modules its own path uses.
    from herald.domain.account import ApiKeyRecord, TenantProfile, TenantRecords, Usage
    from herald.domain.activity import DayCounts
    from herald.domain.addresses import Suppression
    from herald.domain.alerts import AlertWindow, ChatOutcome, JobAlert, Notice
    from herald.domain.breakers import Breaker, BreakerKey
    from herald.domain.dead_letters import FailedJobCopy, HeldMessage, UnreadableMessage
    from herald.domain.inbound import DeliveryEvent, IgnoredEvent, Processor, SubscriptionEvent
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
    from herald.domain.plans import Quota
    from herald.domain.providers import (
        Credential,
        Delivered,
        DomainRegistration,
        DomainVerification,
        KeyCheck,
        OutboundEmail,
        SendingDomain,
        StoredProvider,
    )
    from herald.domain.scheduling import DueJob
    from herald.domain.secrets import Purpose, SealedSecret
    from herald.domain.signin import PendingCode, Session
    from herald.domain.vendors import ProviderName
    from herald.domain.webhooks import OutboundWebhook, WebhookOutcome


# ---------------------------------------------------------------- storage


class Counters(Protocol):
    """Per-tenant request and usage counters (one small item per tenant and billing period)."""

    def charge(
        self,
        tenant_id: str,
        period: str,
        minute: str,
        channel: Channel,
        *,
        rate_limit: int,
        quota: Quota | None,
    ) -> None:
        """Count one request in ``minute`` and one job in ``period`` and on the day of ``minute``
        (``YYYYmmddHHMM``), within their limits, or raise ``RateLimited`` / ``QuotaExhausted`` and
        count nothing."""

    def refund(self, tenant_id: str, period: str, channel: Channel, minute: str | None) -> None:
        """Take back the job of a request that turned out to be a duplicate (charged in ``minute``),
        or, with ``minute`` None, only the quota of a job that stays among its day's (a cancelled one)."""

    def usage(self, tenant_id: str, period: str) -> Usage: ...


class ActivityCounters(Protocol):
    """A tenant's jobs by day: the accepted ones (counted by ``Counters.charge``) and the outcomes,
    which TallyFunction adds from the table's stream, one write per tenant-day and stream batch."""

    def add_outcomes(self, changes: Mapping[tuple[str, date], Mapping[str, int]], token: str) -> None:
        """Add each tenant-day's ``changes`` (``outcome_field`` -> count, negative to take back) to its
        counts. Repeated with the same ``token`` and changes within ten minutes, it adds only what
        the earlier call did not (a call that raised may have added some tenant-days): a retried
        stream batch, in this container or another, is not counted twice."""

    def days(self, tenant_id: str, first: date, last: date) -> list[DayCounts]:
        """The counts of the days from ``first`` to ``last`` that have any (one bounded read)."""


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
        self, message: JobMessage, log: DeliveryLog, reason: str, skip_providers: Sequence[str]
    ) -> bool: ...

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


class Breakers(Protocol):
    """The shared circuit breakers (``herald.domain.breakers``), one small item each."""

    def read(self, keys: Sequence[BreakerKey]) -> Mapping[BreakerKey, Breaker]:
        """The stored ones among ``keys`` (1 BatchGetItem)."""

    def with_profile(self, tenant_id: str, key: BreakerKey) -> tuple[TenantProfile, Breaker | None]:
        """The tenant's profile and one of its breakers, read together (1 BatchGetItem);
        ``TenantNotFound`` when there is no such tenant."""

    def save(self, breaker: Breaker) -> bool:
        """Store ``breaker`` if the stored one is still at ``breaker.version - 1`` (absent for 1);
        False when another worker changed it meanwhile."""

    def endpoints(self, tenant_id: str) -> list[Breaker]:
        """The tenant's endpoint breakers, by origin (1 Query of its endpoints' partition)."""


class Suppressions(Protocol):
    def is_suppressed(self, tenant_id: str, address: str) -> bool: ...

    def suppress(self, tenant_id: str, suppression: Suppression) -> None: ...

    def entries(self, tenant_id: str) -> Iterator[Suppression]: ...

    def delete(self, tenant_id: str, address: str) -> bool:
        """False when the address was not suppressed."""


class TenantStore(Protocol):
    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    def tenant_for_email(self, address_key: str) -> str | None:
        """The tenant that signs in with this address (``herald.domain.signin.address_key``); the
        first tenant created with an address claims it."""

    def profile(self, tenant_id: str) -> TenantProfile:
        """``TenantNotFound`` when there is no such tenant."""

    def load(self, tenant_id: str) -> TenantRecords:
        """``TenantNotFound`` when there is no such tenant."""

    def create(self, profile: TenantProfile) -> None: ...

    def due_for_reset(self, now: datetime) -> Iterator[TenantProfile]:
        """The tenants whose period ended or whose paid plan's grace ended by ``now``."""

    def all_profiles(self) -> Iterator[TenantProfile]: ...

    def tenant_ids(self) -> Iterator[str]:
        """Every tenant's id, oldest first, from the index alone (no profile is read)."""

    def update_profile(self, tenant_id: str, **changes: object) -> TenantProfile:
        """Set (or, with None, remove) profile attributes; ``TenantNotFound`` when absent."""

    def update_profile_if(
        self, tenant_id: str, expected: Mapping[str, object], changes: Mapping[str, object]
    ) -> TenantProfile:
        """``update_profile`` only while the ``expected`` attributes still hold those values (None:
        absent); ``ProfileChanged`` otherwise."""

    def rotate_api_key(
        self,
        tenant_id: str,
        old_hash: str,
        new_hash: str,
        created_at: str,
        old_valid_until: datetime | None,
    ) -> None:
        """New key in, profile points at it; the old one kept until ``old_valid_until``, or, without
        a grace period, revoked together with every key still in an earlier rotation's grace;
        ``KeyChanged`` when the current key moved meanwhile."""


class SignInStore(Protocol):
    """One-time codes (one per address) and the request throttles of the sign-in routes."""

    def count_request(self, scope: str, window: int, limit: int) -> bool:
        """Count one code request against ``scope`` in the window starting at ``window`` (epoch
        seconds); False, counting nothing, when ``limit`` requests were counted already."""

    def save_code(self, code: PendingCode) -> None:
        """Store the address's code, replacing any earlier one."""

    def code(self, address_key: str) -> PendingCode | None: ...

    def wrong_try(self, code: PendingCode) -> None:
        """Count a wrong try of this very code (a newer code of the address is left alone)."""

    def use_code(self, code: PendingCode) -> bool:
        """Remove this very code, unless it was used, replaced or locked meanwhile (False)."""


class SessionStore(Protocol):
    def create(self, session: Session) -> None: ...

    def get(self, token_digest: str) -> Session | None: ...

    def end(self, token_digest: str) -> None: ...


class PlatformMail(Protocol):
    def send(self, to: str, subject: str, text: str) -> None:
        """Send a message from the platform's own address; ``DependencyError`` when it cannot."""


class AccountStore(Protocol):
    def save_provider(self, tenant_id: str, provider: StoredProvider) -> None: ...

    def delete_provider(
        self, tenant_id: str, removed: StoredProvider, below: Sequence[StoredProvider]
    ) -> None: ...

    def swap_priorities(
        self, tenant_id: str, moved: StoredProvider, new_priority: int, holder: StoredProvider | None
    ) -> None: ...

    def set_signing_secret(
        self,
        tenant_id: str,
        secret: SealedSecret,
        created_at: str,
        *,
        require_absent: bool,
        previous: SealedSecret | None = None,
        previous_valid_until: str | None = None,
    ) -> None:
        """``AlreadyExists`` when ``require_absent`` and a secret is set."""

    def delete_signing_secret(self, tenant_id: str) -> None: ...

    def claim_domain(self, tenant_id: str, domain: SendingDomain) -> None:
        """``DomainTaken`` when another tenant owns it."""

    def domain(self, tenant_id: str, name: str) -> SendingDomain | None: ...

    def save_domain(self, tenant_id: str, domain: SendingDomain) -> None: ...

    def delete_domain(self, tenant_id: str, name: str) -> None: ...


class InboundLedger(Protocol):
    """Marks of inbound events already handled (the dedupe records), one per event key."""

    def mark(self, key: str, expires_at: int | None) -> bool:
        """Set the mark (kept until ``expires_at``, epoch seconds; None: for good); False when it is
        set already, that is, when the event is a duplicate."""

    def unmark(self, key: str) -> None:
        """Remove a mark whose event could not be processed, so its redelivery is processed."""


class JobEvents(Protocol):
    """The delivery events of jobs, stored in each job's own partition."""

    def expiry(self, tenant_id: str, job_id: str) -> int | None:
        """When the job's items expire (epoch seconds); None when ``tenant_id`` has no job with this
        id that was ever handed to a provider."""

    def add(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent, expires_at: int) -> bool:
        """Store the event once, keyed by its provider and ``event_id``; False when it is stored
        already (a duplicate)."""

    def remove(self, tenant_id: str, job_id: str, event_id: str, event: JobEvent) -> None: ...


class BillingLinks(Protocol):
    """Which tenant a payment processor's customer or subscription belongs to."""

    def tenant_for(self, processor: Processor, ref: str) -> str | None: ...

    def link(self, processor: Processor, refs: Sequence[str], tenant_id: str) -> None: ...


# ---------------------------------------------------------------- queues, keys, network


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


# ---------------------------------------------------------------- alerting


class Alerts(Protocol):
    def dead_lettered(self, alert: JobAlert) -> None:
        """Tell the operators about a job sent to the dead-letter queue (rate-limited). Never raises:
        the dead-letter copy is the record, the alert only points at it."""


class AlertPublisher(Protocol):
    def publish(self, subject: str, message: dict[str, Any]) -> None:
        """Publish to the alert topic; ``DependencyError`` when it cannot be reached."""


class AlertCounter(Protocol):
    def count(self, window: AlertWindow) -> int:
        """Count one dead-lettered job in ``window``; the window's count, this one included."""


class ChatNotifier(Protocol):
    def post(self, notice: Notice, queue_depth: int | None) -> ChatOutcome:
        """Post the notice to the operators' chat; ``DependencyError`` when it could not be reached
        or answered with a server error (a retry may help)."""


class CacheStats(Protocol):
    """Hit and miss counts of a cache, published as metrics (misses of the data key cache are KMS calls)."""

    @property
    def hits(self) -> int: ...

    @property
    def misses(self) -> int: ...


class SecretBox(Protocol):
    """Seals and opens tenant secrets (``SecretTampered`` when a record is not this tenant's)."""

    def seal(self, tenant_id: str, purpose: Purpose, plaintext: str) -> SealedSecret: ...

    def open(self, tenant_id: str, purpose: Purpose, sealed: SealedSecret) -> str: ...


class UrlGuard(Protocol):
    def __call__(self, url: str) -> object:
        """Raises ``UrlNotAllowed`` for a URL Herald may not call."""


class WebhookSender(Protocol):
    def __call__(self, hook: OutboundWebhook, *, secrets: Sequence[str]) -> WebhookOutcome: ...


class EmailProvider(Protocol):
    """What the delivery engine needs: send one email, and a cheap live check of the credential."""

    @property
    def name(self) -> ProviderName: ...

    def send(self, email: OutboundEmail, credential: Credential) -> Delivered:
        """Hand the email to the provider; raises ``ProviderFailure``."""

    def check_key(self, credential: Credential) -> KeyCheck:
        """Ask the provider whether the credential can do what Herald needs; raises
        ``ProviderFailure`` when the provider cannot answer (timeouts, 5xx, 429)."""


class DomainProvider(EmailProvider, Protocol):
    """A tenant provider: also registers, verifies and deletes the tenant's sending domains."""

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration: ...

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification: ...

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        """Remove the domain at the provider; a domain already gone counts as deleted."""


class EmailProviders(Protocol):
    def __call__(self, name: ProviderName) -> EmailProvider: ...


class DomainProviders(Protocol):
    def __call__(self, name: ProviderName) -> DomainProvider: ...


# ---------------------------------------------------------------- inbound webhooks


# ``(headers, raw_body, secret, now)``: raises ``InvalidSignature`` unless the request provably comes
# from its sender, ``UnusableSecret`` when the stored secret cannot verify anything.
Verify = Callable[[Mapping[str, str], bytes, str, float], None]


class DeliveryWebhook(msgspec.Struct, frozen=True):
    """An email provider's event webhook: verified with the tenant's stored secret, then read as
    events (``MalformedPayload`` for a body that is not the provider's documented shape)."""

    provider: ProviderName
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[DeliveryEvent | IgnoredEvent]]
    # Raises UnusableSecret for a secret that could never verify a request.
    check_secret: Callable[[str], object]
    # Where the signature covers a token rather than the body: the verified request's token, which
    # the sender never signs twice. It is marked used, so a captured signature carries no other body.
    single_use: Callable[[bytes, Mapping[str, str]], str] | None = None


class PaymentWebhook(msgspec.Struct, frozen=True):
    """A payment processor's webhook to the platform, verified with the platform's secret."""

    processor: Processor
    verify: Verify
    parse: Callable[[bytes, Mapping[str, str]], Sequence[SubscriptionEvent | IgnoredEvent]]
