"""Secret hygiene: the full account flow with sentinel secrets, then a search for every sentinel
everywhere a secret could leak to: the responses, every line the stack and its functions printed,
the raw table, every SQS message ever sent (the DLQ included), and what the providers' sandbox saw.

A secret may appear in exactly one place outside the vault: the response that creates it."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.e2e.clients import table_items
from tests.e2e.conftest import wait_for
from tests.support.stored_items import table_text

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

TIMEOUT = 15
CLI_TIMEOUT = 60
POLL_SECONDS = 90.0  # generous: on two busy cores the last log lines may trail the answers
TERMINAL = {"completed", "failed"}
# One per answer the flow records: the API's, and the inbound webhook function's, whichever of
# their environments answered ("ApiFunction#2" once a burst scaled it up; the console cuts labels
# to 22 characters).
API_REPORT_LINE = re.compile(
    r"^(?:ApiFunction(?:#\d+)?|PostmarkWebhookFunct\w*)\s+\| REPORT RequestId: ", re.MULTILINE
)
# The sandbox stores credential headers under these names, with the value redacted.
CREDENTIAL_HEADER = {
    "SENDGRID": "authorization",
    "RESEND": "authorization",
    "POSTMARK": "x-postmark-server-token",
}
REDACTED = "[redacted]"


@dataclass
class Recorded:
    """One answer of Herald's API, as text: what a client (or a proxy's log) would see."""

    label: str
    text: str


@dataclass
class Sentinels:
    """Every secret of the flow, by name; ``created_by`` names the one response allowed to show it."""

    values: dict[str, str] = field(default_factory=dict)
    created_by: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, value: str, created_by: str | None = None) -> str:
        self.values[name] = value
        if created_by is not None:
            self.created_by[name] = created_by
        return value

    def found_in(self, text: str) -> list[str]:
        return sorted(name for name, value in self.values.items() if value in text)


class RecordingClient:
    """The tenant's client: every answer is recorded with its headers, under a label."""

    def __init__(self, stack: RunningStack, api_key: str) -> None:
        self.base = stack.api_root
        self.api_key = api_key
        self.answers: list[Recorded] = []

    def call(self, label: str, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        response = requests.request(
            method, f"{self.base}{path}", json=body, headers={"X-API-Key": self.api_key}, timeout=TIMEOUT
        )
        self.answers.append(Recorded(label, json.dumps(dict(response.headers)) + "\n" + response.text))
        assert response.status_code == expect, f"{label}: {response.text}"
        return response.json().get("data")


def _create_tenant(stack: RunningStack) -> tuple[str, str]:
    return stack.create_tenant(name="Hygiene")


def _wait_for(probe: Callable[[], Any], what: str) -> Any:
    return wait_for(probe, what, timeout=POLL_SECONDS, interval=0.25)


def _api_reports(stack: RunningStack) -> int:
    return len(API_REPORT_LINE.findall(stack.log_file.read_text(errors="replace")))


@dataclass
class Flow:
    """What the account flow left behind: its answers, its jobs and where the webhooks went."""

    client: RecordingClient
    emails: dict[str, str]  # job id -> the provider asked for (or FAILING)
    webhooks: list[str]
    hook_names: list[str]

    @property
    def job_ids(self) -> list[str]:
        return [*self.emails, *self.webhooks]


def _store_providers(client: RecordingClient, secrets: Sentinels, run: str) -> None:
    for provider in ("SENDGRID", "RESEND"):
        key = secrets.add(f"{provider} key", f"sandbox-SENTINEL-{provider}-{run}")
        client.call(f"PUT {provider}", "PUT", f"/account/providers/{provider}", {"apiKey": key}, 201)
    postmark = {
        "apiKey": secrets.add("POSTMARK key", f"sandbox-SENTINEL-POSTMARK-{run}"),
        "accountToken": secrets.add("Postmark account token", f"sandbox-SENTINEL-TOKEN-{run}"),
        "webhookSecret": secrets.add("Postmark inbound secret", f"SENTINEL-INBOUND-{run}"),
    }
    stored = client.call("PUT POSTMARK", "PUT", "/account/providers/POSTMARK", postmark, 201)
    assert (stored["hasAccountToken"], stored["hasWebhookSecret"]) == (True, True)
    assert len(client.call("list providers", "GET", "/account/providers")) == 3
    client.call("move POSTMARK first", "PATCH", "/account/providers/POSTMARK", {"priority": 1})


def _post_inbound_webhooks(
    stack: RunningStack, client: RecordingClient, tenant_id: str, password: str
) -> None:
    """Postmark posting an event with the tenant's Basic auth password, and someone guessing one."""
    body = json.dumps(
        {"RecordType": "Delivery", "Recipient": "reader@example.com", "MessageID": "m-1"}
    ).encode()
    for label, secret, status in (
        ("inbound webhook", password, 200),
        ("inbound, wrong password", "x" * 24, 401),
    ):
        credentials = base64.b64encode(f"postmark:{secret}".encode()).decode()
        response = requests.post(
            f"{stack.api_root}/webhooks/postmark/{tenant_id}",
            data=body,
            headers={"Authorization": f"Basic {credentials}", "Content-Type": "application/json"},
            timeout=TIMEOUT,
        )
        client.answers.append(Recorded(label, json.dumps(dict(response.headers)) + "\n" + response.text))
        assert response.status_code == status, f"{label}: {response.text}"


def _add_domain(client: RecordingClient, run: str) -> str:
    domain = f"mail-{run}.example.com"
    client.call("add domain", "POST", "/account/domains", {"domain": domain}, 201)
    verified = client.call("verify domain", "POST", f"/account/domains/{domain}/verify")
    assert verified["verified"] is True
    return domain


def _send_emails(client: RecordingClient, domain: str, run: str) -> dict[str, str]:
    """One email through each provider (so each key is decrypted and used) and one that fails for
    good, so a dead-letter copy exists."""
    jobs: dict[str, str] = {}
    for provider in ("POSTMARK", "SENDGRID", "RESEND"):
        email = {
            "to": f"reader-{provider.lower()}-{run}@example.com",
            "subject": "Hygiene",
            "body": "<p>hello</p>",
            "from": f"news@{domain}",
            "provider": provider,
        }
        jobs[client.call(f"email via {provider}", "POST", "/notifications/email", email, 202)["jobId"]] = (
            provider
        )
    # Every provider refuses the key: no usable provider, an operator's case with a dead-letter copy.
    failing = {"to": f"fail-401+{run}@example.com", "subject": "Hygiene", "body": "<p>no</p>"}
    jobs[client.call("failing email", "POST", "/notifications/email", failing, 202)["jobId"]] = "FAILING"
    return jobs


def _send_webhook(client: RecordingClient, stack: RunningStack, label: str) -> tuple[str, str]:
    name = f"hygiene-{uuid.uuid4().hex}"
    webhook = {"url": f"{stack.sandbox_url}/hooks/{name}", "payload": {"event": label}}
    return client.call(label, "POST", "/notifications/webhook", webhook, 202)["jobId"], name


def _wait_until_settled(client: RecordingClient, job_ids: Iterable[str]) -> None:
    for job_id in job_ids:

        def settled(job_id: str = job_id) -> bool:
            job = client.call(f"job {job_id}", "GET", f"/notifications/jobs/{job_id}")
            return job["status"] in TERMINAL

        _wait_for(settled, f"job {job_id} settling")


def run_account_flow(stack: RunningStack, secrets: Sentinels) -> Flow:
    run = uuid.uuid4().hex
    tenant_id, first_key = _create_tenant(stack)
    secrets.add("API key from the CLI", first_key)
    client = RecordingClient(stack, first_key)

    _store_providers(client, secrets, run)
    _post_inbound_webhooks(stack, client, tenant_id, secrets.values["Postmark inbound secret"])
    domain = _add_domain(client, run)
    created = client.call("create signing secret", "POST", "/account/webhook-secret", expect=201)
    secrets.add("signing secret", created["secret"], created_by="create signing secret")
    emails = _send_emails(client, domain, run)
    before_rotation, first_hook = _send_webhook(client, stack, "webhook before rotation")
    client.call("list jobs", "GET", "/notifications/jobs")

    rotated = client.call("rotate signing secret", "POST", "/account/webhook-secret/rotate")
    secrets.add("rotated signing secret", rotated["secret"], created_by="rotate signing secret")
    after_rotation, second_hook = _send_webhook(client, stack, "webhook after rotation")
    new_key = client.call("rotate API key", "POST", "/account/api-key/rotate", {"graceSeconds": 60})["apiKey"]
    secrets.add("rotated API key", new_key, created_by="rotate API key")
    client.api_key = new_key
    named = client.call(
        "create a named key", "POST", "/account/keys", {"name": "CI", "scopes": ["send"]}, expect=201
    )
    secrets.add("named key", named["key"], created_by="create a named key")
    renamed = client.call(
        "rotate the named key", "POST", f"/account/keys/{named['id']}/rotate", {"graceSeconds": 60}
    )
    secrets.add("rotated named key", renamed["key"], created_by="rotate the named key")
    client.call("list keys", "GET", "/account/keys")
    client.call("revoke the named key", "DELETE", f"/account/keys/{named['id']}")
    client.call("audit log", "GET", "/account/audit")

    client.call("account", "GET", "/account")
    client.call("signing secret status", "GET", "/account/webhook-secret")
    client.call("list providers again", "GET", "/account/providers")
    client.call("list domains", "GET", "/account/domains")
    webhooks = [before_rotation, after_rotation]
    _wait_until_settled(client, [*emails, *webhooks])
    client.call("list jobs again", "GET", "/notifications/jobs")
    return Flow(client, emails, webhooks, [first_hook, second_hook])


# ---------------------------------------------------------------- where to look


def _settled_log(stack: RunningStack, flow: Flow, reports_before: int) -> str:
    """The log once every function has printed its part of the flow: a REPORT line per API request
    and a 'job handled' line per job."""

    def complete() -> str | None:
        text = stack.log_file.read_text(errors="replace")
        api_done = len(API_REPORT_LINE.findall(text)) >= reports_before + len(flow.client.answers)
        return text if api_done and all(job_id in text for job_id in flow.job_ids) else None

    log: str = _wait_for(complete, "the functions' log lines for the flow")
    return log


def _every_sqs_message(stack: RunningStack) -> list[dict[str, Any]]:
    """Every message sent to any queue since the stack started, consumed or not: moto keeps each
    message object it ever created and lists them in its state view."""
    state = requests.get(f"{stack.moto_url}/moto-api/data.json", timeout=TIMEOUT).json()
    messages: list[dict[str, Any]] = state["sqs"]["Message"]
    return messages


def _take_dead_letter_copies(stack: RunningStack, job_id: str) -> list[dict[str, Any]]:
    """The DLQ's copies of one job, taken off the queue; every other message is made visible again at
    once, so the queue is left as the flow found it."""
    sqs = stack.boto3_client("sqs")
    url = stack.outputs["DeadLetterQueueUrl"]
    seen: list[dict[str, Any]] = []
    while batch := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        seen.extend(batch)
    mine = [message for message in seen if job_id in message["Body"]]
    for message in seen:
        if message in mine:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        else:
            sqs.change_message_visibility(
                QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
            )
    return mine


def _sandbox_view(stack: RunningStack, view: str, **params: str) -> list[dict[str, Any]]:
    answer = requests.get(f"{stack.sandbox_url}/_sandbox/{view}", params=params, timeout=TIMEOUT)
    answer.raise_for_status()
    return list(answer.json())


# ---------------------------------------------------------------- the test


def test_no_secret_of_the_account_flow_leaks_anywhere(local_stack: RunningStack) -> None:
    """Given sentinel provider keys, account token and inbound secret, and the signing secrets and API
    key Herald issues, When the whole account flow runs (keys stored, listed and reordered, a domain
    registered and verified, mail through every provider, a mail that dead-letters, signed webhooks
    around a secret rotation, an API key rotation), Then no sentinel appears in any response except
    its creating one, in the log of any function, in the table, in any SQS message, or in what the
    provider sandbox recorded, where the credential headers arrived redacted."""
    secrets = Sentinels()
    reports_before = _api_reports(local_stack)

    flow = run_account_flow(local_stack, secrets)
    failed = next(job_id for job_id, provider in flow.emails.items() if provider == "FAILING")
    dead = _wait_for(
        lambda: _take_dead_letter_copies(local_stack, failed), "the failed job's dead-letter copy"
    )

    for answer in flow.client.answers:
        leaked = [
            name for name in secrets.found_in(answer.text) if secrets.created_by.get(name) != answer.label
        ]
        assert not leaked, f"{leaked} in the answer to {answer.label}"
    for name, label in secrets.created_by.items():
        assert [a.label for a in flow.client.answers if secrets.values[name] in a.text] == [label]

    log = _settled_log(local_stack, flow, reports_before)
    assert not secrets.found_in(log), "a secret in the stack's log"

    items = table_items(local_stack)
    assert not secrets.found_in(table_text(items)), "a secret in the table"

    messages = _every_sqs_message(local_stack)
    bodies = json.dumps(messages)
    assert all(job_id in bodies for job_id in flow.job_ids), "the flow's queue messages are not all in view"
    assert not secrets.found_in(bodies), "a secret in an SQS message"
    assert not secrets.found_in(json.dumps(dead)), "a secret in the dead-letter copy"

    for job_id, provider in flow.emails.items():
        if provider == "FAILING":
            continue
        delivered = _sandbox_view(local_stack, "messages", jobId=job_id)
        assert [message["provider"] for message in delivered] == [provider.lower()]
        headers = {name.lower(): value for name, value in delivered[0]["headers"].items()}
        assert headers[CREDENTIAL_HEADER[provider]] == REDACTED
    sandbox = [_sandbox_view(local_stack, view) for view in ("messages", "attempts", "hooks")]
    assert not secrets.found_in(json.dumps(sandbox)), "a secret in what the sandbox recorded"
    hooks = [hook for name in flow.hook_names for hook in _sandbox_view(local_stack, "hooks", name=name)]
    assert len(hooks) == 2
    assert all("webhook-signature" in {name.lower() for name in hook["headers"]} for hook in hooks)
