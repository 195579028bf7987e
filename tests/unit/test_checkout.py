"""Starting an upgrade: which processor sells the plan, what it is told, and the refusals a tenant
sees; the plan itself only changes when the processor's verified webhook says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from herald.domain.account import TenantContext
from herald.domain.billing import PlanCatalog
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.inbound import Processor
from herald.domain.plans import Plan
from herald.services.checkout import CheckoutRequest, CheckoutService, Seller
from tests.fakes.tenants import FakeTenantTable

CONSOLE = "https://herald.example/console"


@dataclass
class FakeProcessor:
    asked: list[CheckoutRequest] = field(default_factory=list)
    down: bool = False

    def create(self, request: CheckoutRequest) -> str:
        if self.down:
            raise DependencyError("Polar checkout failed: HTTP 503")
        self.asked.append(request)
        return f"https://checkout.example/{len(self.asked)}"


class Rig:
    def __init__(self) -> None:
        self.tenants = FakeTenantTable()
        self.tenants.add_tenant("tenant-a", Plan.FREE.value)
        self.polar, self.paystack = FakeProcessor(), FakeProcessor()
        self.service = CheckoutService(
            self.tenants,
            {
                Processor.POLAR: Seller(Processor.POLAR, PlanCatalog.of("prod_indie", ""), self.polar),
                Processor.PAYSTACK: Seller(
                    Processor.PAYSTACK, PlanCatalog.of("PLN_indie", "PLN_startup"), self.paystack
                ),
            },
        )

    def tenant(self) -> TenantContext:
        profile = self.tenants.profile("tenant-a")
        return TenantContext(
            "tenant-a", profile.plan, "active", profile.api_key_hash, datetime(2026, 11, 1, tzinfo=UTC)
        )

    def refused(self, plan: Plan, processor: Processor | None) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            self.service.start(self.tenant(), plan, processor, CONSOLE)
        return caught.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_a_checkout_names_the_plan_the_tenant_and_the_way_back_to_the_console(rig: Rig) -> None:
    assert (
        rig.service.start(rig.tenant(), Plan.INDIE, Processor.POLAR, CONSOLE) == "https://checkout.example/1"
    )
    (asked,) = rig.polar.asked
    assert (asked.tenant_id, asked.plan_key) == ("tenant-a", "prod_indie")
    assert asked.success_url == f"{CONSOLE}/billing?checkout=done"
    assert asked.cancel_url == f"{CONSOLE}/billing?checkout=cancelled"
    assert rig.tenants.profile("tenant-a").plan == "free"


def test_without_a_choice_the_first_processor_that_sells_the_plan_takes_it(rig: Rig) -> None:
    rig.service.start(rig.tenant(), Plan.STARTUP, None, CONSOLE)
    assert ([r.plan_key for r in rig.paystack.asked], rig.polar.asked) == (["PLN_startup"], [])


def test_a_plan_a_processor_does_not_sell_is_refused_with_its_reason(rig: Rig) -> None:
    error = rig.refused(Plan.STARTUP, Processor.POLAR)
    assert (error.code, error.message) == (
        ErrorCode.PROCESSOR_NOT_AVAILABLE,
        "The startup plan is not sold through Polar.",
    )


def test_a_paying_tenant_changes_plans_in_the_processors_portal(rig: Rig) -> None:
    rig.tenants.update_profile("tenant-a", plan="indie", billing_status="active")
    paying = rig.refused(Plan.STARTUP, Processor.PAYSTACK)
    assert (paying.code, paying.message) == (
        ErrorCode.ALREADY_SUBSCRIBED,
        "The account pays for a subscription already; change it in the processor's customer portal.",
    )
    same = rig.refused(Plan.INDIE, None)
    assert (same.code, same.message) == (
        ErrorCode.ALREADY_SUBSCRIBED,
        "The account is on the indie plan already.",
    )


def test_a_processor_that_cannot_answer_is_reported(rig: Rig) -> None:
    rig.polar.down = True
    assert rig.refused(Plan.INDIE, Processor.POLAR).code is ErrorCode.PROVIDER_UNAVAILABLE
