"""A tenant's subscriptions (registered endpoints): create, list, read, change, delete, enable and
disable (their breaker), rotate the signing secret, send a test event, and read or recover one
subscription's deliveries.

Every change is one transaction with its audit entry; no secret is in an entry, a view or an error:
the clear signing secret is returned once, by ``create`` and ``rotate_secret``. A caller scoped to a
subscriber (a portal link) sees only that subscriber's subscriptions: any other id is answered as
an unknown one is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from herald.domain.access import generate_id
from herald.domain.audit import AuditAction, AuditEntry, entry
from herald.domain.breakers import Breaker, BreakerKey, BreakerKind
from herald.domain.clock import iso, parse_iso, utc_now
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.events import (
    CHANNEL_NAME,
    MAX_CHANNELS,
    MAX_EVENT_TYPES_PER_SUBSCRIPTION,
    MAX_RATE_PER_SECOND,
    MAX_SUBSCRIPTIONS,
    MIN_RATE_PER_SECOND,
    EventType,
    Subscription,
    SubscriptionSecrets,
)
from herald.domain.jobs import compact_json
from herald.domain.search import JobSearch, host_of, subscription_term
from herald.domain.secrets import Purpose, SealedSecret
from herald.domain.signing import SIGNING_OVERLAP, new_signing_secret
from herald.domain.subscriptions import (
    MAX_DESCRIPTION,
    SUBSCRIBER_ID,
    TEST_EVENT_PREFIX,
    TEST_INTERVAL_SECONDS,
    CreatedSubscription,
    SubscriptionChange,
    SubscriptionDraft,
    SubscriptionView,
    TestDelivery,
)
from herald.domain.webhooks import OutboundWebhook, UrlNotAllowed
from herald.services.health import DISABLE, ENABLE, Turn, turn_breaker
from herald.services.outcomes import SubscriptionChanged, SubscriptionLimit
from herald.services.tenant_directory import opened_subscription_secrets
from herald.services.webhook_headers import opened_headers, sealed_headers

if TYPE_CHECKING:
    from herald.domain.account import TenantContext
    from herald.domain.job_records import JobPage
    from herald.services.job_queries import JobQueries, Recovery
    from herald.services.ports.platform import SecretBox, UrlGuard
    from herald.services.ports.providers import Breakers, WebhookSender
    from herald.services.ports.subscriptions import EventTypeCatalog, SubscriptionStore


class Subscriptions:
    def __init__(
        self,
        store: SubscriptionStore,
        *,
        breakers: Breakers,
        secrets: SecretBox,
        url_guard: UrlGuard,
        sender: WebhookSender,
        jobs: JobQueries,
        catalog: Callable[[], EventTypeCatalog],
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        """``catalog``: the tenant's event types, built on first need (a change naming types, a test)."""
        self._store = store
        self._catalog = catalog
        self._breakers = breakers
        self._secrets = secrets
        self._url_guard = url_guard
        self._sender = sender
        self._jobs = jobs
        self._clock = clock

    # ------------------------------------------------------------ reads

    def list(self, tenant_id: str, *, subscriber_id: str | None = None) -> list[SubscriptionView]:
        return [
            _view(tenant_id, subscription, breaker)
            for subscription, breaker in self._store.list(tenant_id)
            if _owned(subscription, subscriber_id)
        ]

    def get(
        self, tenant_id: str, subscription_id: str, *, subscriber_id: str | None = None
    ) -> SubscriptionView:
        found = self._store.get(tenant_id, subscription_id)
        if found is None or not _owned(found[0], subscriber_id):
            raise not_found(subscription_id)
        return _view(tenant_id, *found)

    def deliveries(
        self,
        tenant_id: str,
        subscription_id: str,
        *,
        cursor: str | None,
        limit: int,
        subscriber_id: str | None = None,
    ) -> JobPage:
        """The subscription's delivery jobs, newest first (the job search by its term)."""
        self.get(tenant_id, subscription_id, subscriber_id=subscriber_id)
        search = JobSearch(term=subscription_term(subscription_id))
        return self._jobs.search(tenant_id, search, limit=limit, cursor=cursor)

    # ------------------------------------------------------------ changes

    def create(
        self, tenant: TenantContext, draft: SubscriptionDraft, *, subscriber_id: str | None = None
    ) -> CreatedSubscription:
        """A portal caller's subscription is its subscriber's, whatever the draft says."""
        tenant_id = tenant.tenant_id
        self._check_url(draft.url)
        _check_fields(draft.channels, draft.rate_limit_per_second, draft.description)
        owner = subscriber_id if subscriber_id is not None else draft.subscriber_id
        if owner is not None and not SUBSCRIBER_ID.fullmatch(owner):
            raise _invalid("subscriberId", "1-128 letters, digits or _ . : @ -")
        event_types = self._known_types(tenant_id, draft.event_types)
        now = iso(self._clock())
        secret = new_signing_secret()
        subscription = Subscription(
            subscription_id=generate_id("sub"),
            url=draft.url,
            event_types=event_types,
            secrets=SubscriptionSecrets(self._seal(tenant_id, secret)),
            created_at=now,
            updated_at=now,
            description=draft.description,
            channels=_unique(draft.channels),
            rate_limit_per_second=draft.rate_limit_per_second,
            headers=sealed_headers(self._secrets, tenant_id, draft.headers) if draft.headers else None,
            subscriber_id=owner,
        )
        audit = self._entry(tenant, AuditAction.SUBSCRIPTION_CREATED, subscription, host=host_of(draft.url))
        try:
            self._store.create(tenant_id, subscription, audit, MAX_SUBSCRIPTIONS)
        except SubscriptionLimit as exc:
            raise HeraldError(
                f"This account has {MAX_SUBSCRIPTIONS} subscriptions, the most it may have; delete one first.",
                ErrorCode.SUBSCRIPTION_LIMIT_REACHED,
            ) from exc
        return CreatedSubscription(_view(tenant_id, subscription, None), secret)

    def update(
        self,
        tenant: TenantContext,
        subscription_id: str,
        change: SubscriptionChange,
        *,
        subscriber_id: str | None = None,
    ) -> SubscriptionView:
        """The fields ``change`` sets (a PATCH), over the version read."""
        tenant_id = tenant.tenant_id
        view = self.get(tenant_id, subscription_id, subscriber_id=subscriber_id)
        fields = _changed_fields(change)
        if not fields:
            return view  # nothing to change, nothing written
        updates: dict[str, Any] = {}
        if isinstance(change.url, str):
            self._check_url(change.url)
        if isinstance(change.event_types, tuple):
            updates["event_types"] = self._known_types(tenant_id, change.event_types)
        if isinstance(change.channels, tuple):
            updates["channels"] = _unique(change.channels)
        if change.headers is not msgspec.UNSET:
            headers = change.headers
            updates["headers"] = sealed_headers(self._secrets, tenant_id, headers) if headers else None
        current = view.subscription
        _check_fields(
            updates.get("channels", current.channels),
            _given(change.rate_limit_per_second, current.rate_limit_per_second),
            _given(change.description, current.description),
        )
        for name in ("url", "description", "rate_limit_per_second"):
            value = getattr(change, name)
            if value is not msgspec.UNSET:
                updates[name] = value
        changed = self._next(current, **updates)
        audit = self._entry(tenant, AuditAction.SUBSCRIPTION_UPDATED, changed, fields=",".join(fields))
        with _concurrent():
            self._store.save(tenant_id, changed, audit)
        return replace(view, subscription=changed)

    def delete(
        self, tenant: TenantContext, subscription_id: str, *, subscriber_id: str | None = None
    ) -> None:
        """The subscription and its breaker; its delivery jobs stay until their retention ends."""
        view = self.get(tenant.tenant_id, subscription_id, subscriber_id=subscriber_id)
        audit = self._entry(tenant, AuditAction.SUBSCRIPTION_DELETED, view.subscription)
        with _concurrent():
            self._store.delete(tenant.tenant_id, view.subscription, audit)

    def enable(
        self, tenant: TenantContext, subscription_id: str, *, subscriber_id: str | None = None
    ) -> SubscriptionView:
        """Its breaker closed with a clean record: deliveries go out again."""
        return self._turn(tenant, subscription_id, ENABLE, subscriber_id)

    def disable(
        self, tenant: TenantContext, subscription_id: str, *, subscriber_id: str | None = None
    ) -> SubscriptionView:
        """Its breaker disabled by hand: its deliveries fail at once until it is enabled."""
        return self._turn(tenant, subscription_id, DISABLE, subscriber_id)

    def rotate_secret(
        self, tenant: TenantContext, subscription_id: str, *, subscriber_id: str | None = None
    ) -> CreatedSubscription:
        """A new signing secret; the current one keeps signing beside it for ``SIGNING_OVERLAP``
        (as the account's signing secret does), so a receiver can switch without losing events."""
        tenant_id = tenant.tenant_id
        view = self.get(tenant_id, subscription_id, subscriber_id=subscriber_id)
        now = self._clock()
        secret, valid_until = new_signing_secret(), iso(now + SIGNING_OVERLAP)
        current = view.subscription
        secrets = SubscriptionSecrets(self._seal(tenant_id, secret), current.secrets.current, valid_until)
        changed = self._next(current, secrets=secrets)
        audit = self._entry(
            tenant, AuditAction.SUBSCRIPTION_SECRET_ROTATED, changed, previousValidUntil=valid_until
        )
        with _concurrent():
            self._store.save(tenant_id, changed, audit)
        return CreatedSubscription(replace(view, subscription=changed), secret, valid_until)

    def recover(
        self,
        tenant: TenantContext,
        subscription_id: str,
        since: str,
        until: str | None,
        *,
        subscriber_id: str | None = None,
        cursor: str | None = None,
    ) -> Recovery:
        """Re-queue the subscription's failed deliveries accepted in [since, until) (until: now),
        as POST /notifications/jobs/recover does for all jobs (and audited as it is)."""
        self.get(tenant.tenant_id, subscription_id, subscriber_id=subscriber_id)
        window = (parse_iso(since), parse_iso(until) if until else self._clock())
        return self._jobs.recover(tenant, window, None, cursor, term=subscription_term(subscription_id))

    # ------------------------------------------------------------ test

    def test(
        self,
        tenant: TenantContext,
        subscription_id: str,
        *,
        event_type: str | None = None,
        subscriber_id: str | None = None,
    ) -> TestDelivery:
        """Send one signed example event to the subscription now, as a delivery is sent (the same
        SSRF-guarded dial and signatures), and say what came back. The breaker is left alone; tests
        of one subscription are spaced by ``TEST_INTERVAL_SECONDS``."""
        tenant_id = tenant.tenant_id
        subscription = self.get(tenant_id, subscription_id, subscriber_id=subscriber_id).subscription
        chosen = event_type or subscription.event_types[0]
        if chosen not in subscription.event_types:
            raise HeraldError(
                f"Invalid request: eventType: subscription {subscription_id} does not receive {chosen}.",
                ErrorCode.VALIDATION_ERROR,
            )
        now = self._clock()
        if not self._store.claim_test(
            tenant_id, subscription_id, int(now.timestamp()), TEST_INTERVAL_SECONDS
        ):
            raise HeraldError(
                f"A test was sent to this subscription less than {TEST_INTERVAL_SECONDS} seconds ago;"
                " try again in a moment.",
                ErrorCode.RATE_LIMIT_EXCEEDED,
                extra={"retryAfter": TEST_INTERVAL_SECONDS},
            )
        event_id = generate_id(TEST_EVENT_PREFIX)
        body = {
            "id": event_id,
            "type": chosen,
            "timestamp": iso(now),
            "data": _example(self._live_types(tenant_id).get(chosen)),
        }
        headers = (
            opened_headers(self._secrets, tenant_id, subscription.headers) if subscription.headers else {}
        )
        hook = OutboundWebhook(event_id, subscription.url, "POST", headers, compact_json(body))
        outcome = self._sender(
            hook, secrets=opened_subscription_secrets(self._secrets, tenant_id, subscription.secrets, now)
        )
        return TestDelivery(
            event_id=event_id,
            event_type=chosen,
            ok=outcome.ok,
            status_code=outcome.status_code,
            latency_ms=outcome.latency_ms,
            response_excerpt=outcome.exchange.body_excerpt if outcome.exchange else "",
            error=outcome.error_message,
        )

    # ------------------------------------------------------------ helpers

    def _turn(
        self, tenant: TenantContext, subscription_id: str, turn: Turn, subscriber_id: str | None
    ) -> SubscriptionView:
        view = self.get(tenant.tenant_id, subscription_id, subscriber_id=subscriber_id)
        turned = turn_breaker(self._breakers, tenant, view.breaker, turn, self._epoch)
        return replace(view, breaker=turned)

    def _epoch(self) -> float:
        return self._clock().timestamp()

    def _check_url(self, url: str) -> None:
        """The URL passes the SSRF guard now (and again at every dial)."""
        try:
            self._url_guard(url)
        except UrlNotAllowed as exc:
            raise HeraldError(
                f"The subscription's URL is not allowed: {exc.reason}.", ErrorCode.URL_NOT_ALLOWED
            ) from exc

    def _known_types(self, tenant_id: str, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` without repeats, each an event type of the tenant that is not archived."""
        chosen = _unique(names)
        if not chosen or len(chosen) > MAX_EVENT_TYPES_PER_SUBSCRIPTION:
            raise _invalid(
                "eventTypes", f"name 1 to {MAX_EVENT_TYPES_PER_SUBSCRIPTION} event types to receive"
            )
        known = self._live_types(tenant_id)
        unknown = [name for name in chosen if name not in known]
        if unknown:
            raise _invalid(
                "eventTypes",
                f"there is no event type {', '.join(unknown[:5])} (or it is archived); create it first",
            )
        return chosen

    def _live_types(self, tenant_id: str) -> dict[str, EventType]:
        return {event_type.name: event_type for event_type in self._catalog().list(tenant_id)}

    def _seal(self, tenant_id: str, secret: str) -> SealedSecret:
        return self._secrets.seal(tenant_id, Purpose.SUBSCRIPTION_SECRET, secret)

    def _next(self, subscription: Subscription, **changes: Any) -> Subscription:
        return replace(
            subscription, **changes, updated_at=iso(self._clock()), version=subscription.version + 1
        )

    def _entry(
        self, tenant: TenantContext, action: AuditAction, subscription: Subscription, **details: str
    ) -> AuditEntry:
        """What the audit log keeps of a change: never a secret, a header value or the whole URL
        (its path may carry a receiver's token), only its host."""
        if subscription.subscriber_id is not None:
            details["subscriberId"] = subscription.subscriber_id
        return entry(
            tenant.tenant_id,
            iso(self._clock()),
            tenant.actor,
            action,
            subscription.subscription_id,
            **details,
        )


def not_found(subscription_id: str) -> HeraldError:
    return HeraldError(f"There is no subscription {subscription_id}.", ErrorCode.SUBSCRIPTION_NOT_FOUND)


def _view(tenant_id: str, subscription: Subscription, breaker: Breaker | None) -> SubscriptionView:
    key = BreakerKey(BreakerKind.SUBSCRIPTION, tenant_id, subscription.subscription_id)
    return SubscriptionView(subscription, breaker or Breaker(key))


def _owned(subscription: Subscription, subscriber_id: str | None) -> bool:
    return subscriber_id is None or subscription.subscriber_id == subscriber_id


def _invalid(field: str, problem: str) -> HeraldError:
    return HeraldError(f"Invalid request: {field}: {problem}.", ErrorCode.VALIDATION_ERROR)


def _check_fields(channels: Sequence[str], rate: int | None, description: str | None) -> None:
    """The rules of the fields the service is handed as they are (the request models state them
    too, for the API's document)."""
    if len(_unique(channels)) > MAX_CHANNELS:
        raise _invalid("channels", f"at most {MAX_CHANNELS} channels")
    bad = next((name for name in channels if not CHANNEL_NAME.fullmatch(name)), None)
    if bad is not None:
        raise _invalid("channels", f"'{bad[:40]}' is not a channel name (1-128 letters, digits, _ . : -)")
    if rate is not None and not MIN_RATE_PER_SECOND <= rate <= MAX_RATE_PER_SECOND:
        raise _invalid(
            "rateLimitPerSecond", f"must be {MIN_RATE_PER_SECOND} to {MAX_RATE_PER_SECOND}, or null for none"
        )
    if description is not None and len(description) > MAX_DESCRIPTION:
        raise _invalid("description", f"at most {MAX_DESCRIPTION} characters")


def _unique(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _given(value: Any, current: Any) -> Any:
    return current if value is msgspec.UNSET else value


# How an audit entry names the fields a PATCH changed (as the API names them).
_FIELD_NAMES = {
    "url": "url",
    "event_types": "eventTypes",
    "channels": "channels",
    "description": "description",
    "rate_limit_per_second": "rateLimitPerSecond",
    "headers": "headers",
}


def _changed_fields(change: SubscriptionChange) -> list[str]:
    return [wire for name, wire in _FIELD_NAMES.items() if getattr(change, name) is not msgspec.UNSET]


def _example(event_type: EventType | None) -> Any:
    """The first of the type's schema's ``examples``, else an empty object (no schema, or the type
    archived since the subscription named it)."""
    examples = ((event_type and event_type.schema) or {}).get("examples")
    return examples[0] if isinstance(examples, list) and examples else {}


@contextmanager
def _concurrent() -> Iterator[None]:
    """A concurrent change came first: the caller reads the subscription again and retries."""
    try:
        yield
    except SubscriptionChanged as exc:
        raise HeraldError(
            "The subscription changed meanwhile (another edit, rotation or deletion); read it again.",
            ErrorCode.SUBSCRIPTION_CHANGED,
        ) from exc
