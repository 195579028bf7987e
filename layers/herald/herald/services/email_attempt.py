"""One attempt at an email: a pass over the tenant's providers in order, stopping at the first
success.

Provider-level permanent failures move on and are skipped by later attempts; a message-level
permanent failure ends the job at once; transient failures move on and make the pass retryable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from msgspec.structs import replace

from herald.domain.account import TenantRecords
from herald.domain.addresses import Suppression
from herald.domain.attempts import AttemptOutcome
from herald.domain.clock import now_iso
from herald.domain.errors import DependencyError
from herald.domain.job_records import Claim, JobMessage
from herald.domain.notifications import EmailNotification, NotificationRequest
from herald.domain.plans import Plan
from herald.domain.providers import Credential, Delivered, FailureKind, ProviderFailure, Routing
from herald.domain.secrets import SecretTampered
from herald.domain.vendors import PLATFORM_PROVIDERS as PLATFORM_ORDER
from herald.domain.vendors import ProviderName
from herald.observability import logger
from herald.services.health import BREAKER_OPEN, MOVED_BACK, ProviderHealth, ProviderPlan
from herald.services.ports.platform import AttachmentStore
from herald.services.ports.providers import EmailProviders
from herald.services.ports.tenants import Suppressions
from herald.services.tenant_directory import TenantDirectory, tenant_for_pass
from herald.services.unsubscribes import UnsubscribeGate

# Free-plan mail goes through the platform's own account.
PLATFORM_PROVIDERS: tuple[str, ...] = tuple(name.value for name in PLATFORM_ORDER)
SUPPRESSED = "recipient suppressed"
ATTACHMENT_GONE = "an attachment is no longer stored (its retention ended)"


def _since(started: float) -> int:
    """Milliseconds since ``started`` (``time.monotonic``): a provider call's latency."""
    return round((time.monotonic() - started) * 1000)


def provider_pass(
    plan: str, tenant_order: Sequence[str], email: EmailNotification, skip: Sequence[str]
) -> list[str]:
    """The providers of one attempt, in order: forced provider (+ fallback), or the tenant's list."""
    if plan == Plan.FREE:
        order: list[str] = list(PLATFORM_PROVIDERS)
    else:
        order = [name.value for name in email.forced_providers()] or list(tenant_order)
    return [name for name in order if name not in skip]


class EmailAttempt:
    def __init__(
        self,
        *,
        directory: TenantDirectory,
        suppressions: Suppressions,
        unsubscribes: UnsubscribeGate,
        attachments: AttachmentStore,
        providers: EmailProviders,
        platform_sender: str,
        health: ProviderHealth | None = None,
    ) -> None:
        self._directory = directory
        self._suppressions = suppressions
        self._unsubscribes = unsubscribes
        self._attachments = attachments
        self._providers = providers
        self._platform_sender = platform_sender
        self._health = health

    def run(self, message: JobMessage, request: NotificationRequest, claim: Claim) -> AttemptOutcome:
        email = request.notification
        if not isinstance(email, EmailNotification):
            raise TypeError(f"job {message.job_id} is not an email")
        tenant_id = message.tenant_id
        tenant = tenant_for_pass(lambda: self._directory.records(tenant_id), "provider keys unavailable")
        if isinstance(tenant, AttemptOutcome):
            return tenant
        refused = SUPPRESSED if self._suppressions.is_suppressed(tenant_id, email.to) else None
        refused = refused or self._unsubscribes.stopped(tenant_id, email)
        if refused is not None:
            # The recipient said no: no provider is asked, and no retry changes it.
            return AttemptOutcome(
                delivered=False, error_message=refused, final=True, caused_by_tenant=True, retryable=False
            )
        tenant_order = [credential.provider for credential in tenant.providers]
        order = provider_pass(message.plan, tenant_order, email, claim.skip_providers)
        if not order:
            reason = (
                "every provider failed permanently"
                if claim.skip_providers
                else "no email provider is available for this job"
            )
            return AttemptOutcome(delivered=False, error_message=reason, final=True)
        routing = Routing(
            job_id=message.job_id,
            tenant_id=tenant_id,
            from_address=email.sender or self._default_sender(tenant, message.plan),
            headers=self._unsubscribes.headers(tenant_id, email),
        )
        loaded = self._with_files(email)
        if isinstance(loaded, AttemptOutcome):
            return loaded
        return self._pass(loaded, routing, tenant, message.plan, self._plan(order, tenant, message.plan))

    def _with_files(self, email: EmailNotification) -> EmailNotification | AttemptOutcome:
        """``email`` with its attachments' content read from the bucket, once for the whole pass
        (one S3 GetObject each), so every provider of the pass sends the same files."""
        stored = email.stored_attachments()
        if not stored:
            return email
        try:
            files = tuple(replace(item, content=self._attachments.get(item.key)) for item in stored)
        except KeyError:
            return AttemptOutcome(delivered=False, error_message=ATTACHMENT_GONE, final=True)
        except DependencyError as exc:
            return AttemptOutcome(delivered=False, error_message=f"attachments unavailable: {exc}")
        return replace(email, attachments=files)

    def _plan(self, order: list[str], tenant: TenantRecords, plan: str) -> ProviderPlan:
        """The pass's order with open breakers moved back (free plan: the platform's breakers)."""
        if self._health is None:
            return ProviderPlan(order, {})
        if plan == Plan.FREE:
            return self._health.plan(order, None)
        return self._health.plan(order, tenant.profile.tenant_id, tenant.breakers)

    def _default_sender(self, tenant: TenantRecords, plan: str) -> str:
        """Without a `from`, paid mail goes out from the tenant's first verified domain."""
        if plan != Plan.FREE:
            domains = tenant.verified_domains()
            if domains:
                return f"notifications@{domains[0]}"
        return self._platform_sender

    def _pass(
        self,
        email: EmailNotification,
        routing: Routing,
        tenant: TenantRecords,
        plan: str,
        health: ProviderPlan,
    ) -> AttemptOutcome:
        outcome = AttemptOutcome(delivered=False)
        outcome.tried.extend(
            {"provider": name, "outcome": MOVED_BACK, "error": BREAKER_OPEN} for name in health.moved_back
        )
        all_permanent = True
        for name in health.order:
            provider = ProviderName(name)
            started = time.monotonic()
            try:
                delivered = self._send(provider, email, routing, tenant, plan)
            except ProviderFailure as failure:
                self._note_failure(outcome, failure, email, routing, _since(started))
                if failure.kind is FailureKind.MESSAGE_PERMANENT:
                    # The recipient or the content was refused: the same message fails again.
                    outcome.final = outcome.caused_by_tenant = True
                    outcome.retryable = False
                    return outcome
                if failure.kind is FailureKind.TRANSIENT and self._health is not None:
                    self._health.failed(health, name, str(failure))
                all_permanent = all_permanent and failure.kind is FailureKind.PROVIDER_PERMANENT
                continue
            if self._health is not None:
                self._health.succeeded(health, name)
            outcome.tried.append(
                {
                    "provider": name,
                    "outcome": "delivered",
                    "messageId": delivered.provider_message_id,
                    "latencyMs": _since(started),
                }
            )
            outcome.delivered, outcome.used_provider, outcome.error_message = True, name, None
            return outcome
        outcome.final = all_permanent
        return outcome

    def _send(
        self,
        provider: ProviderName,
        email: EmailNotification,
        routing: Routing,
        tenant: TenantRecords,
        plan: str,
    ) -> Delivered:
        credential = self._credential(provider, tenant, plan)
        return self._providers(provider).send(email, routing, credential)

    def _credential(self, provider: ProviderName, tenant: TenantRecords, plan: str) -> Credential:
        if plan == Plan.FREE:
            # Platform providers authenticate with the platform's own IAM role.
            return Credential(api_key="")
        stored = tenant.provider(provider.value)
        if stored is None:
            raise ProviderFailure(
                provider, FailureKind.PROVIDER_PERMANENT, "no key is configured for this provider"
            )
        try:
            return self._directory.credential(stored, tenant.profile.tenant_id)
        except SecretTampered as exc:
            raise ProviderFailure(
                provider, FailureKind.PROVIDER_PERMANENT, "the stored key cannot be decrypted"
            ) from exc
        except DependencyError as exc:
            # KMS is unreachable: this pass fails, a later one may not.
            raise ProviderFailure(provider, FailureKind.TRANSIENT, f"key unavailable: {exc}") from exc

    def _note_failure(
        self,
        outcome: AttemptOutcome,
        failure: ProviderFailure,
        email: EmailNotification,
        routing: Routing,
        latency_ms: int,
    ) -> None:
        name = failure.provider.value
        outcome.tried.append(
            {
                "provider": name,
                "outcome": failure.kind.value,
                "status": failure.status,
                "code": failure.code,
                "error": failure.reason,
                "latencyMs": latency_ms,
            }
        )
        outcome.used_provider = name
        outcome.error_message = str(failure)
        if failure.kind is FailureKind.PROVIDER_PERMANENT:
            outcome.skip_providers.append(name)
        if failure.retry_after_seconds is not None:
            outcome.retry_after_seconds = max(outcome.retry_after_seconds or 0.0, failure.retry_after_seconds)
        if failure.suppress_recipient:
            self._suppress(email.to, routing, failure)

    def _suppress(self, recipient: str, routing: Routing, failure: ProviderFailure) -> None:
        suppression = Suppression(
            address=recipient.lower(),
            reason="provider reported inactive recipient",
            created_at=now_iso(),
            source=failure.provider.value,
        )
        try:
            self._suppressions.suppress(routing.tenant_id, suppression)
        except DependencyError as exc:
            # The job still fails correctly; the next send will learn it from the provider again.
            logger.error("could not record suppression", extra={"job_id": routing.job_id, "reason": str(exc)})
