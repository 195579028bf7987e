"""The accept path: durable first, priority routing, plan rules, idempotency, rate and quota."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.adapters.ssrf import UrlNotAllowed
from herald.domain.errors import HeraldError
from herald.http.requests import EmailRequest, WebhookRequest
from herald.services.accept import AcceptService
from herald.services.auth import TenantContext
from herald.settings import Channel, QueuePriority, Settings
from tests.fakes.accept import FakeJobStore, RecordingQueue

NOW = datetime(2026, 11, 30, 12, 0, 30, tzinfo=UTC)
SETTINGS = Settings(
    table_name="t",
    kms_key_id="k",
    queue_urls={(c, p): f"https://sqs/{c}-{p}" for c in Channel for p in QueuePriority},
    dlq_url="https://sqs/dlq",
)


def tenant(
    plan: str = "startup", providers: tuple[str, ...] = ("SENDGRID", "RESEND"), tenant_id: str = "t-1"
) -> TenantContext:
    return TenantContext(tenant_id, plan, "active", "hash", providers, frozenset({"mail.example.com"}))


def email(**fields: object) -> EmailRequest:
    return EmailRequest.model_validate({"to": "u@example.com", "subject": "s", "body": "<p>b</p>", **fields})


def webhook(**fields: object) -> WebhookRequest:
    return WebhookRequest.model_validate(
        {"url": "https://hooks.example.com/x", "payload": {"a": 1}, **fields}
    )


def accepting_urls(url: str, *, local_origin: str | None) -> None:
    return None


def refusing_urls(url: str, *, local_origin: str | None) -> None:
    raise UrlNotAllowed("the host resolves to a private address")


@pytest.fixture
def parts() -> tuple[AcceptService, FakeJobStore, RecordingQueue]:
    store, queue = FakeJobStore(), RecordingQueue()
    service = AcceptService(SETTINGS, store, queue, url_checker=accepting_urls, clock=lambda: NOW)  # type: ignore[arg-type]
    return service, store, queue


def _code(error: pytest.ExceptionInfo[HeraldError]) -> tuple[int, str]:
    return error.value.status, error.value.code


def test_an_accepted_email_is_stored_pending_then_queued_on_normal(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, queue = parts
    accepted = service.accept_email(tenant(), email(), None)
    assert store.statuses[accepted.job_id] == "pending"
    message, priority, delay = queue.sent[0]
    assert (message.job_id, message.channel, priority, delay) == (
        accepted.job_id,
        Channel.EMAIL,
        QueuePriority.NORMAL,
        0,
    )
    assert message.tenant_id == "t-1"
    assert message.seen_attempts == 0
    assert message.payload == {"to": "u@example.com", "subject": "s", "body": "<p>b</p>"}
    assert accepted.as_response() == {
        "jobId": accepted.job_id,
        "status": "pending",
        "type": "email",
        "createdAt": "2026-11-30T12:00:30.000Z",
    }


@pytest.mark.parametrize(
    ("priority", "queue_name"), [(1, "critical"), (5, "normal"), (10, "low"), (3, "critical"), (7, "normal")]
)
def test_priority_selects_the_queue(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue], priority: int, queue_name: str
) -> None:
    service, store, queue = parts
    accepted = service.accept_webhook(tenant(), webhook(priority=priority), None)
    assert queue.sent[0][1].value == queue_name
    assert store.jobs[accepted.job_id].priority == priority


def test_the_free_plan_always_goes_to_the_low_queue(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, queue = parts
    accepted = service.accept_email(tenant("free", ()), email(priority=1), None)
    assert queue.sent[0][1] is QueuePriority.LOW
    assert store.jobs[accepted.job_id].priority == 10


def test_a_queue_outage_fails_the_stored_job_and_answers_503_with_its_id(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, queue = parts
    queue.fail = True
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant(), email(), None)
    assert _code(caught) == (503, "queue_unavailable")
    job_id = caught.value.extra["jobId"]
    assert store.statuses[job_id] == "failed"
    assert "Could not be queued" in store.reasons[job_id]


def test_the_same_key_and_body_is_a_409_naming_the_first_job(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, queue = parts
    first = service.accept_email(tenant(), email(idempotencyKey="order-1"), None)
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant(), email(), "order-1")  # the header carries the same key
    assert _code(caught) == (409, "duplicate_request")
    assert caught.value.extra["jobId"] == first.job_id
    assert len(store.jobs) == 1
    assert len(queue.sent) == 1


def test_the_same_key_with_another_body_is_a_422(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, _, _ = parts
    service.accept_email(tenant(), email(idempotencyKey="k"), None)
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant(), email(idempotencyKey="k", subject="other"), None)
    assert _code(caught) == (422, "idempotency_key_reused")


def test_keys_are_scoped_per_tenant(parts: tuple[AcceptService, FakeJobStore, RecordingQueue]) -> None:
    service, store, _ = parts
    service.accept_email(tenant(tenant_id="a"), email(idempotencyKey="k"), None)
    service.accept_email(tenant(tenant_id="b"), email(idempotencyKey="k"), None)
    assert len(store.jobs) == 2


def test_differing_header_and_body_keys_are_rejected(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, _, _ = parts
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant(), email(idempotencyKey="a"), "b")
    assert _code(caught) == (400, "idempotency_key_mismatch")


def test_the_rate_limit_answers_429_with_retry_after_until_the_next_minute(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, _ = parts
    for _ in range(5):
        service.accept_email(tenant("free", ()), email(), None)
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant("free", ()), email(), None)
    assert _code(caught) == (429, "rate_limit_exceeded")
    assert caught.value.extra["retryAfter"] == 30
    assert caught.value.headers["Retry-After"] == "30"
    assert len(store.jobs) == 5


def test_a_duplicate_does_not_consume_quota_or_rate(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, _ = parts
    service.accept_email(tenant("free", ()), email(idempotencyKey="k"), None)
    for _ in range(3):
        with pytest.raises(HeraldError):
            service.accept_email(tenant("free", ()), email(idempotencyKey="k"), None)
    assert store.usage[("t-1", "2026-11", "total")] == 1
    assert store.rate[("t-1", "202611301200")] == 1


def test_the_free_quota_is_shared_by_emails_and_webhooks(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, _ = parts
    store.usage[("t-1", "2026-11", "total")] = 100
    with pytest.raises(HeraldError) as caught:
        service.accept_webhook(tenant("free", ()), webhook(), None)
    assert _code(caught) == (429, "quota_exceeded")
    assert caught.value.extra["retryAfter"] == int((datetime(2026, 12, 1, tzinfo=UTC) - NOW).total_seconds())


def test_paid_emails_are_unmetered_but_paid_webhooks_are_not(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, store, _ = parts
    store.usage[("t-1", "2026-11", "emails")] = 1_000_000
    service.accept_email(tenant("indie"), email(), None)
    store.usage[("t-1", "2026-11", "webhooks")] = 4_000
    with pytest.raises(HeraldError) as caught:
        service.accept_webhook(tenant("indie"), webhook(), None)
    assert _code(caught) == (429, "quota_exceeded")


def test_choosing_a_provider_needs_a_paid_plan_and_a_configured_provider(
    parts: tuple[AcceptService, FakeJobStore, RecordingQueue],
) -> None:
    service, _, _ = parts
    with pytest.raises(HeraldError) as free:
        service.accept_email(tenant("free", ()), email(provider="SENDGRID"), None)
    assert _code(free) == (403, "plan_required")
    with pytest.raises(HeraldError) as missing:
        service.accept_email(tenant(), email(provider="SENDGRID", fallback="POSTMARK"), None)
    assert _code(missing) == (400, "provider_not_configured")
    service.accept_email(tenant(), email(provider="RESEND", fallback="SENDGRID"), None)


def test_from_must_be_on_a_verified_domain(parts: tuple[AcceptService, FakeJobStore, RecordingQueue]) -> None:
    service, store, _ = parts
    with pytest.raises(HeraldError) as caught:
        service.accept_email(tenant(), email(**{"from": "me@unverified.example.org"}), None)
    assert _code(caught) == (400, "from_not_allowed")
    assert not store.jobs
    service.accept_email(tenant(), email(**{"from": "me@Mail.Example.com"}), None)


def test_a_refused_webhook_url_is_400_and_stores_nothing() -> None:
    store, queue = FakeJobStore(), RecordingQueue()
    service = AcceptService(SETTINGS, store, queue, url_checker=refusing_urls, clock=lambda: NOW)  # type: ignore[arg-type]
    with pytest.raises(HeraldError) as caught:
        service.accept_webhook(tenant(), webhook(), None)
    assert _code(caught) == (400, "url_not_allowed")
    assert not store.jobs
    assert not queue.sent
