"""The five inbound webhook functions, their real handlers in this process, against moto resources
built from template.yaml (the platform secrets in moto's SSM, as the local stack puts them): signed
events land in jobs, suppress recipients and change plans; forged, tampered, stale, unsigned and
misaddressed requests answer 401/404 and leave the table as it was."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.queueing import decode_message
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.domain.clock import now_iso
from herald.domain.money import Money
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, client, herald_in_moto
from herald_harness.inbound_samples import paystack_charge, polar_subscription
from herald_harness.inbound_signers import (
    PAYSTACK_PLAN_INDIE,
    PAYSTACK_PLAN_STARTUP,
    PAYSTACK_SECRET,
    POLAR_PRODUCT_INDIE,
    paystack_headers,
    polar_headers,
)
from herald_harness.senders import STRANGER_SECRET, compact
from herald_harness.vendors.postmark import POSTMARK_CREDENTIALS, POSTMARK_SECRET, postmark_headers
from herald_harness.vendors.resend import RESEND_SECRET, resend_headers
from herald_harness.vendors.sendgrid import (
    SENDGRID_VERIFICATION_KEY,
    STRANGER_SENDGRID_KEY,
    sendgrid_bounce,
    sendgrid_headers,
)

EMAIL_QUEUE = "EmailNormalQueueUrl"
INBOUND_KINDS = ("event", "inbound", "suppression", "billinglink")
ALERT_WAIT_SECONDS = 10.0


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


class Tenant:
    """A startup tenant with a SendGrid, Resend and Postmark key, each with its webhook secret."""

    def __init__(self, herald: HeraldInMoto) -> None:
        issued = herald.new_tenant(providers=())
        self.herald, self.tenant_id, self.key = herald, issued.tenant_id, issued.api_key
        for priority, (name, secret) in enumerate(
            (
                ("SENDGRID", SENDGRID_VERIFICATION_KEY),
                ("RESEND", RESEND_SECRET),
                ("POSTMARK", POSTMARK_SECRET),
            ),
            start=1,
        ):
            herald.store_provider_key(
                self.tenant_id, name, f"{name.lower()}-key-000{priority}", priority, webhook_secret=secret
            )

    def sent_job(self, to: str) -> str:
        """An email accepted by the API and claimed by a worker: handed to a provider."""
        answer = self.herald.api(
            "POST",
            "/api/v1/notifications/email",
            {"to": to, "subject": "Hi", "body": "<p>Hi</p>"},
            key=self.key,
        )
        assert answer.status == 202, answer.body
        [message] = [
            decode_message(raw["Body"])
            for raw in self.herald.queued(EMAIL_QUEUE)
            if json.loads(raw["Body"])["jobId"] == answer.data["jobId"]
        ]
        now = int(time.time())
        claim = DynamoDeliveryStore(self.herald.table).claim(
            message, now=now, lease_seconds=1, started_at=now_iso(), max_attempts=3, expires_at=now + 86400
        )
        assert claim is not None
        self.herald.drain_queues()
        return str(message.job_id)

    def job(self, job_id: str) -> dict[str, Any]:
        answer = self.herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=self.key)
        assert answer.status == 200, answer.body
        document: dict[str, Any] = answer.data
        return document

    def suppressions(self) -> list[dict[str, Any]]:
        answer = self.herald.api("GET", "/api/v1/account/suppressions", key=self.key)
        assert answer.status == 200, answer.body
        listed: list[dict[str, Any]] = answer.data
        return listed

    def account(self) -> dict[str, Any]:
        document: dict[str, Any] = self.herald.api("GET", "/api/v1/account", key=self.key).data
        return document


def post(herald: HeraldInMoto, path: str, body: bytes, headers: dict[str, str]) -> ApiAnswer:
    return herald.api("POST", path, body, headers=headers)


def inbound_items() -> dict[str, int]:
    """How many items of each inbound kind the table holds."""
    table = client("dynamodb").list_tables()["TableNames"][0]
    items = client("dynamodb").scan(TableName=table)["Items"]
    kinds = [item["kind"]["S"] for item in items if "kind" in item]
    return {kind: kinds.count(kind) for kind in INBOUND_KINDS}


def bounce(tenant: Tenant, job_id: str, to: str, event_id: str = "sg-1") -> bytes:
    now = int(time.time())
    return sendgrid_bounce(tenant_id=tenant.tenant_id, job_id=job_id, to=to, event_id=event_id, timestamp=now)


@pytest.fixture
def tenant(herald: HeraldInMoto) -> Tenant:
    return Tenant(herald)


# ---------------------------------------------------------------- delivery events


def test_a_sendgrid_hard_bounce_lands_in_the_job_suppresses_the_address_and_stops_the_next_email(
    herald: HeraldInMoto, tenant: Tenant
) -> None:
    to = f"gone-{uuid.uuid4().hex[:8]}@example.org"
    job_id = tenant.sent_job(to)
    body = bounce(tenant, job_id, to)
    path = f"/api/v1/webhooks/sendgrid/{tenant.tenant_id}"

    first = post(herald, path, body, sendgrid_headers(body, int(time.time())))
    again = post(herald, path, body, sendgrid_headers(body, int(time.time())))

    assert (first.status, first.data) == (
        200,
        {"received": True, "recorded": 1, "duplicate": 0, "ignored": 0},
    )
    assert (again.status, again.data["duplicate"]) == (200, 1)
    [event] = tenant.job(job_id)["events"]
    assert (event["type"], event["provider"]) == ("bounced", "SENDGRID")
    assert [(entry["email"], entry["reason"], entry["source"]) for entry in tenant.suppressions()] == [
        (to, "bounced", "SENDGRID")
    ]

    next_job = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": to, "subject": "Again", "body": "<p>x</p>"},
        key=tenant.key,
    ).data["jobId"]
    herald.invoke_worker(EMAIL_QUEUE, herald.receive_records(EMAIL_QUEUE))
    state = herald.job_state(tenant.tenant_id, next_job)
    assert state is not None
    assert (state.status.value, state.error_message) == ("failed", "recipient suppressed")
    assert [log.used_provider for log in state.delivery_logs] == [None]  # no provider was called


def test_a_suppressed_address_in_another_spelling_is_still_suppressed_but_a_tag_is_another_mailbox(
    herald: HeraldInMoto, tenant: Tenant
) -> None:
    """Once sent: with victim-case@… suppressed, the same address with a fullwidth "ｖ" went out."""
    domain = f"probe-{uuid.uuid4().hex[:8]}.example.org"
    to = f"victim-case@{domain}"
    body = bounce(tenant, tenant.sent_job(to), to, f"sg-{uuid.uuid4().hex}")
    path = f"/api/v1/webhooks/sendgrid/{tenant.tenant_id}"
    assert post(herald, path, body, sendgrid_headers(body, int(time.time()))).status == 200

    def attempt(address: str) -> tuple[str, str | None]:
        answer = herald.api(
            "POST",
            "/api/v1/notifications/email",
            {"to": address, "subject": "Hi", "body": "<p>x</p>"},
            key=tenant.key,
        )
        assert answer.status == 202, answer.body
        herald.invoke_worker(EMAIL_QUEUE, herald.receive_records(EMAIL_QUEUE))
        state = herald.job_state(tenant.tenant_id, answer.data["jobId"])
        assert state is not None
        return state.status.value, state.error_message

    for spelling in (f"\uff56ictim-case@{domain}", f"Victim-Case@{domain.upper()}"):
        assert attempt(spelling) == ("failed", "recipient suppressed"), spelling
    assert attempt(f"victim-case+news@{domain}")[1] != "recipient suppressed"

    deleted = herald.api(
        "DELETE", f"/api/v1/account/suppressions/%EF%BD%96ictim-case%40{domain}", key=tenant.key
    )
    assert deleted.status == 200, deleted.body
    assert tenant.suppressions() == []


def test_forged_tampered_stale_unsigned_and_misaddressed_requests_store_nothing(
    herald: HeraldInMoto, tenant: Tenant
) -> None:
    to = "victim@example.org"
    job_id = tenant.sent_job(to)
    body = bounce(tenant, job_id, to, "sg-attack")
    now = int(time.time())
    bystander = herald.new_tenant(providers=("SENDGRID",))  # a key, but no webhook secret
    own = f"/api/v1/webhooks/sendgrid/{tenant.tenant_id}"
    attempts: list[tuple[str, str, bytes, dict[str, str], int]] = [
        ("forged", own, body, sendgrid_headers(body, now, STRANGER_SENDGRID_KEY), 401),
        ("tampered", own, body.replace(b"victim", b"victin"), sendgrid_headers(body, now), 401),
        ("replayed-old", own, body, sendgrid_headers(body, now - 301), 401),
        ("missing-header", own, body, {}, 401),
        (
            "no-secret",
            f"/api/v1/webhooks/sendgrid/{bystander.tenant_id}",
            body,
            sendgrid_headers(body, now),
            404,
        ),
        (
            "unknown-tenant",
            f"/api/v1/webhooks/sendgrid/{uuid.uuid4()}",
            body,
            sendgrid_headers(body, now),
            404,
        ),
        (
            "not-a-tenant-id",
            "/api/v1/webhooks/sendgrid/TENANT%23PROFILE",
            body,
            sendgrid_headers(body, now),
            404,
        ),
    ]
    before = inbound_items()

    for name, path, sent, headers, status in attempts:
        answer = post(herald, path, sent, headers)
        assert (answer.status, answer.body["success"]) == (status, False), name
        assert answer.body["code"] == ("invalid_signature" if status == 401 else "webhook_not_found"), name

    assert inbound_items() == before
    assert tenant.job(job_id)["events"] == []
    assert tenant.suppressions() == []


def test_a_resend_event_signed_by_svix_is_accepted_and_a_changed_byte_is_refused(
    herald: HeraldInMoto, tenant: Tenant
) -> None:
    job_id = tenant.sent_job("reader@example.org")
    event = json.loads(compact("resend-delivered"))
    event["data"]["tags"] = {"herald_job_id": job_id, "herald_tenant_id": tenant.tenant_id}
    body = json.dumps(event, separators=(",", ":")).encode()
    headers = resend_headers(body, int(time.time()), f"msg_{uuid.uuid4().hex}")
    path = f"/api/v1/webhooks/resend/{tenant.tenant_id}"

    changed = post(herald, path, body.replace(b"delivered", b"delivereD"), headers)
    accepted = post(herald, path, body, headers)
    stranger = post(herald, path, body, resend_headers(body, int(time.time()), "msg_x", STRANGER_SECRET))

    assert (changed.status, accepted.status, stranger.status) == (401, 200, 401)
    assert [(item["type"], item["provider"]) for item in tenant.job(job_id)["events"]] == [
        ("delivered", "RESEND")
    ]


def test_a_postmark_event_needs_the_tenants_basic_auth_password(herald: HeraldInMoto, tenant: Tenant) -> None:
    job_id = tenant.sent_job("ada.lovelace@example.org")
    record = json.loads(compact("postmark-delivery")) | {"Metadata": {"herald_job_id": job_id}}
    body = json.dumps(record).encode()
    path = f"/api/v1/webhooks/postmark/{tenant.tenant_id}"
    wrong = postmark_headers(type(POSTMARK_CREDENTIALS)(password="x" * 32, username="herald"))

    refused = post(herald, path, body, wrong)
    accepted = post(herald, path, body, postmark_headers())

    assert (refused.status, refused.body["code"], accepted.status) == (401, "invalid_signature", 200)
    assert [item["type"] for item in tenant.job(job_id)["events"]] == ["delivered"]


# ---------------------------------------------------------------- payments


def polar_event(tenant_id: str, kind: str) -> bytes:
    return polar_subscription(kind, tenant_id=tenant_id, product_id=POLAR_PRODUCT_INDIE)


def test_polar_subscriptions_move_a_tenant_to_its_paid_plan_and_back_and_a_forgery_does_nothing(
    herald: HeraldInMoto,
) -> None:
    tenant = herald.new_tenant("free", providers=())
    path = "/api/v1/payments/polar/webhook"
    active = polar_event(tenant.tenant_id, "subscription.active")

    def plan() -> str:
        return str(herald.api("GET", "/api/v1/account", key=tenant.api_key).data["plan"])

    forged = post(herald, path, active, polar_headers(active, int(time.time()), "evt-f", STRANGER_SECRET))
    assert (forged.status, plan()) == (401, "free")

    accepted = post(herald, path, active, polar_headers(active, int(time.time()), f"evt-{uuid.uuid4()}"))
    assert (accepted.status, accepted.data["recorded"], plan()) == (200, 1, "indie")
    account = herald.api("GET", "/api/v1/account", key=tenant.api_key).data
    assert account["periodStart"] == "2026-11-30T07:58:10.000Z"

    revoked = polar_event(tenant.tenant_id, "subscription.revoked")
    answer = post(herald, path, revoked, polar_headers(revoked, int(time.time()), f"evt-{uuid.uuid4()}"))
    assert (answer.status, plan()) == (200, "free")


def test_a_paystack_charge_with_a_valid_hmac_activates_a_plan(herald: HeraldInMoto) -> None:
    tenant = herald.new_tenant("free", providers=())
    body = paystack_charge(tenant_id=tenant.tenant_id, plan_code=PAYSTACK_PLAN_INDIE, reference="r-1")
    path = "/api/v1/payments/paystack/webhook"

    forged = post(herald, path, body, paystack_headers(body, "sk_test_not_the_platforms"))
    accepted = post(herald, path, body, paystack_headers(body))
    replayed = post(herald, path, body, paystack_headers(body))

    assert (forged.status, accepted.status, replayed.data["duplicate"]) == (401, 200, 1)
    assert herald.api("GET", "/api/v1/account", key=tenant.api_key).data["plan"] == "indie"


def payment_alert(herald: HeraldInMoto, tenant_id: str) -> dict[str, Any]:
    """The one refused-payment alert about a tenant that reached AlertFunction's subscription."""
    deadline = time.monotonic() + ALERT_WAIT_SECONDS
    while True:
        events = herald.sns.of("AlertFunction")
        messages: list[dict[str, Any]] = [
            json.loads(event["Records"][0]["Sns"]["Message"]) for event in events
        ]
        alerts = [
            m for m in messages if m.get("type") == "herald.payment-refused" and m["tenantId"] == tenant_id
        ]
        if alerts or time.monotonic() > deadline:
            [alert] = alerts
            return alert
        time.sleep(0.05)


def test_the_probes_paystack_charge_of_100_kobo_for_startup_is_answered_200_and_alerts_the_operators(
    herald: HeraldInMoto,
) -> None:
    tenant = herald.new_tenant("free", providers=())
    probe = paystack_charge(
        tenant_id=tenant.tenant_id, plan_code=PAYSTACK_PLAN_STARTUP, reference="probe", paid=Money(100, "NGN")
    )
    path = "/api/v1/payments/paystack/webhook"

    answer = post(herald, path, probe, paystack_headers(probe))

    assert (answer.status, answer.data["ignored"]) == (200, 1)
    assert herald.api("GET", "/api/v1/account", key=tenant.api_key).data["plan"] == "free"
    # Recorded: sent again, it is a duplicate.
    assert post(herald, path, probe, paystack_headers(probe)).data["duplicate"] == 1
    alert = payment_alert(herald, tenant.tenant_id)
    assert (alert["plan"], alert["reason"]) == ("startup", "paid 100 NGN; the startup plan costs 4500000 NGN")
    assert PAYSTACK_SECRET not in json.dumps(alert)

    paid = paystack_charge(tenant_id=tenant.tenant_id, plan_code=PAYSTACK_PLAN_STARTUP, reference="paid")
    assert post(herald, path, paid, paystack_headers(paid)).data["recorded"] == 1
    assert herald.api("GET", "/api/v1/account", key=tenant.api_key).data["plan"] == "startup"


def test_a_polar_renewal_below_the_price_extends_nothing_and_alerts_the_operators(
    herald: HeraldInMoto,
) -> None:
    tenant = herald.new_tenant("free", providers=())
    path = "/api/v1/payments/polar/webhook"
    active = polar_event(tenant.tenant_id, "subscription.active")
    post(herald, path, active, polar_headers(active, int(time.time()), f"evt-{uuid.uuid4()}"))
    paid_until = herald.api("GET", "/api/v1/account", key=tenant.api_key).data["billing"]["paidUntil"]
    order = json.loads(compact("polar-order-paid"))
    order["data"] |= {"net_amount": 100, "metadata": {"herald_tenant_id": tenant.tenant_id}}
    renewal = json.dumps(order).encode()

    answer = post(herald, path, renewal, polar_headers(renewal, int(time.time()), f"evt-{uuid.uuid4()}"))

    assert (answer.status, answer.data["ignored"]) == (200, 1)
    account = herald.api("GET", "/api/v1/account", key=tenant.api_key).data
    assert (account["plan"], account["billing"]["paidUntil"]) == ("indie", paid_until)
    alert = payment_alert(herald, tenant.tenant_id)
    assert (alert["event"], alert["reason"]) == ("order.paid", "paid 100 USD; the indie plan costs 2900 USD")


def test_a_providers_unsubscribe_stops_topic_mail_to_the_address_but_not_mail_without_a_topic(
    herald: HeraldInMoto, tenant: Tenant
) -> None:
    """SendGrid's unsubscribe names none of Herald's topics: an unsubscribe from every topic."""
    to = f"leaver-{uuid.uuid4().hex[:8]}@example.org"
    [event] = json.loads(bounce(tenant, tenant.sent_job(to), to, f"sg-{uuid.uuid4().hex}"))
    body = json.dumps([{**event, "event": "unsubscribe"}], separators=(",", ":")).encode()
    path = f"/api/v1/webhooks/sendgrid/{tenant.tenant_id}"

    assert post(herald, path, body, sendgrid_headers(body, int(time.time()))).status == 200

    assert tenant.suppressions() == []
    listed = herald.api("GET", "/api/v1/account/unsubscribes", key=tenant.key).data["data"]
    assert [(item["email"], item["topic"], item["source"], item["provider"]) for item in listed] == [
        (to, "*", "provider", "SENDGRID")
    ]
    outcomes = []
    for topic in ({"unsubscribe": {"topic": "news"}}, {}):
        answer = herald.api(
            "POST",
            "/api/v1/notifications/email",
            {"to": to, "subject": "Hi", "body": "<p>x</p>", **topic},
            key=tenant.key,
        )
        herald.invoke_worker(EMAIL_QUEUE, herald.receive_records(EMAIL_QUEUE))
        state = herald.job_state(tenant.tenant_id, answer.data["jobId"])
        assert state is not None
        outcomes.append(state.error_message)
    assert outcomes[0] == "recipient unsubscribed from every topic"
    assert outcomes[1] != "recipient unsubscribed from every topic"
