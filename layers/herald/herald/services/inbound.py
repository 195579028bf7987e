"""Inbound webhooks: email providers reporting what happened to mail, and payment processors
reporting subscriptions.

Anyone can post to these URLs, so nothing is read, stored or acted on before the sender's signature
(or password) is verified on the raw body exactly as received. A refused request leaves nothing
behind but a log line with the reason (never a header value, a secret or the body).

Every verified event is handled once. Its mark is set first, with a conditional write, so two
deliveries of one event racing each other act once; when acting fails the mark is removed again and
the sender gets a 5xx, so its retry is processed anew.

Delivery events (DynamoDB per event): 1 GetItem of the job's small status item (whether the URL's
tenant has that job, and how long it is kept), then 1 conditional PutItem: the event item in the
job's partition, which is its own mark, or, for an event of no job of this tenant that suppresses
or unsubscribes, an inbound mark; plus 1 PutItem of the suppression for a hard bounce or complaint,
or 1 conditional PutItem of an unsubscribe from every topic for a provider's unsubscribe. The
request itself costs 1 Query of the tenant's partition (its webhook secret) and, in a warm container,
no KMS call; where the sender signs a single-use token instead of the body, 1 conditional PutItem
marks the token used.

Payment events: 1 conditional PutItem of the mark, 1 GetItem of the tenant's profile (Paystack
events without the tenant's id: 1-2 GetItems of the processor's links first; events with it: 1
PutItem per customer or subscription link), and 1 conditional UpdateItem of the profile when the
billing changes. The platform secret is read from SSM once per container. A payment that would grant
or extend a plan without paying its price changes nothing: it is logged with the reason, counted
(``PaymentsRefused``) and published to the alert topic (1 SNS publish), and acknowledged as ignored,
since the processor would retry any other answer for days; if the alert cannot be published the
mark is removed and the answer is 503, so the processor's retry alerts again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

import msgspec

from herald.domain.access import Actor, ActorKind
from herald.domain.account import TenantProfile
from herald.domain.addresses import Suppression
from herald.domain.alerts import PaymentAlert
from herald.domain.audit import AuditAction, AuditEntry, changed_fields, entry
from herald.domain.billing import (
    PaymentRefused,
    PlanCatalog,
    billing_after,
    billing_of,
    profile_changes,
    profile_fields,
)
from herald.domain.clock import iso, utc_now
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.inbound import (
    DeliveryEvent,
    IgnoredEvent,
    InvalidSignature,
    MalformedPayload,
    SubscriptionChange,
    SubscriptionEvent,
    UnusableSecret,
)
from herald.domain.job_records import JobEvent
from herald.domain.secrets import Purpose, SecretTampered
from herald.domain.unsubscribes import ALL_TOPICS, Unsubscribe, UnsubscribeSource
from herald.observability import count, logger
from herald.services.outcomes import ProfileChanged, TenantNotFound
from herald.services.ports.jobs import JobEvents
from herald.services.ports.platform import AlertPublisher, SecretBox
from herald.services.ports.providers import DeliveryWebhook, InboundLedger, PaymentWebhook, Verify
from herald.services.ports.tenants import BillingLinks, Suppressions, TenantStore
from herald.services.ports.unsubscribes import Unsubscribes

# Marks of delivery events that belong to no job outlive every provider's retries (72 hours at the
# longest). Payment marks are kept for good: Paystack signs no timestamp, so a captured request could
# otherwise be replayed once its mark is gone.
DELIVERY_MARK_SECONDS = 30 * 24 * 3600
# Marks of used tokens outlive the window a signature is fresh in (5 minutes either way), so a token
# reused while its signature would still verify always meets its mark.
TOKEN_MARK_SECONDS = 3600
# A processor may deliver several events of one subscription at once (Polar: updated, canceled and
# revoked together): each applies its change to the billing it read, or reads again.
BILLING_WRITE_ATTEMPTS = 3

E = TypeVar("E")


class InboundRequest(msgspec.Struct, frozen=True):
    headers: Mapping[str, str]
    raw_body: bytes


class Outcome(StrEnum):
    RECORDED = "recorded"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"


class Receipt(msgspec.Struct):
    """What a verified request brought: events acted on, duplicates, events of no use to Herald."""

    outcomes: dict[Outcome, int] = msgspec.field(default_factory=lambda: dict.fromkeys(Outcome, 0))

    def add(self, outcome: Outcome) -> None:
        self.outcomes[outcome] += 1

    def publish(self, source: str) -> None:
        for outcome, number in self.outcomes.items():
            if number:
                count("InboundEvents", {"source": source, "outcome": outcome.value}, value=number)


def _not_found() -> HeraldError:
    # The same answer whether the tenant is unknown or has no usable secret for this provider.
    return HeraldError("No webhook is configured at this URL.", ErrorCode.WEBHOOK_NOT_FOUND)


def _verified(verify: Verify, request: InboundRequest, secret: str, now: float, source: str) -> None:
    """Let the request through only if its sender is proven; 401 otherwise, 404 for a secret that
    cannot verify anything (a set-up problem: nothing could ever pass)."""
    try:
        verify(request.headers, request.raw_body, secret, now)
    except InvalidSignature as exc:
        raise _refusal(source, exc.reason) from None
    except UnusableSecret as exc:
        logger.error("inbound webhook secret unusable", extra={"source": source, "reason": exc.reason})
        raise _not_found() from None


def _refusal(source: str, reason: str) -> HeraldError:
    """A request whose sender is not proven: logged and counted, answered 401."""
    logger.warning("inbound webhook refused", extra={"source": source, "reason": reason})
    count("InboundRefused", {"source": source})
    return HeraldError(f"The webhook is not verified: {reason}.", ErrorCode.INVALID_SIGNATURE)


def _parsed(parse: Callable[[bytes, Mapping[str, str]], Sequence[E]], request: InboundRequest) -> Sequence[E]:
    try:
        return parse(request.raw_body, request.headers)
    except MalformedPayload as exc:
        raise HeraldError(f"The webhook body cannot be read: {exc.reason}.", ErrorCode.INVALID_JSON) from None


def _undone(undo: Callable[[], None], what: str) -> None:
    """Take back a mark after a failure; if that fails as well, the redelivery will be dropped as
    a duplicate, which the error log says."""
    try:
        undo()
    except DependencyError as exc:
        logger.error("inbound mark not removed", extra={"what": what, "reason": str(exc)})


class DeliveryWebhooks:
    """One email provider's events for one tenant at a time (the tenant is in the URL)."""

    def __init__(
        self,
        *,
        webhook: DeliveryWebhook,
        tenants: TenantStore,
        secrets: SecretBox,
        events: JobEvents,
        ledger: InboundLedger,
        suppressions: Suppressions,
        unsubscribes: Unsubscribes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._webhook = webhook
        self._unsubscribes = unsubscribes
        self._tenants = tenants
        self._secrets = secrets
        self._events = events
        self._ledger = ledger
        self._suppressions = suppressions
        self._clock = clock

    def receive(self, tenant_id: str, request: InboundRequest) -> Receipt:
        provider = self._webhook.provider.value
        now = self._clock()
        _verified(self._webhook.verify, request, self._secret(tenant_id), now, provider)
        release = self._use_token(tenant_id, request, now)
        receipt = Receipt()
        try:
            for event in _parsed(self._webhook.parse, request):
                receipt.add(self._record(tenant_id, event, now))
        except DependencyError:
            # The sender retries a 503 with the same signed token: it must pass then.
            _undone(release, "used token")
            raise
        receipt.publish(provider)
        return receipt

    def _use_token(self, tenant_id: str, request: InboundRequest, now: float) -> Callable[[], None]:
        """Mark a single-use token of the request (where the sender signs one) as used; how to
        release it again. A token used before is refused like a forged signature."""
        if self._webhook.single_use is None:
            return lambda: None
        provider = self._webhook.provider.value
        key = f"{provider}#{tenant_id}#token#{self._webhook.single_use(request.raw_body, request.headers)}"
        if not self._ledger.mark(key, int(now) + TOKEN_MARK_SECONDS):
            raise _refusal(provider, "its signed token was used before")
        return lambda: self._ledger.unmark(key)

    def _secret(self, tenant_id: str) -> str:
        provider = self._webhook.provider.value
        try:
            stored = self._tenants.load(tenant_id).provider(provider)
        except TenantNotFound:
            raise _not_found() from None
        if stored is None or stored.webhook_secret is None:
            raise _not_found()
        try:
            return self._secrets.open(tenant_id, Purpose.INBOUND_SECRET, stored.webhook_secret)
        except SecretTampered:
            logger.error("inbound webhook secret cannot be decrypted", extra={"source": provider})
            raise _not_found() from None

    def _record(self, tenant_id: str, event: DeliveryEvent | IgnoredEvent, now: float) -> Outcome:
        # The ids Herald attached at send time are hints: an event that names another tenant (two
        # tenants sharing one provider account) is that tenant's, not this URL's.
        if isinstance(event, IgnoredEvent) or event.tenant_id not in (None, tenant_id):
            return Outcome.IGNORED
        expires_at = self._events.expiry(tenant_id, event.job_id) if event.job_id else None
        if expires_at is None and not event.concerns_recipient:
            # Mail Herald did not send (or no longer keeps): nothing to record it against.
            return Outcome.IGNORED
        undo = self._mark(tenant_id, event, expires_at, now)
        if undo is None:
            return Outcome.DUPLICATE
        try:
            if event.suppresses_recipient:
                self._suppress(tenant_id, event, now)
            if event.unsubscribes_recipient:
                self._unsubscribe(tenant_id, event, now)
        except DependencyError:
            _undone(undo, "delivery event")
            raise
        return Outcome.RECORDED

    def _mark(
        self, tenant_id: str, event: DeliveryEvent, expires_at: int | None, now: float
    ) -> Callable[[], None] | None:
        """Store the event once (in its job, or as a mark of its own); how to take it back, or None
        for a duplicate."""
        if event.job_id is not None and expires_at is not None:
            job_id = event.job_id
            record = JobEvent(
                event.type.value,
                event.occurred_at or _iso(now),
                event.provider.value,
                event.reason,
                received_at=_iso(now),
            )
            if not self._events.add(tenant_id, job_id, event.event_id, record, expires_at):
                return None
            return lambda: self._events.remove(tenant_id, job_id, event.event_id, record)
        key = f"{event.provider.value}#{tenant_id}#{event.event_id}"
        if not self._ledger.mark(key, int(now) + DELIVERY_MARK_SECONDS):
            return None
        return lambda: self._ledger.unmark(key)

    def _suppress(self, tenant_id: str, event: DeliveryEvent, now: float) -> None:
        suppression = Suppression(
            address=event.recipient,
            reason=event.type.value,
            # When Herald suppressed it: a provider's claimed time may be any time.
            created_at=_iso(now),
            source=event.provider.value,
        )
        self._suppressions.suppress(tenant_id, suppression)

    def _unsubscribe(self, tenant_id: str, event: DeliveryEvent, now: float) -> None:
        provider = event.provider.value
        unsubscribe = Unsubscribe(
            event.recipient, ALL_TOPICS, _iso(now), UnsubscribeSource.PROVIDER, provider
        )
        self._unsubscribes.record(tenant_id, unsubscribe)


class PaymentWebhooks:
    """One payment processor's subscription events to the platform (the tenant is in the event)."""

    def __init__(
        self,
        *,
        webhook: PaymentWebhook,
        secret: Callable[[], str],
        catalog: PlanCatalog,
        tenants: TenantStore,
        ledger: InboundLedger,
        links: BillingLinks,
        alerts: AlertPublisher,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._webhook = webhook
        self._secret = secret
        self._catalog = catalog
        self._tenants = tenants
        self._ledger = ledger
        self._links = links
        self._alerts = alerts
        self._clock = clock

    def receive(self, request: InboundRequest) -> Receipt:
        processor = self._webhook.processor.value
        now = self._clock()
        _verified(self._webhook.verify, request, self._secret(), now.timestamp(), processor)
        receipt = Receipt()
        for event in _parsed(self._webhook.parse, request):
            receipt.add(self._apply(event, now))
        receipt.publish(processor)
        return receipt

    def _apply(self, event: SubscriptionEvent | IgnoredEvent, now: datetime) -> Outcome:
        if isinstance(event, IgnoredEvent):
            return Outcome.IGNORED
        key = f"{event.processor.value}#{event.event_id}"
        if not self._ledger.mark(key, None):
            return Outcome.DUPLICATE
        try:
            changed = self._change(event, now)
        except DependencyError:
            _undone(lambda: self._ledger.unmark(key), "payment event")
            raise
        return Outcome.RECORDED if changed else Outcome.IGNORED

    def _change(self, event: SubscriptionEvent, now: datetime) -> bool:
        """Apply the event to its tenant; False when it changes nothing."""
        tenant_id = self._tenant_of(event)
        facts = {"processor": event.processor.value, "event": event.event_name, "eventId": event.event_id}
        if tenant_id is None:
            logger.warning("payment event of no known tenant", extra=facts)
            return False
        try:
            profile = self._tenants.profile(tenant_id)
        except TenantNotFound:
            logger.warning("payment event of an unknown tenant", extra={**facts, "tenant_id": tenant_id})
            return False
        if event.tenant_id is not None:
            refs = [ref for ref in (event.customer_ref, event.subscription_ref) if ref]
            if refs:
                self._links.link(event.processor, refs, tenant_id)
        paying = event.kind in (SubscriptionChange.ACTIVATED, SubscriptionChange.RENEWED)
        if paying and self._catalog.plan_for(event.plan_key) is None:
            logger.warning("payment for no Herald plan", extra={**facts, "plan_key": event.plan_key})
        changes = self._apply_billing(profile, event, now)
        if isinstance(changes, PaymentRefused):
            self._refused(PaymentAlert.of(event, tenant_id, changes))
            return False
        if not changes:
            return False
        logger.info(
            "tenant billing changed", extra={**facts, "tenant_id": tenant_id, "changed": sorted(changes)}
        )
        count("BillingChanged", {"processor": event.processor.value, "change": event.kind.value})
        return True

    def _refused(self, alert: PaymentAlert) -> None:
        """A payment that does not pay its plan's price: recorded (the log line, the metric) and
        told to the operators, who check it at the processor and grant the plan by hand if due."""
        logger.warning("payment refused", extra=msgspec.structs.asdict(alert))
        count("PaymentsRefused", {"processor": alert.processor})
        self._alerts.publish(alert.subject, alert.to_message())

    def _apply_billing(
        self, profile: TenantProfile, event: SubscriptionEvent, now: datetime
    ) -> dict[str, object] | PaymentRefused:
        """Write the event's change on the very billing it was computed from; what changed, or why
        the event may not change it."""
        for _ in range(BILLING_WRITE_ATTEMPTS):
            before = billing_of(profile)
            after = billing_after(event, before, self._catalog, now)
            if isinstance(after, PaymentRefused):
                return after
            changes = profile_changes(before, after)
            if not changes:
                return changes
            # The anchor is left out: profiles from before billing periods have none stored.
            expected = {
                name: value for name, value in profile_fields(before).items() if name != "period_anchor"
            }
            audit = _billing_entry(profile.tenant_id, event, changes, now)
            try:
                self._tenants.update_profile_if(profile.tenant_id, expected, changes, audit)
            except ProfileChanged:
                profile = self._tenants.profile(profile.tenant_id)
                continue
            return changes
        raise DependencyError("tenant billing write failed: it kept changing concurrently")

    def _tenant_of(self, event: SubscriptionEvent) -> str | None:
        if event.tenant_id is not None:
            return event.tenant_id
        for ref in (event.subscription_ref, event.customer_ref):
            if ref and (tenant_id := self._links.tenant_for(event.processor, ref)):
                return tenant_id
        return None


def _billing_entry(
    tenant_id: str, event: SubscriptionEvent, changes: Mapping[str, object], now: datetime
) -> AuditEntry:
    """The audit entry of a payment event's change, recorded as the processor's."""
    processor = Actor(ActorKind.PROCESSOR, event.processor.value, event.processor.value.capitalize())
    action = AuditAction.PLAN_CHANGED if "plan" in changes else AuditAction.TENANT_CHANGED
    details = {**changed_fields(changes), "event": event.event_name, "eventId": event.event_id}
    return entry(tenant_id, iso(now), processor, action, tenant_id, **details)


def _iso(epoch: float) -> str:
    return iso(datetime.fromtimestamp(epoch, UTC))
