"""Subscriptions over in-memory fakes: what a registration must name (sentences for each rule), a
portal caller scoped to its subscriber, PATCH semantics, the secret shown once and rotated with
the account's overlap, the breaker turned with its audit entry, the test send signed with the
subscription's secrets, and the notice that names a disabled subscription."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from msgspec.structs import replace
from pydantic import ValidationError

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.vault import Vault
from herald.domain.account import TenantContext
from herald.domain.audit import AuditAction
from herald.domain.breakers import ENDPOINT_POLICY, Breaker, BreakerKey, BreakerKind, BreakerState
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.events import MAX_CHANNELS, Subscription
from herald.domain.secrets import Purpose
from herald.domain.signing import SIGNING_OVERLAP, signature_headers
from herald.domain.subscriptions import (
    TEST_INTERVAL_SECONDS,
    SubscriptionChange,
    SubscriptionDraft,
    SubscriptionState,
)
from herald.domain.webhooks import OutboundWebhook, UrlNotAllowed, WebhookExchange, WebhookOutcome
from herald.http.subscription_answers import NewSubscription
from herald.http.subscription_answers import Subscription as SubscriptionAnswer
from herald.http.subscription_requests import SubscriptionBody, SubscriptionPatch
from herald.services import subscriptions as subscription_service
from herald.services.health import BreakerBoard, EndpointHealth, Gate
from herald.services.subscriptions import Subscriptions
from herald.services.tenant_directory import opened_subscription_secrets
from tests.fakes.breakers import FakeBreakers
from tests.fakes.common import ManualClock, full_grant
from tests.fakes.console import FakeMail
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.subscriptions import FakeCatalog, FakeSubscriptionStore

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
TENANT = "tenant-subs"
CALLER = TenantContext(TENANT, "startup", "active", full_grant(), NOW)
SCHEMA = {"type": "object", "examples": [{"orderId": "ord_1", "amount": 4200}]}
DRAFT = SubscriptionDraft(url="https://hooks.example.com/in", event_types=("order.paid",))


@dataclass
class FakeJobs:
    """What the service asks the job queries: the searches and recoveries it makes."""

    searches: list[tuple[str, Any]] = field(default_factory=list)
    recoveries: list[tuple[Any, ...]] = field(default_factory=list)

    def search(self, tenant_id: str, search: Any, *, limit: int, cursor: str | None) -> str:
        self.searches.append((tenant_id, search.term))
        return "page"

    def recover(self, tenant: TenantContext, window: Any, channel: Any, cursor: Any, *, term: str) -> str:
        self.recoveries.append((tenant.tenant_id, window, channel, term))
        return "recovery"


class Rig:
    def __init__(self) -> None:
        self.now = NOW
        self.breakers = FakeBreakers()
        self.store = FakeSubscriptionStore(self.breakers)
        self.catalog = FakeCatalog()
        self.catalog.add(TENANT, "order.paid", SCHEMA)
        self.catalog.add(TENANT, "order.refunded")
        self.vault = Vault(InMemoryKeyManager(), DataKeyCache())
        self.refused: set[str] = set()
        self.sent: list[tuple[OutboundWebhook, list[str]]] = []
        self.answer = WebhookOutcome(
            ok=True, status_code=204, latency_ms=12, exchange=WebhookExchange(body_excerpt="thanks")
        )
        self.jobs = FakeJobs()
        self.service = Subscriptions(
            self.store,
            breakers=self.breakers,
            secrets=self.vault,
            url_guard=self._guard,
            sender=self._send,
            jobs=self.jobs,  # type: ignore[arg-type]
            catalog=lambda: self.catalog,
            clock=lambda: self.now,
        )

    def _guard(self, url: str) -> object:
        if url in self.refused or not url.startswith("https://"):
            raise UrlNotAllowed(
                "only https:// URLs are allowed"
                if not url.startswith("https://")
                else "the host resolves to a private, loopback, link-local or otherwise non-public address"
            )
        return url

    def _send(self, hook: OutboundWebhook, *, secrets: Sequence[str]) -> WebhookOutcome:
        self.sent.append((hook, list(secrets)))
        return self.answer

    def create(self, draft: SubscriptionDraft = DRAFT, **kwargs: Any) -> str:
        return self.service.create(CALLER, draft, **kwargs).view.subscription.subscription_id


@pytest.fixture
def rig() -> Rig:
    return Rig()


def refusal(call: Any) -> HeraldError:
    with pytest.raises(HeraldError) as caught:
        call()
    return caught.value


# ---------------------------------------------------------------- creation and its rules


def test_a_subscription_is_created_with_its_secret_shown_once_and_sealed_at_rest(rig: Rig) -> None:
    created = rig.service.create(
        CALLER, replace(DRAFT, headers={"Authorization": "Bearer s3cret"}, description="Orders")
    )
    subscription = created.view.subscription

    assert created.secret.startswith("whsec_")
    assert subscription.subscription_id.startswith("sub_")
    assert len(subscription.subscription_id) == 20
    assert created.view.state is SubscriptionState.ENABLED
    stored = rig.store.stored[(TENANT, subscription.subscription_id)]
    assert rig.vault.open(TENANT, Purpose.SUBSCRIPTION_SECRET, stored.secrets.current) == created.secret
    assert stored.headers is not None
    assert stored.headers.names == ("Authorization",)
    # Neither the secret nor a header value is in the audit entry, the view or the answer.
    [audit] = rig.store.audit
    assert (audit.action, audit.target, dict(audit.details)) == (
        AuditAction.SUBSCRIPTION_CREATED,
        subscription.subscription_id,
        {"host": "hooks.example.com"},
    )
    shown = msgspec.json.encode(SubscriptionAnswer.of(created.view)).decode()
    assert created.secret not in shown
    assert "s3cret" not in shown
    assert json.loads(shown)["headers"] == {"Authorization": "••••"}
    assert created.secret not in repr(created)
    assert created.secret not in repr(audit)
    assert (
        msgspec.json.decode(msgspec.json.encode(NewSubscription.created(created)))["secret"] == created.secret
    )
    # Read back, no secret.
    assert "secret" not in json.loads(
        msgspec.json.encode(SubscriptionAnswer.of(rig.service.get(TENANT, subscription.subscription_id)))
    )


@pytest.mark.parametrize(
    ("draft", "code", "sentence"),
    [
        (
            replace(DRAFT, event_types=("order.shipped",)),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: eventTypes: there is no event type order.shipped (or it is archived); create it first.",
        ),
        (
            replace(DRAFT, event_types=()),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: eventTypes: name 1 to 100 event types to receive.",
        ),
        (
            replace(DRAFT, url="http://hooks.example.com/in"),
            ErrorCode.URL_NOT_ALLOWED,
            "The subscription's URL is not allowed: only https:// URLs are allowed.",
        ),
        (
            replace(DRAFT, url="https://10.0.0.8/in"),
            ErrorCode.URL_NOT_ALLOWED,
            "The subscription's URL is not allowed: the host resolves to a private, loopback, link-local"
            " or otherwise non-public address.",
        ),
        (
            replace(DRAFT, channels=tuple(f"c{n}" for n in range(MAX_CHANNELS + 1))),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: channels: at most 10 channels.",
        ),
        (
            replace(DRAFT, channels=("has space",)),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: channels: 'has space' is not a channel name (1-128 letters, digits, _ . : -).",
        ),
        (
            replace(DRAFT, rate_limit_per_second=0),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: rateLimitPerSecond: must be 1 to 1000, or null for none.",
        ),
        (
            replace(DRAFT, rate_limit_per_second=1001),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: rateLimitPerSecond: must be 1 to 1000, or null for none.",
        ),
        (
            replace(DRAFT, description="x" * 201),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: description: at most 200 characters.",
        ),
        (
            replace(DRAFT, subscriber_id="cust 1"),
            ErrorCode.VALIDATION_ERROR,
            "Invalid request: subscriberId: 1-128 letters, digits or _ . : @ -.",
        ),
    ],
)
def test_each_rule_of_a_registration_is_a_sentence_naming_its_field(
    rig: Rig, draft: SubscriptionDraft, code: ErrorCode, sentence: str
) -> None:
    rig.refused.add("https://10.0.0.8/in")
    error = refusal(lambda: rig.service.create(CALLER, draft))
    assert (error.code, str(error)) == (code, sentence)
    assert rig.store.stored == {}
    assert rig.store.audit == []


def test_an_archived_event_type_cannot_be_subscribed_to(rig: Rig) -> None:
    rig.catalog.types[TENANT].pop()  # the catalog leaves archived types out
    error = refusal(lambda: rig.service.create(CALLER, replace(DRAFT, event_types=("order.refunded",))))
    assert "there is no event type order.refunded (or it is archived)" in str(error)


def test_repeated_event_types_and_channels_are_kept_once(rig: Rig) -> None:
    draft = replace(DRAFT, event_types=("order.paid", "order.paid"), channels=("eu", "eu"))
    subscription = rig.service.create(CALLER, draft).view.subscription
    assert (subscription.event_types, subscription.channels) == (("order.paid",), ("eu",))


def test_the_account_cap_is_a_409_with_a_sentence(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscription_service, "MAX_SUBSCRIPTIONS", 2)
    rig.create()
    rig.create()
    error = refusal(rig.create)
    assert (error.code, str(error)) == (
        ErrorCode.SUBSCRIPTION_LIMIT_REACHED,
        "This account has 2 subscriptions, the most it may have; delete one first.",
    )


# ---------------------------------------------------------------- a portal caller's scope


def test_a_portal_caller_creates_for_its_own_subscriber_and_sees_only_its_subscriptions(rig: Rig) -> None:
    theirs = rig.create(replace(DRAFT, subscriber_id="cust_b"))
    tenants_own = rig.create()
    mine = rig.create(replace(DRAFT, subscriber_id="cust_b"), subscriber_id="cust_a")

    assert rig.service.get(TENANT, mine).subscription.subscriber_id == "cust_a"
    assert [
        view.subscription.subscription_id for view in rig.service.list(TENANT, subscriber_id="cust_a")
    ] == [mine]
    assert {view.subscription.subscription_id for view in rig.service.list(TENANT)} == {
        theirs,
        tenants_own,
        mine,
    }


@pytest.mark.parametrize(
    "call",
    [
        lambda s, sub_id: s.get(TENANT, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.update(
            CALLER, sub_id, SubscriptionChange(description="x"), subscriber_id="cust_a"
        ),
        lambda s, sub_id: s.delete(CALLER, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.enable(CALLER, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.disable(CALLER, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.rotate_secret(CALLER, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.test(CALLER, sub_id, subscriber_id="cust_a"),
        lambda s, sub_id: s.deliveries(TENANT, sub_id, cursor=None, limit=20, subscriber_id="cust_a"),
        lambda s, sub_id: s.recover(CALLER, sub_id, "2026-12-01T00:00:00Z", None, subscriber_id="cust_a"),
    ],
)
def test_another_subscribers_subscription_is_answered_as_a_made_up_one(rig: Rig, call: Any) -> None:
    theirs = rig.create(replace(DRAFT, subscriber_id="cust_b"))
    unscoped = rig.create()
    made_up = "sub_0000000000000000"

    for sub_id in (theirs, unscoped, made_up):
        error = refusal(lambda sub_id=sub_id: call(rig.service, sub_id))
        assert (error.code, str(error)) == (
            ErrorCode.SUBSCRIPTION_NOT_FOUND,
            f"There is no subscription {sub_id}.",
        )
    assert len(rig.store.stored) == 2
    assert rig.sent == []
    assert rig.jobs.searches == rig.jobs.recoveries == []
    assert [entry.action for entry in rig.store.audit] == [AuditAction.SUBSCRIPTION_CREATED] * 2


# ---------------------------------------------------------------- changes


def test_a_patch_changes_only_the_fields_it_names_and_null_clears_the_rate(rig: Rig) -> None:
    sub_id = rig.create(replace(DRAFT, rate_limit_per_second=5, channels=("eu",), description="Orders"))
    rig.now += timedelta(minutes=1)

    changed = rig.service.update(
        CALLER,
        sub_id,
        SubscriptionChange(event_types=("order.paid", "order.refunded"), rate_limit_per_second=None),
    ).subscription

    assert (changed.event_types, changed.rate_limit_per_second, changed.channels, changed.description) == (
        ("order.paid", "order.refunded"),
        None,
        ("eu",),
        "Orders",
    )
    assert (changed.version, changed.updated_at) == (2, "2026-12-04T12:01:00.000Z")
    audit = rig.store.audit[-1]
    assert (audit.action, dict(audit.details)) == (
        AuditAction.SUBSCRIPTION_UPDATED,
        {"fields": "eventTypes,rateLimitPerSecond"},
    )


def test_an_empty_patch_writes_nothing(rig: Rig) -> None:
    sub_id = rig.create()
    assert rig.service.update(CALLER, sub_id, SubscriptionChange()).subscription.version == 1
    assert len(rig.store.audit) == 1


def test_a_patch_is_held_to_the_rules_of_a_registration(rig: Rig) -> None:
    sub_id = rig.create()
    rig.refused.add("https://169.254.169.254/latest")
    for change, code in [
        (SubscriptionChange(url="https://169.254.169.254/latest"), ErrorCode.URL_NOT_ALLOWED),
        (SubscriptionChange(event_types=("nope",)), ErrorCode.VALIDATION_ERROR),
        (SubscriptionChange(rate_limit_per_second=0), ErrorCode.VALIDATION_ERROR),
    ]:
        assert refusal(lambda change=change: rig.service.update(CALLER, sub_id, change)).code is code
    assert rig.store.stored[(TENANT, sub_id)].version == 1


def test_headers_are_replaced_sealed_and_cleared_by_null(rig: Rig) -> None:
    sub_id = rig.create(replace(DRAFT, headers={"X-Token": "one"}))
    rig.service.update(CALLER, sub_id, SubscriptionChange(headers={"X-Other": "two"}))
    stored = rig.store.stored[(TENANT, sub_id)]
    assert stored.headers is not None
    assert stored.headers.names == ("X-Other",)
    assert "two" not in repr(stored)
    assert "two" not in repr(rig.store.audit)
    rig.service.update(CALLER, sub_id, SubscriptionChange(headers=None))
    assert rig.store.stored[(TENANT, sub_id)].headers is None


def test_a_change_decided_on_a_stale_read_is_refused(rig: Rig) -> None:
    sub_id = rig.create()

    def concurrent() -> None:
        key = (TENANT, sub_id)
        rig.store.stored[key] = replace(rig.store.stored[key], version=rig.store.stored[key].version + 1)

    rig.store.before_save = concurrent
    error = refusal(lambda: rig.service.update(CALLER, sub_id, SubscriptionChange(description="x")))
    assert (error.code, str(error)) == (
        ErrorCode.SUBSCRIPTION_CHANGED,
        "The subscription changed meanwhile (another edit, rotation or deletion); read it again.",
    )


def test_delete_removes_the_subscription_and_its_breaker(rig: Rig) -> None:
    sub_id = rig.create()
    rig.service.disable(CALLER, sub_id)
    rig.service.delete(CALLER, sub_id)
    assert rig.store.stored == {}
    assert rig.breakers.stored == {}
    assert rig.store.audit[-1].action is AuditAction.SUBSCRIPTION_DELETED


# ---------------------------------------------------------------- breaker


def test_disable_and_enable_turn_its_breaker_with_an_audit_entry_each(rig: Rig) -> None:
    sub_id = rig.create()
    key = BreakerKey(BreakerKind.SUBSCRIPTION, TENANT, sub_id)

    disabled = rig.service.disable(CALLER, sub_id)
    assert (disabled.state, rig.breakers.stored[key].state) == (
        SubscriptionState.DISABLED,
        BreakerState.DISABLED,
    )
    assert rig.service.get(TENANT, sub_id).state is SubscriptionState.DISABLED
    assert rig.service.disable(CALLER, sub_id).state is SubscriptionState.DISABLED  # no second entry

    rig.breakers.stored[key] = replace(rig.breakers.stored[key], state=BreakerState.OPEN, version=9)
    assert rig.service.get(TENANT, sub_id).state is SubscriptionState.OPEN
    enabled = rig.service.enable(CALLER, sub_id)
    assert enabled.state is SubscriptionState.ENABLED
    assert [
        (entry.action, entry.target, entry.details["previous"]) for entry in rig.breakers.tenants.audit
    ] == [
        (AuditAction.SUBSCRIPTION_DISABLED, sub_id, "closed"),
        (AuditAction.SUBSCRIPTION_ENABLED, sub_id, "open"),
    ]


def test_enabling_a_subscription_that_never_failed_writes_nothing(rig: Rig) -> None:
    sub_id = rig.create()
    assert rig.service.enable(CALLER, sub_id).state is SubscriptionState.ENABLED
    assert rig.breakers.stored == {}
    assert rig.breakers.tenants.audit == []


def test_the_notice_of_a_disabled_subscription_names_it_its_url_and_how_to_enable_it() -> None:
    clock, mail = ManualClock(), FakeMail()
    breakers = FakeBreakers()
    health = EndpointHealth(BreakerBoard(breakers, ENDPOINT_POLICY, clock=clock), mail)
    key = BreakerKey(BreakerKind.SUBSCRIPTION, TENANT, "sub_0123456789abcdef")
    opened = int(clock.now) - 5 * 86400 - 60
    breaker = Breaker(key, BreakerState.OPEN, opened_at=opened, open_until=opened + 60, version=3)
    breakers.stored[key] = breaker

    stored = health.failed(
        breaker,
        "the endpoint answered HTTP 500",
        Gate(send=True, probing=True),
        "ops@tenant.example",
        url="https://hooks.example.com/in",
    )

    assert stored is not None
    assert stored.state is BreakerState.DISABLED
    [(to, subject, text)] = mail.sent
    assert (to, subject) == ("ops@tenant.example", "Webhook subscription disabled: sub_0123456789abcdef")
    assert text.startswith(
        "Herald disabled your webhook subscription sub_0123456789abcdef (https://hooks.example.com/in): it has"
        " failed every delivery since "
    )
    assert "(last error: the endpoint answered HTTP 500)" in text
    assert "POST /api/v1/subscriptions/sub_0123456789abcdef/enable" in text


# ---------------------------------------------------------------- secrets


def test_rotation_keeps_the_previous_secret_signing_for_the_accounts_overlap(rig: Rig) -> None:
    created = rig.service.create(CALLER, DRAFT)
    sub_id = created.view.subscription.subscription_id

    rotated = rig.service.rotate_secret(CALLER, sub_id)

    assert rotated.secret != created.secret
    assert rotated.secret.startswith("whsec_")
    assert timedelta(hours=24) == SIGNING_OVERLAP
    assert rotated.previous_valid_until == "2026-12-05T12:00:00.000Z"
    secrets = rotated.view.subscription.secrets
    assert opened_subscription_secrets(rig.vault, TENANT, secrets, NOW) == [created.secret, rotated.secret]
    assert opened_subscription_secrets(rig.vault, TENANT, secrets, NOW + SIGNING_OVERLAP) == [rotated.secret]
    audit = rig.store.audit[-1]
    assert (audit.action, dict(audit.details)) == (
        AuditAction.SUBSCRIPTION_SECRET_ROTATED,
        {"previousValidUntil": "2026-12-05T12:00:00.000Z"},
    )
    assert all(s not in repr(rig.store.audit) for s in (created.secret, rotated.secret))


# ---------------------------------------------------------------- test sends


def test_a_test_send_is_the_types_example_signed_with_the_subscriptions_secrets(rig: Rig) -> None:
    created = rig.service.create(CALLER, replace(DRAFT, headers={"X-Token": "t0k"}))
    sub_id = created.view.subscription.subscription_id

    outcome = rig.service.test(CALLER, sub_id)

    [(hook, secrets)] = rig.sent
    body = json.loads(hook.body)
    assert body == {
        "id": outcome.event_id,
        "type": "order.paid",
        "timestamp": "2026-12-04T12:00:00.000Z",
        "data": {"orderId": "ord_1", "amount": 4200},
    }
    assert outcome.event_id.startswith("evt_test_")
    assert hook.job_id == outcome.event_id
    assert (hook.url, hook.method, dict(hook.headers)) == (DRAFT.url, "POST", {"X-Token": "t0k"})
    assert secrets == [created.secret]
    assert "webhook-signature" in signature_headers(secrets, hook.job_id, hook.body, 1)
    assert (outcome.ok, outcome.status_code, outcome.latency_ms, outcome.response_excerpt, outcome.error) == (
        True,
        204,
        12,
        "thanks",
        None,
    )
    assert rig.breakers.stored == {}  # a test leaves the breaker alone


def test_a_test_of_a_type_without_examples_sends_an_empty_object_and_reports_a_refusal(rig: Rig) -> None:
    sub_id = rig.create(replace(DRAFT, event_types=("order.paid", "order.refunded")))
    rig.answer = WebhookOutcome(
        ok=False,
        error_class="permanent",
        error_message="URL not allowed: the host resolves to a private address",
    )
    outcome = rig.service.test(CALLER, sub_id, event_type="order.refunded")
    assert json.loads(rig.sent[0][0].body)["data"] == {}
    assert (outcome.ok, outcome.status_code, outcome.error) == (
        False,
        None,
        "URL not allowed: the host resolves to a private address",
    )


def test_tests_of_one_subscription_are_spaced_and_name_only_its_types(rig: Rig) -> None:
    sub_id = rig.create()
    error = refusal(lambda: rig.service.test(CALLER, sub_id, event_type="order.refunded"))
    assert str(error) == f"Invalid request: eventType: subscription {sub_id} does not receive order.refunded."

    rig.service.test(CALLER, sub_id)
    error = refusal(lambda: rig.service.test(CALLER, sub_id))
    assert (error.code, str(error), error.extra) == (
        ErrorCode.RATE_LIMIT_EXCEEDED,
        "A test was sent to this subscription less than 10 seconds ago; try again in a moment.",
        {"retryAfter": TEST_INTERVAL_SECONDS},
    )
    rig.now += timedelta(seconds=TEST_INTERVAL_SECONDS)
    rig.service.test(CALLER, sub_id)
    assert len(rig.sent) == 2


# ---------------------------------------------------------------- history


def test_deliveries_and_recovery_use_the_subscriptions_search_term(rig: Rig) -> None:
    sub_id = rig.create()
    assert rig.service.deliveries(TENANT, sub_id, cursor=None, limit=20) == "page"  # type: ignore[comparison-overlap]
    rig.service.recover(CALLER, sub_id, "2026-12-01T00:00:00.000Z", None)
    assert rig.jobs.searches == [(TENANT, f"subscription:{sub_id}")]
    [(tenant_id, (since, until), channel, term)] = rig.jobs.recoveries
    assert (tenant_id, since, until, channel, term) == (
        TENANT,
        datetime(2026, 12, 1, tzinfo=UTC),
        NOW,
        None,
        f"subscription:{sub_id}",
    )


# ---------------------------------------------------------------- request bodies


def test_a_patch_body_tells_absent_from_null() -> None:
    change = SubscriptionPatch.model_validate({"description": None, "rateLimitPerSecond": 3}).change()
    assert change == SubscriptionChange(description=None, rate_limit_per_second=3)
    assert SubscriptionPatch.model_validate({}).change() == SubscriptionChange()
    with pytest.raises(ValidationError, match="a subscription always has one; leave it out to keep it"):
        SubscriptionPatch.model_validate({"url": None})


def test_a_body_refuses_headers_herald_sets_as_a_webhook_job_does() -> None:
    body = {"url": "https://hooks.example.com", "eventTypes": ["order.paid"], "headers": {"webhook-id": "x"}}
    with pytest.raises(ValidationError, match="header 'webhook-id' is set by Herald"):
        SubscriptionBody.model_validate(body)
    draft = SubscriptionBody.model_validate({**body, "headers": {"X-Ok": "1"}}).draft()
    assert draft == replace(DRAFT, url="https://hooks.example.com", headers={"X-Ok": "1"})


def test_a_subscription_struct_round_trips(rig: Rig) -> None:
    sub_id = rig.create()
    stored: Subscription = rig.store.stored[(TENANT, sub_id)]
    assert msgspec.json.decode(msgspec.json.encode(stored), type=Subscription) == stored


def test_a_whole_number_rate_written_as_a_float_is_the_integer() -> None:
    """JSON Schema's integer is any number without a fraction: 5.0 is the rate 5, 5.5 is refused."""
    body = {"url": "https://hooks.example.com/in", "eventTypes": ["order.paid"]}

    assert SubscriptionBody.model_validate({**body, "rateLimitPerSecond": 5.0}).rateLimitPerSecond == 5
    with pytest.raises(ValidationError):
        SubscriptionBody.model_validate({**body, "rateLimitPerSecond": 5.5})
