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
from herald.domain.money import Money
from herald.domain.plans import Plan
from herald.services.checkout import CheckoutRequest, CheckoutService, PortalRequest, Seller
from tests.fakes.common import full_grant
from tests.fakes.tenants import FakeTenantTable

CONSOLE = "https://herald.example/console"
INDIE_USD = Money(2900, "USD")
INDIE_NGN, STARTUP_NGN = Money(500000, "NGN"), Money(1500000, "NGN")


@dataclass
class FakeProcessor:
    asked: list[CheckoutRequest] = field(default_factory=list)
    down: bool = False

    portals: list[PortalRequest] = field(default_factory=list)

    def create(self, request: CheckoutRequest) -> str:
        if self.down:
            raise DependencyError("Polar checkout failed: HTTP 503")
        self.asked.append(request)
        return f"https://checkout.example/{len(self.asked)}"

    def portal(self, request: PortalRequest) -> str:
        if self.down:
            raise DependencyError("Polar customer portal failed: HTTP 503")
        self.portals.append(request)
        return f"https://portal.example/{request.tenant_id}"


class Rig:
    def __init__(self) -> None:
        self.tenants = FakeTenantTable()
        self.tenants.add_tenant("tenant-a", Plan.FREE.value)
        self.polar, self.paystack = FakeProcessor(), FakeProcessor()
        self.service = CheckoutService(
            self.tenants,
            {
                Processor.POLAR: Seller(
                    Processor.POLAR,
                    # A price for a plan Polar does not sell is never offered.
                    PlanCatalog.of(
                        "prod_indie", "", {Plan.INDIE: INDIE_USD, Plan.STARTUP: Money(9900, "USD")}
                    ),
                    self.polar,
                ),
                Processor.PAYSTACK: Seller(
                    Processor.PAYSTACK,
                    PlanCatalog.of(
                        "PLN_indie", "PLN_startup", {Plan.INDIE: INDIE_NGN, Plan.STARTUP: STARTUP_NGN}
                    ),
                    self.paystack,
                ),
            },
        )

    def tenant(self) -> TenantContext:
        profile = self.tenants.profile("tenant-a")
        return TenantContext(
            "tenant-a", profile.plan, "active", full_grant(), datetime(2026, 11, 1, tzinfo=UTC)
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
        "The account pays for a subscription already. A plan change is made in the processor's"
        " customer portal, which the Billing page links to.",
    )
    same = rig.refused(Plan.INDIE, None)
    assert (same.code, same.message) == (
        ErrorCode.ALREADY_SUBSCRIBED,
        "The account is on the indie plan already.",
    )


def test_a_processor_that_cannot_answer_is_reported(rig: Rig) -> None:
    rig.polar.down = True
    assert rig.refused(Plan.INDIE, Processor.POLAR).code is ErrorCode.PROVIDER_UNAVAILABLE


def test_the_plans_carry_their_limits_prices_and_what_they_are_for_the_account(rig: Rig) -> None:
    rig.tenants.update_profile("tenant-a", plan="startup", billing_status="active")

    offers = {offer.plan: offer for offer in rig.service.offers(rig.tenant())}

    assert [offer.value for offer in offers] == ["free", "indie", "startup"]
    assert {plan: offer.change.value for plan, offer in offers.items()} == {
        Plan.FREE: "downgrade",
        Plan.INDIE: "downgrade",
        Plan.STARTUP: "current",
    }
    assert offers[Plan.FREE].prices == ()
    assert offers[Plan.INDIE].prices == ((Processor.POLAR, INDIE_USD), (Processor.PAYSTACK, INDIE_NGN))
    # Polar sells no Startup here: only Paystack's price is shown.
    assert offers[Plan.STARTUP].prices == ((Processor.PAYSTACK, STARTUP_NGN),)
    assert (offers[Plan.INDIE].limits.requests_per_minute, offers[Plan.INDIE].limits.monthly_webhooks) == (
        50,
        4000,
    )


def test_a_smaller_plan_is_a_downgrade_made_in_the_portal(rig: Rig) -> None:
    rig.tenants.update_profile("tenant-a", plan="startup", billing_status="active")
    down = rig.refused(Plan.INDIE, None)
    assert (down.code, down.message) == (
        ErrorCode.ALREADY_SUBSCRIBED,
        "The account pays for a subscription already. A move to a smaller plan is made in the"
        " processor's customer portal, which the Billing page links to.",
    )


def test_the_portal_is_the_one_of_the_processor_the_tenant_pays_with(rig: Rig) -> None:
    rig.tenants.update_profile(
        "tenant-a", plan="indie", billing_status="active", subscription="PAYSTACK:SUB_42"
    )

    url = rig.service.portal(rig.tenant())

    assert url == "https://portal.example/tenant-a"
    assert rig.paystack.portals == [PortalRequest("tenant-a", "SUB_42")]
    assert rig.polar.portals == []


def test_without_a_known_subscription_there_is_no_portal(rig: Rig) -> None:
    with pytest.raises(HeraldError) as caught:
        rig.service.portal(rig.tenant())
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.NOT_SUBSCRIBED,
        "The account pays for no subscription Herald knows of yet, so there is no customer portal to"
        " open; the processor's receipt email links to it.",
    )


def test_a_portal_the_processor_cannot_open_is_reported(rig: Rig) -> None:
    rig.tenants.update_profile("tenant-a", plan="indie", billing_status="active", subscription="POLAR:sub_1")
    rig.polar.down = True
    with pytest.raises(HeraldError) as caught:
        rig.service.portal(rig.tenant())
    assert (caught.value.code, caught.value.message) == (
        ErrorCode.PROVIDER_UNAVAILABLE,
        "Polar could not open the customer portal; retry shortly.",
    )
