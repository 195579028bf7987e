"""The real EmailWorker and WebhookWorker handlers, in this process, on real SQS records from moto
resources built from template.yaml, with each function's own template environment.

Providers are served by a provider sandbox started here; webhook host names resolve through a
stand-in resolver (this machine has no DNS), which lets a test change the answer between acceptance
and delivery as a rebinding attacker would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from herald.adapters.providers import transport
from herald.adapters.store.delivery_store import DynamoDeliveryStore
from herald.composition.common import foundation
from herald.domain.providers import FailureKind, ProviderFailure
from herald.domain.vendors import ProviderName
from herald.services import delivery
from herald_harness.dns import spy_on_connect
from herald_harness.in_moto import ApiAnswer, HeraldInMoto, LambdaContext, client, herald_in_moto
from herald_local.sandbox import SandboxServer

PUBLIC_ADDRESS = "93.184.215.14"
EMAIL_QUEUE = "EmailNormalQueueUrl"
WEBHOOK_QUEUE = "WebhookNormalQueueUrl"
# How long each of two concurrent invocations waits for the other to be ready.
BARRIER_TIMEOUT_SECONDS = 5.0


class StubDns:
    """``socket.getaddrinfo`` for test host names: each answers what the test set last; every other
    ``*.example.com`` name answers a public address; the rest goes to the real resolver."""

    def __init__(self) -> None:
        self._real = socket.getaddrinfo
        self.answers: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host in self.answers:
            self.lookups.append(host)
            return [
                info for address in self.answers[host] for info in self._real(address, port, *args, **kwargs)
            ]
        if isinstance(host, str) and host.endswith(".example.com"):
            return self._real(PUBLIC_ADDRESS, port, *args, **kwargs)
        return self._real(host, port, *args, **kwargs)


@dataclass
class Listener:
    """A real listening socket that counts the connections it accepts (and closes them at once)."""

    host: str
    accepted: int = 0
    port: int = field(init=False)
    _sock: socket.socket = field(init=False)
    _thread: threading.Thread = field(init=False)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.bind((self.host, 0))
        self._sock.listen()
        self._sock.settimeout(0.1)
        self.port = int(self._sock.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


@dataclass
class Rig:
    herald: HeraldInMoto
    sandbox: SandboxServer
    dns: StubDns
    # The function whose environment the process has now (switching rebuilds every AWS client).
    _current: str | None = None

    @property
    def environment(self) -> dict[str, str]:
        """What every function gets on top of its template environment: the sandbox as providers."""
        urls = self.sandbox.provider_settings()
        return {"HERALD_AWS_MAX_ATTEMPTS": "1", **urls}

    def forget_environment(self) -> None:
        self._current = None

    def _as_api(self) -> None:
        if self._current != "ApiFunction":
            self.herald.use_function_environment("ApiFunction", self.environment)
            self._current = "ApiFunction"

    def api(self, method: str, path: str, body: Any = None, *, key: str) -> ApiAnswer:
        self._as_api()
        return self.herald.api(method, path, body, key=key)

    def new_tenant(self, providers: Sequence[str] = ()) -> tuple[str, str]:
        """A startup-plan tenant (id, API key) with sandbox keys for ``providers``, in that order."""
        self._as_api()
        issued = self.herald.new_tenant("startup", providers=())
        for name in providers:
            body = {"apiKey": f"sandbox-{uuid.uuid4().hex}"}
            answer = self.api("PUT", f"/api/v1/account/providers/{name}", body, key=issued.api_key)
            assert answer.status == 201, answer.body
        return issued.tenant_id, issued.api_key

    def accept(self, key: str, route: str, body: dict[str, Any]) -> str:
        answer = self.api("POST", f"/api/v1/notifications/{route}", body, key=key)
        assert answer.status == 202, answer.body
        return str(answer.data["jobId"])

    def job(self, key: str, job_id: str) -> dict[str, Any]:
        answer = self.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key)
        assert answer.status == 200, answer.body
        document: dict[str, Any] = answer.data
        return document

    def deliver(
        self, output: str, records: list[dict[str, Any]], environment: dict[str, str] | None = None
    ) -> dict[str, Any]:
        self.forget_environment()  # the worker's, with ``environment`` on top
        return self.herald.invoke_worker(
            output, records, environment={**self.environment, **(environment or {})}
        )

    def worker_handler(self, logical_id: str) -> Any:
        """That worker's handler, with the process switched to its environment."""
        self.forget_environment()
        self.herald.use_function_environment(logical_id, self.environment)
        return partial(self.herald.invoke, logical_id)

    def queued_for(self, output: str, tenant_id: str) -> list[dict[str, Any]]:
        """The tenant's messages now visible in that queue. Another test's retry may surface here
        (a delayed message no drain sees until its delay ends): only this tenant's count."""
        records = self.herald.receive_records(output)
        return [record for record in records if json.loads(record["body"])["tenantId"] == tenant_id]

    def dead_letter_copies(self, job_id: str) -> list[dict[str, Any]]:
        bodies = [json.loads(message["Body"]) for message in self.herald.queued("DeadLetterQueueUrl")]
        return [body for body in bodies if body.get("jobId") == job_id]


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    """One moto stack and one sandbox for the module; every test uses tenants and addresses of its own."""
    dns = StubDns()
    with pytest.MonkeyPatch.context() as monkeypatch, SandboxServer() as sandbox:
        monkeypatch.setattr(socket, "getaddrinfo", dns.getaddrinfo)
        with herald_in_moto(monkeypatch) as herald:
            yield Rig(herald, sandbox, dns)


@pytest.fixture(autouse=True)
def _fresh_start(rig: Rig) -> None:
    """Empty queues, and each test's first call re-reads the environment (a test may have changed it)."""
    rig.herald.drain_queues()
    rig.forget_environment()


def one_record(rig: Rig, output: str) -> dict[str, Any]:
    records = rig.herald.receive_records(output)
    assert len(records) == 1
    return records[0]


def redelivered(rig: Rig, output: str, record: dict[str, Any]) -> dict[str, Any]:
    """The same message received again (as SQS does after a visibility timeout): new receipt handle."""
    client("sqs").change_message_visibility(
        QueueUrl=rig.herald.queue_url(output), ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
    )
    again = one_record(rig, output)
    assert again["messageId"] == record["messageId"]
    assert again["receiptHandle"] != record["receiptHandle"]
    return again


def email(to: str) -> dict[str, Any]:
    return {"to": to, "subject": "Your order", "body": "<p>Shipped.</p>"}


# ------------------------------------------------------------------ at most once out


def test_given_one_message_twice_in_a_batch_when_the_email_worker_runs_then_it_sends_once(rig: Rig) -> None:
    tenant_id, key = rig.new_tenant(["SENDGRID"])
    to = f"twice+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    record = one_record(rig, EMAIL_QUEUE)

    answer = rig.deliver(EMAIL_QUEUE, [record, record])

    assert answer == {"batchItemFailures": []}
    assert [message.summary.job_id for message in rig.sandbox.store.messages(to=to)] == [job_id]
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"], len(job["deliveryLogs"])) == ("completed", 1, 1)
    assert job["deliveryLogs"][0]["usedProvider"] == "SENDGRID"
    assert rig.queued_for(EMAIL_QUEUE, tenant_id) == []


def test_given_one_message_delivered_to_two_concurrent_invocations_then_it_sends_once(rig: Rig) -> None:
    _, key = rig.new_tenant(["SENDGRID"])
    to = f"race+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    first = one_record(rig, EMAIL_QUEUE)
    second = redelivered(rig, EMAIL_QUEUE, first)
    handler = rig.worker_handler("EmailWorkerFunction")
    start = threading.Barrier(2, timeout=BARRIER_TIMEOUT_SECONDS)
    answers: list[dict[str, Any]] = []

    def invoke(record: dict[str, Any]) -> None:
        start.wait()
        answers.append(handler({"Records": [record]}, LambdaContext("EmailWorkerFunction")))

    threads = [threading.Thread(target=invoke, args=(record,)) for record in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert answers == [{"batchItemFailures": []}] * 2
    assert len(rig.sandbox.store.messages(to=to)) == 1
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"], len(job["deliveryLogs"])) == ("completed", 1, 1)


def test_given_a_completed_job_when_its_message_comes_again_then_nothing_is_sent(rig: Rig) -> None:
    _, key = rig.new_tenant(["SENDGRID"])
    to = f"again+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    record = one_record(rig, EMAIL_QUEUE)
    again = redelivered(rig, EMAIL_QUEUE, record)
    assert rig.deliver(EMAIL_QUEUE, [record]) == {"batchItemFailures": []}

    assert rig.deliver(EMAIL_QUEUE, [again]) == {"batchItemFailures": []}

    assert len(rig.sandbox.store.attempts(to=to)) == 1
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("completed", 1)


@pytest.mark.parametrize(
    ("output", "route", "body"),
    [
        (EMAIL_QUEUE, "email", email("late@example.com")),
        (WEBHOOK_QUEUE, "webhook", {"url": "https://hooks.example.com/late", "payload": {"n": 1}}),
    ],
)
def test_given_no_time_left_for_a_record_then_the_worker_puts_it_back_at_once_untouched(
    rig: Rig, output: str, route: str, body: dict[str, Any]
) -> None:
    """Returned with visibility 0 by the worker itself (a call its policy must allow), not after the
    queue's visibility timeout."""
    _, key = rig.new_tenant(["SENDGRID"])
    job_id = rig.accept(key, route, body)
    record = one_record(rig, output)
    worker = rig.herald.event_source(output).function
    rig.forget_environment()

    answer = rig.herald.invoke_worker(
        output, [record], environment=rig.environment, context=LambdaContext(worker, remaining_ms=1_000)
    )

    assert answer == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    assert one_record(rig, output)["messageId"] == record["messageId"]  # visible again already
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("pending", 0)


# ------------------------------------------------------------------ email outcomes


def test_given_a_suppressed_recipient_then_the_job_fails_without_any_provider_attempt(rig: Rig) -> None:
    """Given Postmark reported the address inactive (a 422 with ErrorCode 406), which suppresses it,
    When a second email to it is delivered, Then it fails as suppressed and no provider is called."""
    _, key = rig.new_tenant(["POSTMARK"])
    to = f"fail-422-postmark+{uuid.uuid4().hex}@example.com"
    first = rig.accept(key, "email", email(to))
    rig.deliver(EMAIL_QUEUE, [one_record(rig, EMAIL_QUEUE)])
    assert rig.job(key, first)["status"] == "failed"
    suppressed = rig.api("GET", "/api/v1/account/suppressions", key=key).data
    assert [(item["email"], item["source"]) for item in suppressed] == [(to, "POSTMARK")]
    attempts_before = len(rig.sandbox.store.attempts(to=to))

    second = rig.accept(key, "email", email(to))
    answer = rig.deliver(EMAIL_QUEUE, [one_record(rig, EMAIL_QUEUE)])

    assert answer == {"batchItemFailures": []}
    job = rig.job(key, second)
    assert (job["status"], job["attempts"], job["errorMessage"]) == ("failed", 1, "recipient suppressed")
    assert job["deliveryLogs"][0]["providers"] == []
    assert len(rig.sandbox.store.attempts(to=to)) == attempts_before == 1
    # The tenant's own recipient: no dead-letter copy for an operator (the reason is in the job).
    assert rig.dead_letter_copies(second) == []


def test_the_batch_response_reports_exactly_the_records_that_failed(rig: Rig) -> None:
    """Given a batch of a healthy email and one whose every provider answers 500, When the retry of
    the second cannot be re-sent (its queue is unreachable), Then only that record is reported, its
    job stays claimed for the redelivery, and the first is delivered and deleted."""
    _, key = rig.new_tenant(["SENDGRID"])
    healthy = rig.accept(key, "email", email(f"ok+{uuid.uuid4().hex}@example.com"))
    failing = rig.accept(key, "email", email(f"fail-500+{uuid.uuid4().hex}@example.com"))
    records = rig.herald.receive_records(EMAIL_QUEUE)
    assert len(records) == 2
    by_job = {json.loads(record["body"])["jobId"]: record for record in records}
    unreachable = {"HERALD_QUEUE_EMAIL_NORMAL": rig.herald.queue_url(EMAIL_QUEUE) + "-missing"}
    visible, in_flight = _queue_depth(rig, EMAIL_QUEUE)

    answer = rig.deliver(EMAIL_QUEUE, records, unreachable)

    assert answer == {"batchItemFailures": [{"itemIdentifier": by_job[failing]["messageId"]}]}
    assert rig.job(key, healthy)["status"] == "completed"
    stuck = rig.job(key, failing)
    assert (stuck["status"], stuck["attempts"], stuck["deliveryLogs"]) == ("processing", 1, [])
    # The delivered record is deleted; the reported one stays in flight until its visibility timeout.
    assert _queue_depth(rig, EMAIL_QUEUE) == (visible, in_flight - 1)
    assert rig.dead_letter_copies(failing) == []


# ------------------------------------------------------------------ webhook SSRF at dial time


@pytest.mark.parametrize("private_address", ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1"])
def test_given_dns_rebinding_to_a_private_address_the_webhook_worker_never_dials_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, private_address: str
) -> None:
    """Given a webhook accepted while its host resolved to a public address, When the host resolves to
    a private one at delivery, Then the worker (template environment, no loopback allowance) refuses
    without opening a connection: the job fails as not allowed and its copy is in the DLQ."""
    _, key = rig.new_tenant()
    listener = Listener("::1" if ":" in private_address else "127.0.0.1")
    host = f"hooks-{uuid.uuid4().hex[:12]}.example.com"
    rig.dns.answers[host] = [PUBLIC_ADDRESS]
    try:
        job_id = rig.accept(
            key, "webhook", {"url": f"https://{host}:{listener.port}/in", "payload": {"event": "ping"}}
        )
        assert rig.dns.lookups.count(host) == 1  # checked at acceptance, against the public answer
        rig.dns.answers[host] = [private_address]
        record = one_record(rig, WEBHOOK_QUEUE)
        dialled = spy_on_connect(monkeypatch, unless_to=rig.herald.sns.bridge.url)

        answer = rig.deliver(WEBHOOK_QUEUE, [record])
        assert "HERALD_LOCAL_WEBHOOK_ORIGIN" not in os.environ
        assert foundation().settings.local_webhook_origin is None
    finally:
        listener.close()

    assert answer == {"batchItemFailures": []}
    assert rig.dns.lookups.count(host) == 2  # resolved again at delivery
    assert dialled == []
    assert listener.accepted == 0
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("failed", 1)
    assert "not allowed" in job["errorMessage"]
    [copy] = rig.dead_letter_copies(job_id)
    assert copy["attempts"] == 1
    assert "not allowed" in copy["error"]


def test_control_with_the_local_stacks_sandbox_origin_the_same_rebinding_is_dialled(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instruments of the test above see a dial when one happens: only the local stack's switch
    exception lets a loopback answer through, and only for its exact origin (the TLS handshake with
    the bare listener then fails)."""
    _, key = rig.new_tenant()
    listener = Listener("127.0.0.1")
    host = f"hooks-{uuid.uuid4().hex[:12]}.example.com"
    rig.dns.answers[host] = [PUBLIC_ADDRESS]
    try:
        job_id = rig.accept(
            key, "webhook", {"url": f"https://{host}:{listener.port}/in", "payload": {"event": "ping"}}
        )
        rig.dns.answers[host] = ["127.0.0.1"]
        record = one_record(rig, WEBHOOK_QUEUE)
        dialled = spy_on_connect(monkeypatch, unless_to=rig.herald.sns.bridge.url)
        # This test's monkeypatch removes the setting again; the template never sets it.
        monkeypatch.setenv("HERALD_LOCAL_WEBHOOK_ORIGIN", f"https://{host}:{listener.port}")
        rig.deliver(WEBHOOK_QUEUE, [record])
    finally:
        listener.close()

    assert dialled == [("127.0.0.1", listener.port)]
    assert listener.accepted == 1
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("pending", 1)  # a transient failure: retried later


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/in",
        "https://10.0.0.1/in",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/in",
        "https://[::ffff:169.254.169.254]/in",
    ],
)
def test_a_webhook_to_a_private_literal_address_is_refused_at_acceptance(rig: Rig, url: str) -> None:
    tenant_id, key = rig.new_tenant()

    answer = rig.api("POST", "/api/v1/notifications/webhook", {"url": url, "payload": {"a": 1}}, key=key)

    assert (answer.status, answer.body["code"]) == (400, "url_not_allowed")
    assert rig.queued_for(WEBHOOK_QUEUE, tenant_id) == []


def _queue_depth(rig: Rig, output: str) -> tuple[int, int]:
    """(visible, in flight) messages of that queue."""
    attributes = client("sqs").get_queue_attributes(
        QueueUrl=rig.herald.queue_url(output),
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


# ------------------------------------------------------------------ faults after the provider accepted


class WorkerKilled(BaseException):
    """Plays the worker process dying: nothing of Herald's catches it."""


def _die_before_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next outcome write never happens: the worker dies once the provider has the email."""

    def killed(*_: Any, **__: Any) -> bool:
        monkeypatch.setattr(DynamoDeliveryStore, "finish", real_finish)
        raise WorkerKilled

    real_finish = DynamoDeliveryStore.finish
    monkeypatch.setattr(DynamoDeliveryStore, "finish", killed)


@pytest.mark.parametrize(("provider", "sends"), [("RESEND", 1), ("SENDGRID", 2)])
def test_given_the_worker_dies_after_the_provider_accepted_then_only_a_provider_without_idempotency_sends_twice(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, provider: str, sends: int
) -> None:
    """Resend gets the job id as Idempotency-Key, so the attempt after the crash is answered with the
    first send; SendGrid has no such key: the known limit, documented in docs/security.md."""
    _, key = rig.new_tenant([provider])
    to = f"killed+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    record = one_record(rig, EMAIL_QUEUE)
    monkeypatch.setattr(delivery, "LEASE_SECONDS", 1)  # the crashed attempt's lease runs out quickly
    _die_before_recording(monkeypatch)

    with pytest.raises(WorkerKilled):
        rig.deliver(EMAIL_QUEUE, [record])
    time.sleep(2.1)  # the lease is stored in whole seconds: int(claimed) + 1 < int(now) needs 2 s
    answer = rig.deliver(EMAIL_QUEUE, [redelivered(rig, EMAIL_QUEUE, record)])

    assert answer == {"batchItemFailures": []}
    assert len(rig.sandbox.store.attempts(to=to)) == 2  # the provider was called twice...
    assert len(rig.sandbox.store.messages(to=to)) == sends  # ...and delivered once where it can tell
    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("completed", 2)


def test_given_a_provider_that_accepts_then_times_out_then_the_retry_does_not_send_twice(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read timeout hides a successful send; the next attempt repeats it under the same
    Idempotency-Key and Resend answers with the original."""
    _, key = rig.new_tenant(["RESEND"])
    to = f"late+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    record = one_record(rig, EMAIL_QUEUE)
    real_call = transport.call
    timed_out: list[str] = []

    def accepted_then_timed_out(*args: Any, **kwargs: Any) -> Any:
        answer = real_call(*args, **kwargs)
        if not timed_out:
            timed_out.append(answer.url)
            raise ProviderFailure(
                ProviderName.RESEND, FailureKind.TRANSIENT, "the provider did not answer in time"
            )
        return answer

    monkeypatch.setattr(transport, "call", accepted_then_timed_out)
    rig.deliver(EMAIL_QUEUE, [record], {"HERALD_RETRY_BASE_DELAY_SECONDS": "1"})
    retry = wait_for_record(rig, EMAIL_QUEUE)  # once its delay has passed
    rig.deliver(EMAIL_QUEUE, [retry], {"HERALD_RETRY_BASE_DELAY_SECONDS": "1"})

    job = rig.job(key, job_id)
    assert (job["status"], job["attempts"]) == ("completed", 2)
    assert job["deliveryLogs"][0]["errorMessage"] == "RESEND transient: the provider did not answer in time"
    assert len(rig.sandbox.store.attempts(to=to)) == 2
    assert len(rig.sandbox.store.messages(to=to)) == 1


def wait_for_record(rig: Rig, output: str, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = rig.herald.receive_records(output)
        if records:
            assert len(records) == 1
            return records[0]
        time.sleep(0.2)
    pytest.fail(f"no message on {output} within {timeout} s")


def test_given_kms_unavailable_then_the_attempt_retries_later_and_delivers_once_kms_is_back(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, key = rig.new_tenant(["SENDGRID"])  # a fresh tenant: its data key is in no cache yet
    to = f"kms+{uuid.uuid4().hex}@example.com"
    job_id = rig.accept(key, "email", email(to))
    real_call = BaseClient.__dict__["_make_api_call"]

    def kms_throttled(aws: BaseClient, operation: str, params: Any) -> Any:
        if aws.meta.service_model.service_name == "kms":
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation
            )
        return real_call(aws, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", kms_throttled)
    rig.deliver(EMAIL_QUEUE, [one_record(rig, EMAIL_QUEUE)], {"HERALD_RETRY_BASE_DELAY_SECONDS": "1"})
    monkeypatch.undo()
    waiting = rig.job(key, job_id)
    assert (waiting["status"], waiting["attempts"]) == ("pending", 1)
    assert "key unavailable" in waiting["errorMessage"]
    assert rig.sandbox.store.attempts(to=to) == []

    # Delivered once its delay has passed.
    rig.deliver(EMAIL_QUEUE, [wait_for_record(rig, EMAIL_QUEUE)], {"HERALD_RETRY_BASE_DELAY_SECONDS": "1"})

    assert rig.job(key, job_id)["status"] == "completed"
    assert len(rig.sandbox.store.messages(to=to)) == 1


def test_given_a_message_that_crashes_every_worker_then_sqs_redrives_it_to_the_dead_letter_queue(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A poison message: the worker fails it every time; after maxReceiveCount receives the queue's
    redrive policy (from the template) moves it to the dead-letter queue, where the alarm looks."""
    _, key = rig.new_tenant(["SENDGRID"])
    job_id = rig.accept(key, "email", email(f"poison+{uuid.uuid4().hex}@example.com"))
    monkeypatch.setattr(delivery.DeliveryEngine, "handle", _always_crash)
    receives = 0
    while records := rig.herald.receive_records(EMAIL_QUEUE):
        receives += 1
        answer = rig.deliver(EMAIL_QUEUE, records)
        assert answer == {"batchItemFailures": [{"itemIdentifier": records[0]["messageId"]}]}
        client("sqs").change_message_visibility(
            QueueUrl=rig.herald.queue_url(EMAIL_QUEUE),
            ReceiptHandle=records[0]["receiptHandle"],
            VisibilityTimeout=0,
        )

    assert receives == 5  # the template's maxReceiveCount
    [raw] = [json.loads(message["Body"]) for message in rig.herald.queued("DeadLetterQueueUrl")]
    assert raw["jobId"] == job_id


def _always_crash(*_: Any) -> Any:
    raise RuntimeError("this message crashes the worker")


def test_the_day_counts_follow_the_jobs_status_changes_through_the_tables_stream(rig: Rig) -> None:
    """Given a worker batch that completes two emails and fails one (its last attempt), the counts
    move only once TallyFunction reads the table's stream: one counter write for the tenant-day;
    a retry of the failed job takes it back out of the failed count."""
    _, key = rig.new_tenant(["SENDGRID"])
    rig.herald.tally()  # what other tests left on the stream
    for n in range(2):
        rig.accept(key, "email", email(f"ok-{n}-{uuid.uuid4().hex}@example.com"))
    failing = rig.accept(key, "email", email(f"fail-500+{uuid.uuid4().hex}@example.com"))
    records = rig.herald.receive_records(EMAIL_QUEUE)
    assert rig.deliver(EMAIL_QUEUE, records, {"HERALD_MAX_ATTEMPTS": "1"}) == {"batchItemFailures": []}

    def counts() -> tuple[int, int, int]:
        totals = rig.api("GET", "/api/v1/account/activity?days=7", key=key).data["totals"]
        failed = rig.api("GET", "/api/v1/notifications/jobs?status=failed", key=key).data["pagination"]
        return totals["completed"], totals["failed"], failed["total"]

    assert counts() == (0, 0, 0)  # not tallied yet
    (answer,) = rig.herald.tally()
    # Each job's claim and outcome: six changes, one tenant-day, one write.
    assert answer == {"changes": 6, "writes": 1}
    assert counts() == (2, 1, 1)
    assert rig.herald.tally() == []  # nothing new: nothing counted twice

    assert rig.api("POST", f"/api/v1/notifications/jobs/{failing}/retry", key=key).status == 201
    (answer,) = rig.herald.tally()
    assert answer == {"changes": 1, "writes": 1}
    assert counts() == (2, 0, 0)


# ------------------------------------------------------------------ attachments

INVOICE = b"%PDF-1.7\n" + bytes(range(256)) * 8


def test_given_an_attachment_it_is_stored_under_kms_and_the_fallback_sends_the_same_file(rig: Rig) -> None:
    """Given a tenant whose first provider fails (a 500 from SendGrid), When an email with a PDF is
    accepted and delivered, Then the PDF sits in the bucket once, encrypted with the stack's key,
    the job lists it, and Resend receives the very file SendGrid was offered."""
    tenant_id, key = rig.new_tenant(["SENDGRID", "RESEND"])
    to = f"fail-500-sendgrid+{uuid.uuid4().hex}@example.com"
    attachment = {
        "filename": "invoice.pdf",
        "contentType": "application/pdf",
        "content": base64.b64encode(INVOICE).decode(),
    }
    job_id = rig.accept(key, "email", {**email(to), "attachments": [attachment]})

    digest = hashlib.sha256(INVOICE).hexdigest()
    bucket, object_key = os.environ["HERALD_ATTACHMENTS_BUCKET"], f"attachments/365d/{tenant_id}/{digest}"
    stored = client("s3").get_object(Bucket=bucket, Key=object_key)
    assert stored["Body"].read() == INVOICE
    assert stored["ServerSideEncryption"] == "aws:kms"
    assert stored["SSEKMSKeyId"].endswith(os.environ["HERALD_KMS_KEY_ID"].rsplit("/", 1)[-1])
    assert rig.job(key, job_id)["attachments"] == [
        {"filename": "invoice.pdf", "contentType": "application/pdf", "size": len(INVOICE)}
    ]

    rig.deliver(EMAIL_QUEUE, [one_record(rig, EMAIL_QUEUE)])

    job = rig.job(key, job_id)
    assert (job["status"], job["deliveryLogs"][-1]["usedProvider"]) == ("completed", "RESEND")
    offered = [attempt.provider for attempt in rig.sandbox.store.attempts(to=to)]
    assert offered == ["sendgrid", "resend"]
    (message,) = rig.sandbox.store.messages(to=to)
    assert [(item.filename, item.content_type, item.content) for item in message.summary.attachments] == [
        ("invoice.pdf", "application/pdf", INVOICE)
    ]


def test_an_attachment_of_a_refused_type_is_a_400_naming_it(rig: Rig) -> None:
    _, key = rig.new_tenant(["SENDGRID"])
    script = {"filename": "setup.exe", "contentType": "application/x-msdownload", "content": "TVqQAA=="}
    answer = rig.api(
        "POST", "/api/v1/notifications/email", {**email("a@example.com"), "attachments": [script]}, key=key
    )
    assert answer.status == 400
    assert answer.body["error"] == (
        "Invalid request: attachments.0.contentType: content type application/x-msdownload is not allowed."
    )
