"""The sandbox's SES v2 imitation, driven by Herald's own SES adapter and platform mail through
botocore, and its Polar and Paystack checkouts, driven by Herald's checkout adapters: the page's
Pay sends the processor's signed webhook, which Herald's own verifiers accept."""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
import requests
from botocore.config import Config

from herald.adapters.checkout.processors import PaystackCheckout, PolarCheckout
from herald.adapters.inbound import paystack as paystack_inbound
from herald.adapters.inbound import polar as polar_inbound
from herald.adapters.platform_mail import SesPlatformMail
from herald.adapters.providers.ses import SesProvider
from herald.domain.clock import iso, parse_iso
from herald.domain.errors import DependencyError
from herald.domain.inbound import SubscriptionEvent
from herald.domain.money import Money
from herald.domain.notifications import EmailNotification
from herald.domain.plans import add_months
from herald.domain.providers import Credential, ProviderFailure, Routing
from herald.services.checkout import CheckoutRequest, PortalRequest
from herald_local.sandbox import PaymentTargets, SandboxServer

POLAR_SECRET = "whsec_aGVyYWxkIGxvY2FsLW9ubHkgUG9sYXIgc2VjcmV0ISE="
PAYSTACK_KEY = "sk_test_sandbox_console"
TENANT = "8fc45907-daf1-4f13-907d-414ee679503e"
POLAR_INDIE, PAYSTACK_INDIE = "polar-local-product-indie", "PLN_local_indie"
PRICES = {POLAR_INDIE: Money(2900, "USD"), PAYSTACK_INDIE: Money(500_000, "NGN")}


class PaymentReceiver(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        PaymentReceiver.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        return None


@pytest.fixture
def receiver() -> Iterator[str]:
    PaymentReceiver.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), PaymentReceiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/api/v1"
    server.shutdown()


@pytest.fixture
def sandbox(receiver: str) -> Iterator[SandboxServer]:
    server = SandboxServer()
    server.context.checkouts.targets = PaymentTargets(receiver, POLAR_SECRET, PAYSTACK_KEY, PRICES)
    server.start()
    yield server
    server.stop()


def ses_client(sandbox: SandboxServer) -> Any:
    return boto3.session.Session().client(
        "sesv2",
        region_name="us-east-1",
        endpoint_url=f"{sandbox.base_url}/ses",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}),
    )


def test_platform_mail_lands_in_the_sandbox_mailbox_as_ses(sandbox: SandboxServer) -> None:
    SesPlatformMail(lambda: ses_client(sandbox), "notifications@herald.example").send(
        "ada@example.com", "Your Herald code: 123456", "Enter this code."
    )
    (message,) = requests.get(f"{sandbox.base_url}/_sandbox/messages?provider=ses", timeout=5).json()
    assert (message["recipient"], message["subject"], message["text"]) == (
        "ada@example.com",
        "Your Herald code: 123456",
        "Enter this code.",
    )
    assert message["from"] == "notifications@herald.example"


def routing(job_id: str) -> Routing:
    return Routing(job_id=job_id, tenant_id=TENANT, from_address="notifications@herald.example")


def mail(to: str) -> EmailNotification:
    return EmailNotification(to=to, subject="Hi", body="<p>Hi</p>")


def test_free_plan_mail_through_the_ses_adapter_keeps_its_job_id_and_fails_as_the_recipient_asks(
    sandbox: SandboxServer,
) -> None:
    ses = SesProvider(lambda: ses_client(sandbox), "notifications@herald.example")
    ses.send(mail("reader@example.com"), routing("job-1"), Credential("not-used"))
    assert (
        requests.get(f"{sandbox.base_url}/_sandbox/messages?jobId=job-1", timeout=5).json()[0]["provider"]
        == "ses"
    )
    with pytest.raises(ProviderFailure) as failed:
        ses.send(mail("fail-500@example.com"), routing("job-2"), Credential("not-used"))
    assert failed.value.status == 500


def test_a_refused_platform_mail_is_a_dependency_error(sandbox: SandboxServer) -> None:
    with pytest.raises(DependencyError, match="platform mail failed"):
        SesPlatformMail(lambda: ses_client(sandbox), "notifications@herald.example").send(
            "fail-500@example.com", "s", "t"
        )


def checkout_request(plan_key: str = POLAR_INDIE) -> CheckoutRequest:
    return CheckoutRequest(
        tenant_id=TENANT,
        email="ada@example.com",
        plan_key=plan_key,
        success_url="http://127.0.0.1:3000/console/billing?checkout=done",
        cancel_url="http://127.0.0.1:3000/console/billing?checkout=cancelled",
    )


def test_paying_a_polar_checkout_sends_a_subscription_herald_verifies_and_returns_to_the_console(
    sandbox: SandboxServer,
) -> None:
    url = PolarCheckout(f"{sandbox.base_url}/polar", lambda: "polar_oat_test").create(checkout_request())
    assert "Polar checkout (sandbox)" in requests.get(url, timeout=5).text
    paid = requests.post(f"{url}/pay", allow_redirects=False, timeout=10)
    assert (paid.status_code, paid.headers["Location"]) == (303, checkout_request().success_url)
    ((path, headers, body),) = PaymentReceiver.received
    assert path == "/api/v1/payments/polar/webhook"
    polar_inbound.verify(headers, body, POLAR_SECRET, float(headers["webhook-timestamp"]))
    (event,) = polar_inbound.parse(body, headers)
    assert isinstance(event, SubscriptionEvent)
    assert (event.tenant_id, event.plan_key, event.paid) == (TENANT, POLAR_INDIE, PRICES[POLAR_INDIE])
    # Polar's monthly period is a calendar month: paid-until is the quota period's end, not a day
    # before it in a 31-day month (as 30 days were).
    assert event.period_start is not None
    assert event.period_end == iso(add_months(parse_iso(event.period_start), 1))


def test_paying_a_paystack_checkout_sends_a_charge_of_the_plans_price_herald_verifies(
    sandbox: SandboxServer,
) -> None:
    request = checkout_request(PAYSTACK_INDIE)
    url = PaystackCheckout(f"{sandbox.base_url}/paystack", lambda: PAYSTACK_KEY).create(request)
    paid = requests.post(f"{url}/pay", allow_redirects=False, timeout=10)
    assert paid.headers["Location"].startswith(f"{request.success_url}&reference=")
    ((path, headers, body),) = PaymentReceiver.received
    assert path == "/api/v1/payments/paystack/webhook"
    expected = hmac.new(PAYSTACK_KEY.encode(), body, hashlib.sha512).hexdigest()
    assert headers["x-paystack-signature"] == expected
    (event,) = paystack_inbound.parse(body)
    assert isinstance(event, SubscriptionEvent)
    assert (event.tenant_id, event.paid) == (TENANT, PRICES[PAYSTACK_INDIE])


def test_a_product_or_plan_the_imitated_processors_do_not_sell_gets_no_checkout(
    sandbox: SandboxServer,
) -> None:
    with pytest.raises(DependencyError, match="HTTP 422"):
        PolarCheckout(f"{sandbox.base_url}/polar", lambda: "polar_oat_test").create(
            checkout_request("prod_other")
        )
    with pytest.raises(DependencyError, match="HTTP 404"):
        PaystackCheckout(f"{sandbox.base_url}/paystack", lambda: PAYSTACK_KEY).create(
            checkout_request("PLN_other")
        )


def test_a_cancelled_checkout_returns_without_a_payment_and_cannot_be_paid_after(
    sandbox: SandboxServer,
) -> None:
    url = PolarCheckout(f"{sandbox.base_url}/polar", lambda: "polar_oat_test").create(checkout_request())
    cancelled = requests.post(f"{url}/cancel", allow_redirects=False, timeout=5)
    assert cancelled.headers["Location"] == checkout_request().cancel_url
    assert requests.post(f"{url}/pay", allow_redirects=False, timeout=5).status_code == 409
    assert PaymentReceiver.received == []
    listed = requests.get(f"{sandbox.base_url}/_sandbox/checkouts", timeout=5).json()
    assert [entry["status"] for entry in listed] == ["abandoned"]


def test_a_processor_that_refuses_the_credential_is_a_dependency_error(sandbox: SandboxServer) -> None:
    with pytest.raises(DependencyError, match="HTTP 401"):
        PolarCheckout(f"{sandbox.base_url}/polar", lambda: "not-a-token").create(checkout_request())
    with pytest.raises(DependencyError, match="HTTP 401"):
        PaystackCheckout(f"{sandbox.base_url}/paystack", lambda: "bad").create(checkout_request())


def test_the_customer_portals_open_on_the_sandboxs_portal_page(sandbox: SandboxServer) -> None:
    polar = PolarCheckout(f"{sandbox.base_url}/polar", lambda: "polar_oat_test")
    with pytest.raises(DependencyError, match="HTTP 404"):
        polar.portal(PortalRequest(TENANT, "sub_1"))  # no checkout ever named this customer
    polar.create(checkout_request())
    polar_url = polar.portal(PortalRequest(TENANT, "sub_1"))
    paystack = PaystackCheckout(f"{sandbox.base_url}/paystack", lambda: PAYSTACK_KEY)
    paystack_url = paystack.portal(PortalRequest(TENANT, "SUB_abc"))

    assert polar_url == f"{sandbox.base_url}/_sandbox/portal/polar/{TENANT}"
    assert paystack_url == f"{sandbox.base_url}/_sandbox/portal/paystack/SUB_abc"
    assert "Polar customer portal (sandbox)" in requests.get(polar_url, timeout=5).text
    assert "Paystack customer portal (sandbox)" in requests.get(paystack_url, timeout=5).text
    with pytest.raises(DependencyError, match="no subscription code is known yet"):
        paystack.portal(PortalRequest(TENANT, ""))
