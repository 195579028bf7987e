"""The audit log on in-memory ports: every change of the account routes, the operator, a payment
processor and the quota reset leaves one entry naming who, what, the target and from where; the log
reads newest first, by page, filtered by action or actor, only the caller's own tenant's, and never
holds a secret."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from herald.adapters.vault import Vault
from herald.composition.inbound import delivery_format
from herald.domain.access import Actor, ActorKind
from herald.domain.account import TenantContext
from herald.domain.addresses import Suppression
from herald.domain.audit import AuditEntry
from herald.domain.clock import iso
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import Channel, JobStatus
from herald.domain.plans import Plan
from herald.services.account import AccountService
from herald.services.activity import ActivityService
from herald.services.audit import AuditService
from herald.services.billing import QuotaReset
from herald.services.job_queries import JobQueries
from herald.services.tenants import TenantAdmin
from herald_harness.vendors.resend import RESEND_SECRET
from tests.fakes.audit import FakeAuditLog
from tests.fakes.breakers import FakeBreakers
from tests.fakes.common import full_grant
from tests.fakes.jobs import FakeCounters, FakeJobTable
from tests.fakes.key_manager import InMemoryKeyManager
from tests.fakes.providers import FakeProviders
from tests.fakes.queues import FakeQueue
from tests.fakes.tenants import FakeSuppressions, FakeTenantTable

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SENDGRID_KEY = "SG.audit-test-key-0000000000000001"
RESEND_KEY = "re_audit_test_key_00000000000000002"
OPERATOR = Actor(ActorKind.OPERATOR, "alice", "alice")


class Clock:
    """A second later at every reading: each change gets its own time, so newest first is defined."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Rig:
    def __init__(self) -> None:
        self.table = FakeTenantTable()
        self.suppressions = FakeSuppressions(self.table.audit)
        self.clock = Clock()
        self.log = FakeAuditLog(self.table)
        self.audit = AuditService(self.log)
        self.service = AccountService(
            tenants=self.table,
            store=self.table,
            suppressions=self.suppressions,
            counters=FakeCounters(),
            secrets=Vault(InMemoryKeyManager()),
            providers=FakeProviders(),
            inbound_secrets=lambda provider, secret: delivery_format(provider).check_secret(secret),
            clock=self.clock,
        )

    def tenant(self, tenant_id: str = "t-1", plan: str = "startup") -> TenantContext:
        self.table.add_tenant(tenant_id, plan)
        return TenantContext(tenant_id, plan, "active", full_grant("CI deploy key"), START)

    def put(self, tenant: TenantContext, provider: str, key: str, webhook_secret: str | None = None) -> None:
        self.service.put_provider(
            tenant, provider, api_key=key, account_token=None, webhook_secret=webhook_secret
        )

    def actions(
        self, tenant: TenantContext, action: str | None = None, actor: str | None = None
    ) -> list[str]:
        page = self.audit.page(tenant, action=action, actor=actor)
        return [entry.action.value for entry in page.entries]


@pytest.fixture
def rig() -> Rig:
    return Rig()


def every_entry_text(entries: Iterator[AuditEntry] | list[AuditEntry]) -> str:
    return "\n".join(repr(entry) for entry in entries)


def test_provider_changes_are_recorded_newest_first_as_the_calling_key_from_its_address(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "sendgrid", SENDGRID_KEY)
    rig.put(tenant, "resend", RESEND_KEY, webhook_secret=RESEND_SECRET)
    rig.put(tenant, "sendgrid", SENDGRID_KEY[:-1] + "9")
    rig.service.set_priority(tenant, "resend", 1)
    rig.service.delete_provider(tenant, "sendgrid")

    page = rig.audit.page(tenant)

    assert [(entry.action.value, entry.target) for entry in page.entries] == [
        ("provider.removed", "SENDGRID"),
        ("provider.reordered", "RESEND"),
        ("provider.replaced", "SENDGRID"),
        ("provider.added", "RESEND"),
        ("provider.added", "SENDGRID"),
    ]
    removed, reordered, replaced, added_resend, _ = page.entries
    assert {(entry.actor.kind, entry.actor.name, entry.actor.ip) for entry in page.entries} == {
        (ActorKind.KEY, "CI deploy key", "203.0.113.9")
    }
    assert removed.details == {"priority": "2"}
    assert reordered.details == {"priority": "1", "previousPriority": "2", "swappedWith": "SENDGRID"}
    assert replaced.details == {"priority": "1", "lastFour": "0009", "webhookSecret": "none"}
    assert added_resend.details == {"priority": "2", "lastFour": "0002", "webhookSecret": "set"}
    assert page.next_cursor is None


def test_no_secret_reaches_an_entry_only_names_and_last_fours(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "resend", RESEND_KEY, webhook_secret=RESEND_SECRET)
    created = rig.service.create_signing_secret(tenant)
    rotated = rig.service.rotate_signing_secret(tenant)
    rig.service.delete_signing_secret(tenant)

    logged = every_entry_text(rig.table.audit)

    for secret in (RESEND_KEY, RESEND_SECRET, created.secret, rotated.secret, RESEND_KEY[-8:]):
        assert secret not in logged
    assert rig.actions(tenant) == [
        "signing_secret.deleted",
        "signing_secret.rotated",
        "signing_secret.created",
        "provider.added",
    ]
    assert rig.audit.page(tenant, action="signing_secret.rotated").entries[0].details == {
        "previousValidUntil": rotated.previous_valid_until
    }


def test_domains_and_a_removed_suppression_are_recorded_with_their_names(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "sendgrid", SENDGRID_KEY)
    rig.service.add_domain(tenant, "mail.acme.test")
    rig.service.verify_domain(tenant, "mail.acme.test")
    rig.service.delete_domain(tenant, "mail.acme.test")
    rig.suppressions.suppress(
        "t-1", Suppression("Bounced@Example.com", "hard_bounce", iso(START), "SENDGRID")
    )
    rig.service.delete_suppression(tenant, "Bounced@Example.com")

    entries = rig.audit.page(tenant).entries

    assert [(entry.action.value, entry.target) for entry in entries[:4]] == [
        ("suppression.removed", "bounced@example.com"),
        ("domain.removed", "mail.acme.test"),
        ("domain.verified", "mail.acme.test"),
        ("domain.added", "mail.acme.test"),
    ]
    assert entries[3].details == {"providers": "SENDGRID"}


def test_a_refused_change_leaves_no_entry(rig: Rig) -> None:
    tenant = rig.tenant()
    with pytest.raises(HeraldError):
        rig.service.delete_suppression(tenant, "never@example.com")
    with pytest.raises(HeraldError):
        rig.service.delete_provider(tenant, "sendgrid")
    rig.service.create_signing_secret(tenant)
    with pytest.raises(HeraldError):
        rig.service.create_signing_secret(tenant)

    assert rig.actions(tenant) == ["signing_secret.created"]


def test_pages_go_newest_first_with_a_cursor_to_the_end(rig: Rig) -> None:
    tenant = rig.tenant()
    for provider, key in (("sendgrid", SENDGRID_KEY), ("resend", RESEND_KEY)):
        rig.put(tenant, provider, key)
    rig.service.create_signing_secret(tenant)

    first = rig.audit.page(tenant, limit=2)
    second = rig.audit.page(tenant, limit=2, cursor=first.next_cursor)

    assert [entry.action.value for entry in first.entries] == ["signing_secret.created", "provider.added"]
    assert [(entry.action.value, entry.target) for entry in second.entries] == [
        ("provider.added", "SENDGRID")
    ]
    assert first.next_cursor is not None
    assert second.next_cursor is None


def test_filters_keep_one_action_or_one_actor_by_id_or_name(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.put(tenant, "sendgrid", SENDGRID_KEY)
    rig.service.create_signing_secret(tenant)
    TenantAdmin(rig.table, clock=rig.clock).set_plan("t-1", "indie", OPERATOR)

    assert rig.actions(tenant, action="provider.added") == ["provider.added"]
    assert rig.actions(tenant, actor="alice") == ["plan.changed"]
    assert rig.actions(tenant, actor="CI deploy key") == ["signing_secret.created", "provider.added"]
    assert rig.actions(tenant, actor="key_test") == ["signing_secret.created", "provider.added"]
    assert rig.actions(tenant, actor="nobody@example.com") == []


def test_an_unknown_action_is_refused_naming_the_actions_there_are(rig: Rig) -> None:
    tenant = rig.tenant()
    with pytest.raises(HeraldError) as refused:
        rig.audit.page(tenant, action="provider.deleted")
    assert refused.value.code is ErrorCode.VALIDATION_ERROR
    assert "provider.deleted is not an audit action" in str(refused.value)
    assert "provider.removed" in str(refused.value)
    assert "signing_secret.rotated" in str(refused.value)


@pytest.mark.parametrize("cursor", ["abc", "!!!", "MjAyNi0xMS0zMA", "x" * 40])
def test_a_cursor_the_log_did_not_hand_out_is_refused(rig: Rig, cursor: str) -> None:
    tenant = rig.tenant()
    with pytest.raises(HeraldError) as refused:
        rig.audit.page(tenant, cursor=cursor)
    assert (refused.value.code, str(refused.value)) == (ErrorCode.INVALID_CURSOR, "The cursor is not valid.")


def test_a_page_reads_at_most_the_limit_and_never_more_than_a_hundred(rig: Rig) -> None:
    tenant = rig.tenant()
    rig.audit.page(tenant, limit=5)
    rig.audit.page(tenant, limit=10_000)
    assert rig.log.reads == [5, 100]


def test_a_tenant_reads_only_its_own_entries(rig: Rig) -> None:
    mine, theirs = rig.tenant("t-1"), rig.tenant("t-2")
    rig.put(theirs, "sendgrid", SENDGRID_KEY)
    rig.service.create_signing_secret(theirs)

    assert rig.audit.page(mine).entries == ()
    # A cursor from the other tenant's log only points at a time: it reads this tenant's entries.
    cursor = rig.audit.page(theirs, limit=1).next_cursor
    assert rig.audit.page(mine, cursor=cursor).entries == ()


def test_operator_changes_are_recorded_as_the_operator_with_the_new_values(rig: Rig) -> None:
    tenant = rig.tenant()
    admin = TenantAdmin(rig.table, clock=rig.clock)
    admin.set_plan("t-1", "indie", OPERATOR)
    admin.set_status("t-1", active=False, actor=OPERATOR)
    admin.set_quota("t-1", 5000, OPERATOR)
    admin.set_rate("t-1", None, OPERATOR)

    entries = rig.audit.page(tenant).entries

    assert [(entry.action.value, dict(entry.details)) for entry in entries] == [
        ("tenant.changed", {"rateLimit": ""}),
        ("tenant.changed", {"quotaLimit": "5000"}),
        ("tenant.changed", {"status": "disabled"}),
        ("plan.changed", {"plan": "indie"}),
    ]
    assert {(entry.actor.kind, entry.actor.name, entry.actor.ip) for entry in entries} == {
        (ActorKind.OPERATOR, "alice", None)
    }


def test_a_lapsed_paid_plan_is_recorded_as_the_quota_reset_schedule(rig: Rig) -> None:
    tenant = rig.tenant(plan="startup")
    rig.table.update_profile("t-1", paid_until=iso(START - timedelta(days=30)))

    QuotaReset(rig.table, clock=lambda: START).run()

    [lapsed] = rig.audit.page(tenant, action="plan.changed").entries
    assert (lapsed.actor.kind, lapsed.actor.name) == (ActorKind.SYSTEM, "Quota reset schedule")
    assert lapsed.details["plan"] == Plan.FREE.value
    assert lapsed.details["paidUntil"] == ""


def job_queries(rig: Rig, jobs: FakeJobTable, queue: FakeQueue) -> JobQueries:
    counters = FakeCounters()
    return JobQueries(
        jobs,
        queue,
        ActivityService(counters, clock=rig.clock),
        schedules=jobs,
        counters=counters,
        secrets=Vault(InMemoryKeyManager()),
        breakers=FakeBreakers(rig.table),
        audit=rig.log,
        max_attempts=3,
        clock=lambda: iso(rig.clock()),
    )


def failed(jobs: FakeJobTable, job_id: str, created_at: str) -> None:
    jobs.add_job(
        "t-1",
        job_id,
        {"url": "https://hooks.example/in", "payload": {}},
        channel=Channel.WEBHOOK,
        created_at=created_at,
    )
    jobs.set_state("t-1", job_id, status=JobStatus.FAILED, attempts=3, error_message="HTTP 503")


def test_a_retry_and_a_recovery_are_recorded_once_each_with_what_they_requeued(rig: Rig) -> None:
    tenant = rig.tenant()
    jobs, queue = FakeJobTable(), FakeQueue()
    for job_id, created_at in (("job-1", "2026-11-30T01:00:00.000Z"), ("job-2", "2026-11-30T02:00:00.000Z")):
        failed(jobs, job_id, created_at)
    queries = job_queries(rig, jobs, queue)

    queries.retry(tenant, "job-1")
    window = (datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 12, 1, tzinfo=UTC))
    queries.recover(tenant, window, Channel.WEBHOOK, None)
    queries.recover(tenant, window, None, None)  # nothing left failed: nothing to record

    recovered, retried = rig.audit.page(tenant).entries
    assert (retried.action.value, retried.target, retried.actor.name) == (
        "job.retried",
        "job-1",
        "CI deploy key",
    )
    assert (recovered.action.value, dict(recovered.details)) == (
        "jobs.recovered",
        {
            "since": "2026-11-30T00:00:00.000Z",
            "until": "2026-12-01T00:00:00.000Z",
            "requeued": "1",
            "type": "webhook",
        },
    )
