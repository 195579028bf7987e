"""A free tenant's SES tenant at creation, and the operator's resume: SES failing at sign-up never
costs the account, and a resume is written to the audit log as the operator's."""

from __future__ import annotations

import pytest

from herald.domain.access import Actor, ActorKind
from herald.domain.account import PlatformSending
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.services.tenants import TenantAdmin
from tests.fakes.audit import FakeAuditLog
from tests.fakes.tenants import FakeTenantTable

OPERATOR = Actor(ActorKind.OPERATOR, "ops", "operator ops")


class FakeSesTenants:
    def __init__(self, *, failing: bool = False) -> None:
        self.failing = failing
        self.ensured: list[str] = []
        self.resumed: list[str] = []

    def ensure(self, tenant_id: str) -> object:
        if self.failing:
            raise DependencyError("SES tenant not set up: TooManyRequestsException")
        self.ensured.append(tenant_id)
        return tenant_id

    def resume(self, tenant_id: str) -> object:
        self.resumed.append(tenant_id)
        return tenant_id

    def sending(self, tenant_id: str) -> PlatformSending:  # noqa: ARG002 - not read here
        return PlatformSending.ENABLED


def test_a_free_tenant_gets_its_ses_tenant_and_a_paid_one_none() -> None:
    ses = FakeSesTenants()
    admin = TenantAdmin(FakeTenantTable(), ses_tenants=ses)

    free = admin.create("Free", "free@example.com", "free", OPERATOR)
    admin.create("Paid", "paid@example.com", "startup", OPERATOR)

    assert ses.ensured == [free.tenant_id]


def test_ses_failing_at_sign_up_still_creates_the_account() -> None:
    table = FakeTenantTable()
    admin = TenantAdmin(table, ses_tenants=FakeSesTenants(failing=True))

    issued = admin.create("Free", "free@example.com", "free", OPERATOR)

    assert table.profile(issued.tenant_id).plan == "free"


def test_resume_sending_is_audited_as_the_operators() -> None:
    table, ses = FakeTenantTable(), FakeSesTenants()
    admin = TenantAdmin(table, ses_tenants=ses, audit=FakeAuditLog(table))
    issued = admin.create("Free", "free@example.com", "free", OPERATOR)

    admin.resume_sending(issued.tenant_id, OPERATOR)

    newest = (
        FakeAuditLog(table).page(issued.tenant_id, action=None, actor=None, limit=1, cursor=None).entries[0]
    )
    assert (newest.action.value, newest.target, newest.actor.name) == (
        "ses.sending_resumed",
        issued.tenant_id,
        "operator ops",
    )
    assert ses.resumed == [issued.tenant_id]


def test_resume_sending_of_no_tenant_is_tenant_not_found() -> None:
    table = FakeTenantTable()
    admin = TenantAdmin(table, ses_tenants=FakeSesTenants(), audit=FakeAuditLog(table))

    with pytest.raises(HeraldError) as caught:
        admin.resume_sending("nobody", OPERATOR)

    assert (caught.value.code, str(caught.value)) == (ErrorCode.TENANT_NOT_FOUND, "No tenant nobody.")
