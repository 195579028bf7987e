"""The accept path: durable first, priority routing, plan rules, idempotency, rate, quota, periods."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from msgspec import to_builtins

from herald.adapters.data_key_cache import DataKeyCache
from herald.adapters.store.conversions import request_document, request_from_document
from herald.adapters.vault import Vault
from herald.domain.account import TenantContext
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus, QueuePriority
from herald.domain.notifications import EmailNotification, SealedHeaders, WebhookNotification
from herald.domain.webhooks import UrlNotAllowed
from herald.http import answers
from herald.http.envelope import message_of
from herald.services.accept import AcceptService, job_id_for
from herald.services.attachment_intake import AttachmentIntake
from herald.services.auth import Credentials
from herald.services.webhook_headers import opened
from tests.fakes.attachments import FakeAttachmentStore, FakeFetcher
from tests.fakes.common import NOW, full_grant
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.queues import FakeQueue

ANCHOR = datetime(2026, 1, 15, 9, 0, tzinfo=UTC)
API_KEY = "hk_" + "0" * 64
PERIOD = "20261115T090000"  # the period of NOW counted from ANCHOR


def tenant(
    plan: str = "startup",
    providers: tuple[str, ...] = ("SENDGRID", "RESEND"),
    tenant_id: str = "t-1",
    **limits: int,
) -> TenantContext:
    return TenantContext(
        tenant_id, plan, "active", full_grant(), ANCHOR, providers, frozenset({"mail.example.com"}), **limits
    )


def email(**fields: object) -> dict[str, Any]:
    return {"to": "u@example.com", "subject": "s", "body": "<p>b</p>", **fields}


def webhook(**fields: object) -> dict[str, Any]:
    return {"url": "https://hooks.example.com/x", "payload": {"a": 1}, **fields}


def accepting_urls(url: str) -> None:
    return None


def refusing_urls(url: str) -> None:
    raise UrlNotAllowed("the host resolves to a private address")


class Rig:
    def __init__(self, url_guard: Any = accepting_urls, now: datetime = NOW) -> None:
        self.jobs, self.counters, self.queue = FakeJobTable(), FakeCounters(), FakeQueue()
        # The tenant the API key of the next request authenticates as.
        self.caller = tenant()
        self.vault_keys = InMemoryKeyManager()
        self.vault = Vault(self.vault_keys, DataKeyCache())
        self.store, self.fetcher = FakeAttachmentStore(), FakeFetcher()
        attachments = AttachmentIntake(self.store, self.fetcher)
        self.service = AcceptService(
            attachments=lambda: attachments,
            authenticate=lambda _key: self.caller,
            secrets=self.vault,
            jobs=self.jobs,
            counters=self.counters,
            queue=self.queue,
            schedules=self.jobs,
            url_guard=url_guard,
            max_attempts=3,
            render_template=lambda _tenant_id, email: email,
            clock=lambda: now,
        )

    def email(
        self, context: TenantContext | None = None, header_key: str | None = None, **fields: object
    ) -> str:
        return self.send(email(**fields), context, header_key)

    def send(
        self,
        payload: dict[str, Any],
        context: TenantContext | None = None,
        header_key: str | None = None,
        channel: Channel = Channel.EMAIL,
    ) -> str:
        self.caller = context or tenant()
        request = request_from_document(channel, payload)
        return self.service.accept(Credentials(api_key=API_KEY), request, header_key).job_id

    def webhook(self, context: TenantContext | None = None, **fields: object) -> str:
        return self.send(webhook(**fields), context, channel=Channel.WEBHOOK)

    def refused(self, call: Any) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            call()
        return caught.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_an_accepted_email_is_stored_pending_then_queued_on_normal(rig: Rig) -> None:
    accepted = rig.service.accept(Credentials(api_key=API_KEY), request_from_document(Channel.EMAIL, email()))
    assert rig.jobs.state("t-1", accepted.job_id).status is JobStatus.PENDING
    assert rig.jobs.calls == ["insert"]
    sent = rig.queue.take()
    assert (sent.message.job_id, sent.message.channel, sent.priority, sent.delay_seconds) == (
        accepted.job_id,
        Channel.EMAIL,
        QueuePriority.NORMAL,
        0,
    )
    assert (sent.message.tenant_id, sent.message.seen_attempts, sent.message.priority) == ("t-1", 0, 5)
    assert sent.message.request == request_from_document(Channel.EMAIL, email())
    assert sent.message.created_at == "2026-11-30T12:00:30.000Z"
    assert to_builtins(answers.AcceptedJob.of(accepted)) == {
        "jobId": accepted.job_id,
        "status": "pending",
        "type": "email",
        "createdAt": "2026-11-30T12:00:30.000Z",
    }


@pytest.mark.parametrize(("priority", "queue_name"), [(1, "critical"), (5, "normal"), (10, "low")])
def test_priority_selects_the_queue(rig: Rig, priority: int, queue_name: str) -> None:
    job_id = rig.webhook(priority=priority)
    assert rig.queue.take().priority.value == queue_name
    assert rig.jobs.jobs[job_id].priority == priority


def test_the_free_plan_always_goes_to_the_low_queue(rig: Rig) -> None:
    job_id = rig.email(tenant("free", ()), priority=1)
    assert rig.queue.take().priority is QueuePriority.LOW
    assert rig.jobs.jobs[job_id].priority == 10


def test_jobs_expire_after_the_retention_of_the_plan(rig: Rig) -> None:
    free, paid = rig.email(tenant("free", ())), rig.email(tenant("startup"))
    assert rig.jobs.jobs[free].expires_at == int(NOW.timestamp()) + 14 * 86_400
    assert rig.jobs.jobs[paid].expires_at == int(NOW.timestamp()) + 365 * 86_400


def test_a_queue_outage_fails_the_stored_job_and_answers_503_with_its_id(rig: Rig) -> None:
    rig.queue.failure = DependencyError("down")
    error = rig.refused(rig.email)
    assert error.code is ErrorCode.QUEUE_UNAVAILABLE
    job_id = error.extra["jobId"]
    assert f"/notifications/jobs/{job_id}/retry" in message_of(error)
    state = rig.jobs.state("t-1", job_id)
    assert state.status is JobStatus.FAILED
    assert state.error_message == "Could not be queued for delivery: down"


def test_a_storage_outage_answers_503_and_charges_nothing(rig: Rig) -> None:
    rig.jobs.unavailable.add("insert")
    error = rig.refused(rig.email)
    assert error.code is ErrorCode.STORAGE_UNAVAILABLE
    assert "not accepted" in error.message
    assert rig.counters.jobs[("t-1", PERIOD, "total")] == 0
    assert not rig.queue.sent


def test_the_same_key_and_body_is_a_409_naming_the_first_job(rig: Rig) -> None:
    first = rig.email(idempotencyKey="order-1")
    error = rig.refused(lambda: rig.email(header_key="order-1"))  # the header carries the same key
    assert error.code is ErrorCode.DUPLICATE_REQUEST
    assert error.extra["jobId"] == first == job_id_for("t-1", "order-1")
    assert len(rig.jobs.jobs) == 1
    assert len(rig.queue.sent) == 1


def test_the_same_key_with_another_body_is_a_422_and_the_first_job_is_untouched(rig: Rig) -> None:
    first = rig.email(idempotencyKey="k")
    error = rig.refused(lambda: rig.email(idempotencyKey="k", subject="other"))
    assert error.code is ErrorCode.IDEMPOTENCY_KEY_REUSED
    notification = rig.jobs.jobs[first].request.notification
    assert isinstance(notification, EmailNotification)
    assert notification.subject == "s"


def test_keys_are_scoped_per_tenant(rig: Rig) -> None:
    a = rig.email(tenant(tenant_id="a"), idempotencyKey="k")
    b = rig.email(tenant(tenant_id="b"), idempotencyKey="k")
    assert a != b
    assert len(rig.jobs.jobs) == 2


def test_differing_header_and_body_keys_are_rejected(rig: Rig) -> None:
    error = rig.refused(lambda: rig.email(header_key="b", idempotencyKey="a"))
    assert error.code is ErrorCode.IDEMPOTENCY_KEY_MISMATCH
    assert error.message == "The Idempotency-Key header and idempotencyKey field differ."


def test_the_rate_limit_answers_429_with_retry_after_until_the_next_minute(rig: Rig) -> None:
    for _ in range(5):
        rig.email(tenant("free", ()))
    error = rig.refused(lambda: rig.email(tenant("free", ())))
    assert error.code is ErrorCode.RATE_LIMIT_EXCEEDED
    assert error.extra == {"retryAfter": 30}
    assert error.message == "Rate limit of 5 requests per minute exceeded; retry in 30 s."
    assert len(rig.jobs.jobs) == 5


def test_a_per_tenant_rate_override_replaces_the_plans(rig: Rig) -> None:
    for _ in range(7):
        rig.email(tenant("free", (), rate_limit=7))
    assert (
        rig.refused(lambda: rig.email(tenant("free", (), rate_limit=7))).code is ErrorCode.RATE_LIMIT_EXCEEDED
    )


def test_a_duplicate_is_not_charged_to_the_quota(rig: Rig) -> None:
    rig.email(tenant("free", ()), idempotencyKey="k")
    for _ in range(3):
        rig.refused(lambda: rig.email(tenant("free", ()), idempotencyKey="k"))
    assert rig.counters.jobs[("t-1", PERIOD, "total")] == 1
    assert rig.counters.calls.count("refund") == 3


def test_an_exhausted_quota_is_403_naming_usage_limit_and_reset(rig: Rig) -> None:
    rig.counters.jobs[("t-1", PERIOD, "total")] = 100
    error = rig.refused(lambda: rig.webhook(tenant("free", ())))
    assert error.code is ErrorCode.QUOTA_EXCEEDED
    assert error.extra == {"usage": 100, "limit": 100, "resetsAt": "2026-12-15T09:00:00.000Z"}
    assert error.message == (
        "The monthly quota of your plan is used up (100 of 100); it resets at 2026-12-15T09:00:00.000Z."
    )


def test_a_custom_quota_replaces_the_plans(rig: Rig) -> None:
    rig.counters.jobs[("t-1", PERIOD, "total")] = 100
    rig.webhook(tenant("free", (), quota_limit=150))
    rig.counters.jobs[("t-1", PERIOD, "total")] = 150
    assert (
        rig.refused(lambda: rig.webhook(tenant("free", (), quota_limit=150))).code is ErrorCode.QUOTA_EXCEEDED
    )


def test_a_new_period_starts_a_new_count_before_any_schedule_runs() -> None:
    """The counter is named by the period computed from the anchor: the old count cannot block."""
    rig = Rig(now=datetime(2026, 12, 15, 9, 0, 1, tzinfo=UTC))
    rig.counters.jobs[("t-1", PERIOD, "total")] = 100
    rig.webhook(tenant("free", ()))
    assert rig.counters.jobs[("t-1", "20261215T090000", "total")] == 1


def test_paid_emails_are_unmetered_but_paid_webhooks_are_not(rig: Rig) -> None:
    rig.counters.jobs[("t-1", PERIOD, "emails")] = 1_000_000
    rig.email(tenant("indie"))
    rig.counters.jobs[("t-1", PERIOD, "webhooks")] = 4_000
    assert rig.refused(lambda: rig.webhook(tenant("indie"))).code is ErrorCode.QUOTA_EXCEEDED


def test_choosing_a_provider_needs_a_paid_plan_and_a_configured_provider(rig: Rig) -> None:
    assert (
        rig.refused(lambda: rig.email(tenant("free", ()), provider="SENDGRID")).code
        is ErrorCode.PLAN_REQUIRED
    )
    missing = rig.refused(lambda: rig.email(provider="SENDGRID", fallback="POSTMARK"))
    assert missing.code is ErrorCode.PROVIDER_NOT_CONFIGURED
    assert missing.message == "Provider POSTMARK is not configured for this account."
    rig.email(provider="RESEND", fallback="SENDGRID")


def test_a_paid_tenant_without_a_provider_is_refused_at_acceptance(rig: Rig) -> None:
    error = rig.refused(lambda: rig.email(tenant("indie", ())))
    assert error.code is ErrorCode.PROVIDER_REQUIRED
    assert "PUT /api/v1/account/providers/{provider}" in message_of(error)
    assert not rig.jobs.jobs
    rig.webhook(tenant("indie", ()))  # webhooks need no provider


def test_from_must_be_on_a_verified_domain(rig: Rig) -> None:
    error = rig.refused(lambda: rig.send(email(**{"from": "me@unverified.example.org"})))
    assert error.code is ErrorCode.FROM_NOT_ALLOWED
    assert "(unverified.example.org is not)" in error.message
    assert not rig.jobs.jobs
    rig.send(email(**{"from": "me@Mail.Example.com"}))


def test_a_refused_webhook_url_is_400_and_stores_nothing() -> None:
    rig = Rig(url_guard=refusing_urls)
    error = rig.refused(rig.webhook)
    assert error.code is ErrorCode.URL_NOT_ALLOWED
    assert error.message == "The webhook URL is not allowed: the host resolves to a private address"
    assert not rig.jobs.jobs
    assert not rig.queue.sent
    assert not rig.counters.calls


# ---------------------------------------------------------------- webhook headers are a secret


HEADERS = {"Authorization": "Bearer receiver-token-0001", "X-Tenant-Ref": "acme-7"}


def test_a_webhooks_headers_are_sealed_before_the_job_is_stored_or_queued(rig: Rig) -> None:
    job_id = rig.webhook(headers=HEADERS)

    stored = rig.jobs.jobs[job_id].request
    queued = rig.queue.take().message.request
    assert queued == stored
    for request in (stored, queued):
        assert request is not None
        webhook = request.notification
        assert isinstance(webhook, WebhookNotification)
        assert isinstance(webhook.headers, SealedHeaders)
        assert webhook.headers.names == ("Authorization", "X-Tenant-Ref")
        document = json.dumps(request_document(request))
        assert "receiver-token" not in document
        assert "acme-7" not in document
        assert opened(rig.vault, "t-1", webhook).headers == HEADERS


def test_sealed_headers_keep_the_idempotency_of_the_request_as_sent(rig: Rig) -> None:
    first = rig.webhook(headers=HEADERS, idempotencyKey="hook-1")

    same = rig.refused(lambda: rig.webhook(headers=HEADERS, idempotencyKey="hook-1"))
    other = rig.refused(
        lambda: rig.webhook(headers={**HEADERS, "X-Tenant-Ref": "b"}, idempotencyKey="hook-1")
    )

    assert (same.code, same.extra["jobId"]) == (ErrorCode.DUPLICATE_REQUEST, first)
    assert other.code is ErrorCode.IDEMPOTENCY_KEY_REUSED


def test_a_burst_of_webhooks_with_headers_asks_the_key_service_once(rig: Rig) -> None:
    for _ in range(50):
        rig.webhook(headers=HEADERS)

    assert rig.vault_keys.generate_calls == 1
