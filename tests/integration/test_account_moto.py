"""The account routes of the real ApiFunction against moto resources built from template.yaml, with
provider calls answered by a provider sandbox started here: tenant isolation of providers, domains
and suppressions, tampered ciphertext, a provider that cannot be reached during the key check, and
the KMS calls a warm process makes to open the same tenant's key again and again."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.store.suppression_store import DynamoSuppressions
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.composition.common import foundation, vault
from herald.domain.addresses import Suppression
from herald.domain.clock import now_iso
from herald.domain.providers import StoredProvider
from herald.domain.secrets import Purpose, SecretTampered
from herald.domain.vendors import TENANT_PROVIDERS, tenant_provider_names, vendor_of
from herald.services.tenant_directory import TenantDirectory
from herald_harness.in_moto import REGION, HeraldInMoto, client, herald_in_moto
from herald_harness.inbound_signers import PAYSTACK_PLAN_INDIE, POLAR_PRODUCT_INDIE, PRICES
from herald_local.event_sources.pollers import sqs_record
from herald_local.sandbox import SandboxServer
from tests.support.ports import refusing_port

EMAIL_QUEUE = "EmailNormalQueueUrl"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with SandboxServer() as server:
        yield server


def provider_urls(server: SandboxServer) -> dict[str, str]:
    return server.provider_settings()


@pytest.fixture(scope="module")
def herald(sandbox: SandboxServer) -> Iterator[HeraldInMoto]:
    """One moto stack for the module (building it takes seconds); every test uses tenants of its own."""
    with pytest.MonkeyPatch.context() as monkeypatch, herald_in_moto(monkeypatch) as stack:
        yield stack


@pytest.fixture(autouse=True)
def _api_talks_to_the_sandbox(herald: HeraldInMoto, sandbox: SandboxServer) -> None:
    herald.use_function_environment("ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1", **provider_urls(sandbox)})


def new_key(herald: HeraldInMoto, plan: str = "startup") -> str:
    """A tenant with no provider key yet (these tests store them through the API)."""
    return herald.new_tenant(plan, providers=()).api_key


def open_key(tenant_id: str, stored: StoredProvider) -> str:
    """The stored key opened as the worker opens it (the process vault and its data key cache)."""
    return vault().open(tenant_id, Purpose.PROVIDER_KEY, stored.api_key)


def sandbox_key(label: str) -> str:
    return f"sandbox-{label}-{uuid.uuid4().hex}"


def store_key(herald: HeraldInMoto, key: str, provider: str) -> str:
    secret = sandbox_key(provider.lower())
    answer = herald.api("PUT", f"/api/v1/account/providers/{provider}", {"apiKey": secret}, key=key)
    assert answer.status == 201, answer.body
    return secret


def table_keys(herald: HeraldInMoto, tenant_id: str) -> list[str]:
    items = client("dynamodb").query(
        TableName=herald.topology.outputs["TableName"],
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"TENANT#{tenant_id}"}},
    )["Items"]
    return sorted(item["sk"]["S"] for item in items)


def _deliver_waiting_emails(herald: HeraldInMoto) -> int:
    """Feeds the email queue's messages to the EmailWorker handler, batch by batch, in this process
    (one warm container), deleting what it reports done; returns how many messages it handled."""
    source = next(
        s for s in herald.topology.queue_sources if herald.queue_url(EMAIL_QUEUE).endswith(s.queue_name)
    )
    sqs, handled = client("sqs"), 0
    while received := sqs.receive_message(
        QueueUrl=herald.queue_url(EMAIL_QUEUE), MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    ).get("Messages", []):
        records = [sqs_record(message, source, REGION) for message in received]
        answer = herald.invoke(source.function, {"Records": records})
        assert not answer.get("batchItemFailures"), answer
        for message in received:
            sqs.delete_message(QueueUrl=herald.queue_url(EMAIL_QUEUE), ReceiptHandle=message["ReceiptHandle"])
        handled += len(received)
    return handled


# ---------------------------------------------------------------- isolation


def test_another_tenant_can_neither_see_nor_change_your_providers(herald: HeraldInMoto) -> None:
    """Given an owner with SendGrid and Resend keys, When an intruder lists, reorders, deletes and
    overwrites providers with its own key, Then it only ever sees and touches its own, and the
    owner's keys and order are unchanged."""
    owner, intruder = new_key(herald), new_key(herald)
    owner_sendgrid = store_key(herald, owner, "SENDGRID")
    owner_resend = store_key(herald, owner, "RESEND")

    assert herald.api("GET", "/api/v1/account/providers", key=intruder).data == []
    moved = herald.api("PATCH", "/api/v1/account/providers/RESEND", {"priority": 1}, key=intruder)
    assert (moved.status, moved.body["code"]) == (404, "provider_not_found")
    deleted = herald.api("DELETE", "/api/v1/account/providers/RESEND", key=intruder)
    assert (deleted.status, deleted.body["code"]) == (404, "provider_not_found")
    intruder_sendgrid = store_key(herald, intruder, "SENDGRID")

    owners = herald.api("GET", "/api/v1/account/providers", key=owner).data
    assert [(p["provider"], p["priority"], p["lastFour"]) for p in owners] == [
        ("SENDGRID", 1, owner_sendgrid[-4:]),
        ("RESEND", 2, owner_resend[-4:]),
    ]
    intruders = herald.api("GET", "/api/v1/account/providers", key=intruder).data
    assert [(p["provider"], p["lastFour"]) for p in intruders] == [("SENDGRID", intruder_sendgrid[-4:])]


def test_another_tenant_can_neither_see_nor_use_nor_change_your_domains(herald: HeraldInMoto) -> None:
    """Given an owner's verified domain, When an intruder (with a provider of its own) lists, verifies,
    deletes, registers or sends from it, Then each attempt fails and the domain stays the owner's."""
    owner, intruder = new_key(herald), new_key(herald)
    store_key(herald, owner, "SENDGRID")
    store_key(herald, intruder, "SENDGRID")
    domain = f"mail-{uuid.uuid4()}.example.com"
    assert herald.api("POST", "/api/v1/account/domains", {"domain": domain}, key=owner).status == 201
    assert herald.api("POST", f"/api/v1/account/domains/{domain}/verify", key=owner).data["verified"] is True

    assert herald.api("GET", "/api/v1/account/domains", key=intruder).data == []
    attempts = [
        (
            herald.api("POST", f"/api/v1/account/domains/{domain}/verify", key=intruder),
            404,
            "domain_not_found",
        ),
        (herald.api("DELETE", f"/api/v1/account/domains/{domain}", key=intruder), 404, "domain_not_found"),
        (
            herald.api("POST", "/api/v1/account/domains", {"domain": domain}, key=intruder),
            409,
            "domain_taken",
        ),
        (
            herald.api(
                "POST",
                "/api/v1/notifications/email",
                {"to": "a@example.com", "subject": "s", "body": "<p>x</p>", "from": f"ceo@{domain}"},
                key=intruder,
            ),
            400,
            "from_not_allowed",
        ),
    ]
    for answer, status, code in attempts:
        assert (answer.status, answer.body["code"]) == (status, code), answer.body

    owners = herald.api("GET", "/api/v1/account/domains", key=owner).data
    assert [(d["domain"], d["verified"]) for d in owners] == [(domain, True)]
    assert herald.api("GET", "/api/v1/account/domains", key=intruder).data == []


def test_a_domain_in_capitals_is_the_same_domain_in_lower_case(herald: HeraldInMoto) -> None:
    """DNS names compare without regard to case: Mail.Example.COM was refused; it is kept as
    mail.example.com, found again in any spelling, and another tenant cannot take it by its capitals."""
    owner, intruder = new_key(herald), new_key(herald)
    store_key(herald, owner, "SENDGRID")
    store_key(herald, intruder, "SENDGRID")
    name = f"mail-{uuid.uuid4().hex[:8]}.example.com"

    added = herald.api("POST", "/api/v1/account/domains", {"domain": name.upper()}, key=owner)
    verified = herald.api("POST", f"/api/v1/account/domains/{name.title()}/verify", key=owner)
    taken = herald.api("POST", "/api/v1/account/domains", {"domain": name.title()}, key=intruder)

    assert (added.status, added.data["domain"]) == (201, name), added.body
    assert (verified.status, verified.data["domain"]) == (200, name)
    assert (taken.status, taken.body["code"]) == (409, "domain_taken")
    sent = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": "a@example.com", "subject": "s", "body": "<p>x</p>", "from": f"ceo@{name.upper()}"},
        key=owner,
    )
    assert sent.status == 202, sent.body


def test_another_tenant_can_neither_see_nor_lift_your_suppressions(herald: HeraldInMoto) -> None:
    owner, intruder = new_key(herald), new_key(herald)
    address = f"bounced-{uuid.uuid4().hex[:8]}@example.com"
    DynamoSuppressions(herald.table).suppress(
        herald.tenant_of(owner), Suppression(address, "hard_bounce", now_iso(), "SENDGRID")
    )

    assert herald.api("GET", "/api/v1/account/suppressions", key=intruder).data == []
    lifted = herald.api("DELETE", f"/api/v1/account/suppressions/{address}", key=intruder)

    assert (lifted.status, lifted.body["code"]) == (404, "suppression_not_found")
    assert [s["email"] for s in herald.api("GET", "/api/v1/account/suppressions", key=owner).data] == [
        address
    ]


# ---------------------------------------------------------------- priorities


def test_priorities_stay_one_to_n_after_a_provider_is_removed_and_another_added(herald: HeraldInMoto) -> None:
    """Given SendGrid 1, Resend 2, Postmark 3, When SendGrid is removed and added again, Then the
    priorities are 1, 2, 3 with no two providers sharing one (a priority has one holder)."""
    key = new_key(herald)
    for provider in ("SENDGRID", "RESEND", "POSTMARK"):
        store_key(herald, key, provider)

    assert herald.api("DELETE", "/api/v1/account/providers/SENDGRID", key=key).status == 200
    store_key(herald, key, "SENDGRID")

    listed = herald.api("GET", "/api/v1/account/providers", key=key).data
    assert sorted(p["priority"] for p in listed) == [1, 2, 3], listed


# ---------------------------------------------------------------- tampering


def _flip_last_byte(encoded: str) -> str:
    # The last byte, not the first: moto's wrapped-key blob starts with the KMS key id in clear, and
    # altering that makes moto answer AccessDenied (no such key) instead of judging the ciphertext.
    raw = bytearray(base64.b64decode(encoded))
    raw[-1] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def _tamper(herald: HeraldInMoto, tenant_id: str, provider: str, field: str) -> None:
    """Flip one byte of one field of the stored apiKey map, as someone with write access to the
    table (not to KMS) could."""
    dynamodb = client("dynamodb")
    key = {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"PROVIDER#{provider}"}}
    table = herald.topology.outputs["TableName"]
    item = dynamodb.get_item(TableName=table, Key=key)["Item"]
    original = item["apiKey"]["M"][field]["S"]
    dynamodb.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET apiKey.#field = :value",
        ExpressionAttributeNames={"#field": field},
        ExpressionAttributeValues={":value": {"S": _flip_last_byte(original)}},
    )


def _stored(tenant_id: str, provider: str) -> StoredProvider:
    stored = DynamoTenantStore(foundation().table).load(tenant_id).provider(provider)
    assert stored is not None
    return stored


@pytest.mark.parametrize("field", ["ciphertext", "nonce", "wrappedKey"])
def test_a_tampered_sealed_key_fails_loudly_in_the_worker_instead_of_opening(
    herald: HeraldInMoto, sandbox: SandboxServer, field: str
) -> None:
    """Given a stored key that opens in the worker, When one byte of its sealed record is flipped in
    the table, Then opening it raises SecretTampered, both directly and through the worker's tenant
    directory, and no garbage key comes back."""
    key = new_key(herald)
    tenant_id = herald.tenant_of(key)
    plaintext = store_key(herald, key, "SENDGRID")
    herald.use_function_environment("EmailWorkerFunction", provider_urls(sandbox))
    assert open_key(tenant_id, _stored(tenant_id, "SENDGRID")) == plaintext

    _tamper(herald, tenant_id, "SENDGRID", field)

    with pytest.raises(SecretTampered):
        open_key(tenant_id, _stored(tenant_id, "SENDGRID"))
    with pytest.raises(SecretTampered):
        TenantDirectory(DynamoTenantStore(herald.table), vault()).credential(
            _stored(tenant_id, "SENDGRID"), tenant_id
        )


def test_a_worker_skips_a_tampered_key_and_delivers_through_the_next_provider(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    """Given SendGrid (first) and Resend keys, When SendGrid's sealed key is tampered with and an email
    is delivered, Then SendGrid is never called, the attempt records that its key cannot be
    decrypted, and Resend delivers."""
    herald.drain_queues()
    key = new_key(herald)
    store_key(herald, key, "SENDGRID")
    store_key(herald, key, "RESEND")
    _tamper(herald, herald.tenant_of(key), "SENDGRID", "ciphertext")
    email = {"to": f"reader-{uuid.uuid4().hex[:8]}@example.com", "subject": "s", "body": "<p>x</p>"}
    job_id = herald.api("POST", "/api/v1/notifications/email", email, key=key).data["jobId"]

    herald.use_function_environment("EmailWorkerFunction", provider_urls(sandbox))
    assert _deliver_waiting_emails(herald) == 1

    herald.use_function_environment("ApiFunction", provider_urls(sandbox))
    job = herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key).data
    assert (job["status"], job["deliveryLogs"][0]["usedProvider"]) == ("completed", "RESEND")
    skipped = job["deliveryLogs"][0]["providers"][0]
    assert skipped["provider"] == "SENDGRID"
    assert "cannot be decrypted" in skipped["error"]
    assert [m.provider for m in sandbox.store.messages(job_id=job_id)] == ["resend"]
    assert sandbox.store.attempts(job_id=job_id, provider="sendgrid") == []


# ---------------------------------------------------------------- provider unreachable


def test_a_provider_unreachable_during_the_key_check_is_502_and_nothing_is_stored(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    """Given SendGrid's API unreachable (its base URL a closed port), When a tenant stores a SendGrid
    key, Then the answer is 502 provider_unavailable and no credential is written."""
    key = new_key(herald)
    with refusing_port() as port:
        unreachable = {
            **provider_urls(sandbox),
            "HERALD_SENDGRID_BASE_URL": f"http://127.0.0.1:{port}/sendgrid",
        }
        herald.use_function_environment("ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1", **unreachable})

        answer = herald.api(
            "PUT", "/api/v1/account/providers/SENDGRID", {"apiKey": sandbox_key("sg")}, key=key
        )

    assert (answer.status, answer.body["code"]) == (502, "provider_unavailable")
    assert herald.api("GET", "/api/v1/account/providers", key=key).data == []
    # The profile, its first key and its owner: no provider item.
    assert [sk.split("#")[0] for sk in table_keys(herald, herald.tenant_of(key))] == [
        "KEY",
        "MEMBER",
        "PROFILE",
    ]


# ---------------------------------------------------------------- KMS calls


class KmsDecrypts:
    """Counts the Decrypt requests of the process's KMS client, the one the vault uses (a botocore
    event hook: the calls still go to moto)."""

    def __init__(self) -> None:
        self.calls = 0
        foundation().clients.kms().meta.events.register("before-call.kms.Decrypt", self._count)

    def _count(self, **_: Any) -> None:
        self.calls += 1


def test_a_warm_worker_opens_the_same_tenants_key_a_hundred_times_with_one_kms_decrypt(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    """Given a stored key and a fresh worker process (cold caches), When the worker opens that key 100
    times, Then KMS is asked to Decrypt exactly once (the data key cache serves the rest)."""
    key = new_key(herald)
    tenant_id = herald.tenant_of(key)
    plaintext = store_key(herald, key, "SENDGRID")
    herald.use_function_environment("EmailWorkerFunction", provider_urls(sandbox))
    stored = _stored(tenant_id, "SENDGRID")
    kms = KmsDecrypts()

    opened = {open_key(tenant_id, stored) for _ in range(100)}

    assert opened == {plaintext}
    assert kms.calls == 1


def test_a_warm_email_worker_delivers_twenty_emails_with_one_kms_decrypt(
    herald: HeraldInMoto, sandbox: SandboxServer
) -> None:
    """Given 20 accepted emails of one tenant, When one worker container delivers them all, Then every
    email reaches the sandbox and KMS is asked to Decrypt once in all (none per delivery once warm)."""
    herald.drain_queues()
    key = new_key(herald)
    store_key(herald, key, "SENDGRID")
    job_ids = [
        herald.api(
            "POST",
            "/api/v1/notifications/email",
            {"to": f"reader-{n}@example.com", "subject": f"n{n}", "body": "<p>x</p>"},
            key=key,
        ).data["jobId"]
        for n in range(20)
    ]
    herald.use_function_environment("EmailWorkerFunction", provider_urls(sandbox))
    kms = KmsDecrypts()

    assert _deliver_waiting_emails(herald) == 20

    assert kms.calls == 1
    delivered = {message.summary.job_id for message in sandbox.store.messages(provider="sendgrid")}
    assert set(job_ids) <= delivered


# ---------------------------------------------------------------- the providers a tenant can bring


def test_the_providers_route_lists_the_provider_tables_vendors_without_a_key(herald: HeraldInMoto) -> None:
    listed = herald.api("GET", "/api/v1/providers")

    assert listed.status == 200
    assert [entry["provider"] for entry in listed.data] == [name.value for name in TENANT_PROVIDERS]
    assert [entry["label"] for entry in listed.data] == [vendor_of(name).label for name in TENANT_PROVIDERS]


def test_an_unknown_provider_is_refused_with_the_tables_names(herald: HeraldInMoto) -> None:
    refused = herald.api(
        "PUT", "/api/v1/account/providers/SPARKPOST", {"apiKey": "sandbox-x"}, key=new_key(herald)
    )

    assert (refused.status, refused.body["code"]) == (404, "unknown_provider")
    assert refused.body["error"] == f"Unknown provider SPARKPOST; use {tenant_provider_names()}."


def test_the_plans_answer_carries_the_templates_prices_and_what_each_plan_is_for_the_account(
    herald: HeraldInMoto,
) -> None:
    key = new_key(herald, plan="indie")

    answer = herald.api("GET", "/api/v1/account/plans", key=key)

    assert answer.status == 200, answer.text
    plans = {entry["plan"]: entry for entry in answer.data}
    assert {plan: entry["change"] for plan, entry in plans.items()} == {
        "free": "downgrade",
        "indie": "current",
        "startup": "upgrade",
    }
    indie = plans["indie"]
    polar_price, paystack_price = PRICES[POLAR_PRODUCT_INDIE], PRICES[PAYSTACK_PLAN_INDIE]
    assert indie["prices"] == [
        {"processor": "polar", "amount": polar_price.amount, "currency": polar_price.currency},
        {"processor": "paystack", "amount": paystack_price.amount, "currency": paystack_price.currency},
    ]
    assert (indie["requestsPerMinute"], indie["monthlyWebhooks"], indie["monthlyEmails"]) == (50, 4000, None)
    assert (plans["free"]["monthlyQuota"], plans["free"]["prices"]) == (100, [])


def test_an_account_that_pays_for_nothing_has_no_customer_portal(herald: HeraldInMoto) -> None:
    answer = herald.api("POST", "/api/v1/account/billing/portal", key=new_key(herald, plan="free"))

    assert (answer.status, answer.body["code"]) == (409, "not_subscribed")
