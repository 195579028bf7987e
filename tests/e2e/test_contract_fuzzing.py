"""Contract fuzzing: schemathesis makes up requests for every operation of the OpenAPI document the
local stack serves, valid and hostile, alone and in sequences that follow the document's links
(stateful), and runs all of its checks on each answer: never a server error; always a status,
content type, headers and body the document states; invalid input refused and valid input accepted;
every method a path does not take answered 405 with an exact Allow; a deleted resource gone.

The one thing the document cannot state is a rule that needs more than the request: a webhook host
must resolve to public addresses, a provider key must be one the provider accepts. Valid-looking
input such a rule refuses is what schemathesis's positive_data_acceptance reports; each rule is
listed below with its reason (and in docs/security.md), and any other failure fails the test.

The fuzzer runs three times: with the keys it makes up itself (none, malformed or unknown), with the
key of a paid tenant that has sandbox provider keys (so authenticated answers are fuzzed too; its
emails are accepted and delivered, and half its webhooks and provider keys are the sandbox's, so
links lead on from accepted jobs and stored providers), and, for key rotation alone, with a tenant
of its own (a rotation ends the key that made it). The explicit examples then take every operation
through its success with the requests a client makes (free-plan and paid email, a webhook to the
sandbox, a retried job, an account's whole life), under the same checks.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from herald_harness.tenants import new_tenant
from herald_local.config import project_root
from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Made-up requests per operation in each generation phase (coverage, fuzzing), besides the
# document's own examples, and stateful sequences of up to STEPS calls: enough to reach every rule
# and follow most links, few enough for make test.
MAX_EXAMPLES = 10
STATEFUL_EXAMPLES = 20
STEPS = 10
OPERATIONS = 74
# One seed for every run: the same requests each time, so a failure found once is found again, and
# the stateful phase reaches as far on every run instead of most runs.
SEED = 20261203
ROTATE_KEY = "/api/v1/account/api-key/rotate"
# The routes that can end the key the fuzzer calls with (a named key's revocation and rotation):
# fuzzed with a tenant of their own, like the account key's rotation, so the paid tenant's run keeps
# its key to the end.
ENDING_KEYS = (ROTATE_KEY, "/api/v1/account/keys/{id}", "/api/v1/account/keys/{id}/rotate")
EVERY_PHASE = "examples,coverage,fuzzing,stateful"
HTTP_TIMEOUT = 20
FUZZ_TIMEOUT_SECONDS = 600
SECURITY_PAGE = project_root() / "docs" / "security.md"


@dataclass(frozen=True)
class BusinessRule:
    """Requests the document allows that a rule of Herald's refuses: on these operations, with this
    status and code (and, where the code says too little, an error sentence matching ``sentence``)."""

    operations: tuple[str, ...]
    status: int
    code: str
    reason: str
    sentence: str = ".*"

    def covers(self, failure: Failure) -> bool:
        return (
            failure.check == "positive_data_acceptance"
            and failure.operation in self.operations
            and (failure.status, failure.code) == (self.status, self.code)
            and re.fullmatch(self.sentence, failure.error) is not None
        )


SEND = ("POST /api/v1/notifications/email", "POST /api/v1/notifications/webhook")
EMAIL, WEBHOOK = SEND
PROVIDER = "PUT /api/v1/account/providers/{provider}"
RECOVER = "POST /api/v1/notifications/jobs/recover"
SEARCH = ("GET /api/v1/notifications/jobs", "GET /api/v1/notifications/jobs/export")
UNSUBSCRIBES = "GET /api/v1/account/unsubscribes"
AUDIT = "GET /api/v1/account/audit"
KEYS = "POST /api/v1/account/keys"
MEMBERS = ("POST /api/v1/account/members", "PATCH /api/v1/account/members/{id}")
TEMPLATE_WRITES = ("POST /api/v1/templates", "PUT /api/v1/templates/{id}")
PREVIEW = "POST /api/v1/templates/{id}/preview"
EVENT_TYPE_WRITES = ("POST /api/v1/event-types", "PATCH /api/v1/event-types/{name}")
EVENTS = "POST /api/v1/events"
SUBSCRIPTION_WRITES = ("POST /api/v1/subscriptions", "PATCH /api/v1/subscriptions/{id}")
SUBSCRIPTION_TEST = "POST /api/v1/subscriptions/{id}/test"
SUBSCRIPTION_RECOVER = "POST /api/v1/subscriptions/{id}/recover"
DELIVERIES = "GET /api/v1/subscriptions/{id}/deliveries"
BUSINESS_RULES = (
    BusinessRule(
        (*SEND, *SUBSCRIPTION_WRITES),
        400,
        "url_not_allowed",
        "the host must resolve to public addresses only, over https",
    ),
    BusinessRule(
        (EMAIL,), 400, "attachment_unavailable", "an attachment URL must give a file when Herald fetches it"
    ),
    BusinessRule(
        (EMAIL,),
        400,
        "attachment_too_large",
        "the attachments' total is capped by the smallest message of the tenant's providers: account data",
    ),
    BusinessRule(
        (EMAIL,),
        400,
        "validation_error",
        "an attachment's file name keeps a usable character once its path and control characters go",
        r"Invalid request: attachments\.\d+\.filename: file name .* holds no usable character\.",
    ),
    BusinessRule(
        (WEBHOOK, *SUBSCRIPTION_WRITES),
        400,
        "validation_error",
        "header names Herald sets or that concern the connection are refused in any letter case",
        r"Invalid request: headers: header '[^']*' is (set by Herald|hop-by-hop: .*)\.",
    ),
    BusinessRule(
        (EMAIL,),
        400,
        "validation_error",
        "addresses on special-use domains (RFC 6761: .test, .invalid, .localhost, …) receive no mail",
        r"Invalid request: ((to|from|replyTo): The part after the @-sign is a special-use or reserved"
        r" name that cannot be used with email(; )?)+\.",
    ),
    BusinessRule(
        (EMAIL,), 400, "from_not_allowed", "from must be on a verified sending domain of the tenant"
    ),
    BusinessRule(
        (EMAIL,), 400, "provider_not_configured", "provider and fallback must be providers the tenant stored"
    ),
    BusinessRule(
        (*SEND, EVENTS),
        400,
        "idempotency_key_mismatch",
        "the Idempotency-Key header and the field must be equal",
    ),
    BusinessRule((*SEND, EVENTS), 422, "idempotency_key_reused", "an idempotency key names one request body"),
    BusinessRule(
        SEND,
        400,
        "send_at_out_of_range",
        "sendAt lies between now and 30 days ahead: a window that moves with the time of the request",
    ),
    BusinessRule(
        (*SEND, EVENTS, *SUBSCRIPTION_WRITES),
        413,
        "payload_too_large",
        "limits in bytes of UTF-8 or compact JSON that JSON Schema cannot state (body, text, payload, headers)",
    ),
    BusinessRule(
        (*SEARCH, RECOVER, UNSUBSCRIBES, AUDIT, "GET /api/v1/events", DELIVERIES, SUBSCRIPTION_RECOVER),
        400,
        "invalid_cursor",
        "a cursor is opaque: only one Herald made reads",
    ),
    BusinessRule(
        SEARCH,
        400,
        "validation_error",
        "a job has a recipient or a URL host: a search names one of them, not both",
        r"Invalid request: host: give recipient or host, not both \(a job has one\)\.",
    ),
    BusinessRule(
        (*SEARCH, RECOVER, SUBSCRIPTION_RECOVER),
        400,
        "validation_error",
        "the window's since comes before its until (JSON Schema cannot compare two fields)",
        r"Invalid request: since: must be before until\.",
    ),
    BusinessRule(
        (*SEND, *SEARCH, RECOVER, SUBSCRIPTION_RECOVER),
        400,
        "validation_error",
        "format date-time allows a leap second, which no calendar of Herald's holds",
        r"Invalid request: (sendAt|since|until): must not be a leap second \(second 60\)\.",
    ),
    BusinessRule(
        (*SEARCH, RECOVER, SUBSCRIPTION_RECOVER),
        400,
        "validation_error",
        "a window's edge must be a time UTC can hold (0001-01-01T00:00:00+14:00 is not)",
        r"Invalid request: (since|until): lies outside the years 0001-9999 in UTC\.",
    ),
    BusinessRule(
        (EMAIL,),
        400,
        "validation_error",
        "a subject holds no invisible format character; the pattern names those beyond U+FFFF in no dialect",
        r"Invalid request: subject: must not contain invisible or bidirectional format characters \(U\+[0-9A-F]{5}\)\.",
    ),
    BusinessRule(
        (PROVIDER,), 400, "provider_key_invalid", "a provider key is checked live with the provider"
    ),
    BusinessRule(
        (PROVIDER,),
        400,
        "validation_error",
        "each provider's inbound secret has its own format (SendGrid: a public key; Resend: whsec_…)",
        r"Invalid request: webhookSecret: .*",
    ),
    BusinessRule(
        ("POST /api/v1/account/checkout",),
        409,
        "already_subscribed",
        "a checkout is for another plan than the account's, and only while it pays for none",
    ),
    BusinessRule(
        ("POST /api/v1/account/billing/portal",),
        409,
        "not_subscribed",
        "a customer portal exists only for a subscription the processor reported",
    ),
    BusinessRule(
        ("PATCH /api/v1/account/providers/{provider}",),
        400,
        "invalid_priority",
        "a priority goes up to the number of stored providers",
    ),
    BusinessRule(
        ("POST /api/v1/account/domains",),
        400,
        "provider_not_configured",
        "a domain is registered with the tenant's providers, so one must be stored first",
    ),
    BusinessRule(
        (KEYS,),
        400,
        "validation_error",
        "a key's expiry lies ahead and its domains are the account's sending domains: the clock and account data",
        r"expiresAt must be in the future\.|.* is not a sending domain of this account; add it first\.",
    ),
    BusinessRule(
        MEMBERS,
        403,
        "insufficient_scope",
        "only a person who is an owner makes owners: no API key can",
    ),
    BusinessRule(
        MEMBERS,
        409,
        "member_exists",
        "an address is invited once; the made-up address may be a member already",
    ),
    BusinessRule(
        EVENT_TYPE_WRITES,
        400,
        "event_type_invalid",
        "a schema is JSON Schema 2020-12 referring only inside itself, with RE2 patterns, within its bounds",
    ),
    BusinessRule(
        ("POST /api/v1/event-types",),
        400,
        "validation_error",
        "openapi.json is a name the catalog's own document takes",
        r"An event type's name is .* \('openapi\.json' is not one, it is reserved\)\.",
    ),
    BusinessRule(
        ("POST /api/v1/event-types",), 409, "event_type_exists", "a name is the account's once: account data"
    ),
    BusinessRule((EVENTS,), 404, "event_type_not_found", "an event names a type of the account's catalog"),
    BusinessRule(
        (EVENTS,), 409, "event_type_archived", "an archived type takes no new events: account state"
    ),
    BusinessRule(
        (EVENTS,), 400, "event_payload_invalid", "a payload meets the JSON Schema the account gave its type"
    ),
    BusinessRule(
        ("POST /api/v1/account/keys",),
        400,
        "validation_error",
        "a key's name is printable once trimmed: Unicode's categories, unassigned code points among them",
        r"A key's name is 1-100 printable characters\.",
    ),
    BusinessRule(TEMPLATE_WRITES, 400, "template_invalid", "a template part must be valid Liquid"),
    BusinessRule(
        (EMAIL, PREVIEW),
        400,
        "template_render_failed",
        "a template renders only with data holding its variables, within its limits",
    ),
    BusinessRule(
        (EMAIL,), 409, "template_not_published", "a send without a version uses the template's published one"
    ),
    BusinessRule(
        SUBSCRIPTION_WRITES,
        400,
        "validation_error",
        "a subscription's event types are the account's, not archived: account data",
        r"Invalid request: eventTypes: there is no event type .* \(or it is archived\); create it first\.",
    ),
    BusinessRule(
        (SUBSCRIPTION_TEST,),
        400,
        "validation_error",
        "a test's event type is one the subscription receives: the stored subscription",
        r"Invalid request: eventType: subscription \S+ does not receive .*\.",
    ),
    BusinessRule(
        (SUBSCRIPTION_TEST,),
        429,
        "rate_limit_exceeded",
        "tests of one subscription are 10 seconds apart: the time of the one before",
    ),
)


@dataclass(frozen=True)
class Failure:
    """One failed check of one answer, from schemathesis's event log."""

    check: str
    operation: str
    status: int | None
    code: str | None
    error: str


# Deletes that archive: the resource stays readable, and a PATCH brings it back (docs/api.md, "Event
# types"), where use_after_free expects 404 after any delete.
ARCHIVES = frozenset({"DELETE /api/v1/event-types/{name}"})


def explained(failure: Failure) -> bool:
    if failure.check == "use_after_free":
        return failure.operation in ARCHIVES
    return any(rule.covers(failure) for rule in BUSINESS_RULES)


def _answer(interaction: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    response = interaction.get("response") or {}
    content = base64.b64decode((response.get("content") or {}).get("$base64", ""))
    try:
        body = json.loads(content)
    except ValueError:
        body = {}
    return response.get("status_code"), body if isinstance(body, dict) else {}


def failures(events: Path) -> Iterator[Failure]:
    for line in events.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if finished is None:
            continue
        recorder = finished["recorder"]
        for case_id, checks in (recorder.get("checks") or {}).items():
            status, body = _answer(recorder.get("interactions", {}).get(case_id) or {})
            for check in checks:
                if check["status"] == "failure":
                    found = check["failure_info"]["failure"]
                    error = str(body.get("error") or found.get("message", ""))
                    yield Failure(check["name"], found["operation"], status, body.get("code"), error)


def followed_links(events: Path) -> set[str]:
    """The operations the stateful phase called by following a link and that answered 2xx."""
    reached: set[str] = set()
    for line in events.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if finished is None or finished["phase"] != "stateful":
            continue
        recorder = finished["recorder"]
        for case_id, case in (recorder.get("cases") or {}).items():
            status, _ = _answer(recorder.get("interactions", {}).get(case_id) or {})
            if case["is_transition_applied"] and status is not None and 200 <= status < 300:
                reached.add(f"{case['value']['method']} {case['value']['path']}")
    return reached


def _config(stack: RunningStack) -> str:
    """Half the webhook URLs are the sandbox's, and most provider names and keys are ones it takes,
    so jobs and providers exist for the links to lead on from; the rest are made up."""
    hooks = [f"{stack.sandbox_url}/hooks/fuzzed", f"{stack.sandbox_url}/hooks/fail-400-fuzzed"]
    return "\n".join(
        [
            "[phases.stateful]",
            f"max-steps = {STEPS}",
            "[phases.stateful.generation]",
            f"max-examples = {STATEFUL_EXAMPLES}",
            "[dictionaries.sandbox-hooks]",
            f"values = {json.dumps(hooks)}",
            "[dictionaries.sandbox-keys]",
            'values = ["sandbox-fuzzed-key-0001"]',
            "[dictionaries.providers]",
            'values = ["SENDGRID", "RESEND", "POSTMARK"]',
            "[parameters]",
            '"body.url" = { dictionary = "sandbox-hooks", probability = 0.5 }',
            '"body.apiKey" = { dictionary = "sandbox-keys", probability = 0.7 }',
            '"path.provider" = { dictionary = "providers", probability = 0.7 }',
        ]
    )


def paid_tenant(stack: RunningStack, name: str) -> str:
    """A startup-plan tenant with a sandbox key for each provider; its API key."""
    return new_tenant(stack, name=name).api_key


def fuzz(
    stack: RunningStack, folder: Path, name: str, *options: str, phases: str = EVERY_PHASE
) -> dict[str, Any]:
    """One schemathesis run (all checks) over the served document; its JSON report. Every failure it
    finds must be a business rule's."""
    config, report, events = folder / "schemathesis.toml", folder / f"{name}.json", folder / f"{name}.ndjson"
    config.write_text(_config(stack))
    finished = subprocess.run(
        [str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config), "run"]
        + [f"{stack.api_root}/openapi.json", "--url", stack.base_url, "--checks", "all"]
        + ["--max-examples", str(MAX_EXAMPLES), "--phases", phases, "--seed", str(SEED)]
        + ["--workers", "1", "--request-timeout", str(HTTP_TIMEOUT), "--report", "json,ndjson"]
        + ["--report-json-path", str(report), "--report-ndjson-path", str(events), *options],
        cwd=folder,  # schemathesis keeps a cache folder where it runs: not in the repository
        capture_output=True,
        text=True,
        timeout=FUZZ_TIMEOUT_SECONDS,
        check=False,
    )
    found = list(failures(events)) if events.exists() else []
    assert finished.returncode == (1 if found else 0), finished.stdout[-6000:] + finished.stderr[-2000:]
    result: dict[str, Any] = json.loads(report.read_text())
    assert result["errors"] == [], result["errors"]
    unexplained = [failure for failure in found if not explained(failure)]
    assert unexplained == [], unexplained
    refused = Counter((failure.operation, failure.code) for failure in found)
    print(f"schemathesis, {name}: {result['test_cases']}; refused by business rules: {dict(refused)}")
    return result


def test_made_up_requests_with_made_up_keys_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    result = fuzz(local_stack, tmp_path, "anonymous")
    assert result["operations"]["tested"] == OPERATIONS


def test_made_up_requests_of_a_paid_tenant_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    key = paid_tenant(local_stack, "Fuzzed")
    excluded = [option for path in ENDING_KEYS for option in ("--exclude-path", path)]
    result = fuzz(local_stack, tmp_path, "paid", "-H", f"X-API-Key: {key}", *excluded)
    assert result["operations"]["tested"] == OPERATIONS - len(ENDING_KEYS)
    # The tenant's made-up emails went through: accepted answers were checked too.
    assert result["valid_rates"]["POST /api/v1/notifications/email"]["fuzzing"]["accepted"] > 0
    # Sequences went on from what answers gave, to many resources. Which ones depends on the seed and
    # on how many operations the document has (with this seed the job's link is not among them; the
    # explicit examples below fetch and retry a sent job).
    reached = followed_links(tmp_path / "paid.ndjson")
    assert len(reached) >= 10, reached


def test_made_up_key_rotations_get_only_answers_the_document_states(
    local_stack: RunningStack, tmp_path: Path
) -> None:
    _, key = local_stack.create_tenant(plan="indie", name="Rotated")
    # Operations that end the key: no stateful phase (a sequence after its first step would run keyless).
    included = [option for path in ENDING_KEYS for option in ("--include-path", path)]
    options = ("-H", f"X-API-Key: {key}", *included)
    result = fuzz(local_stack, tmp_path, "rotation", *options, phases="examples,coverage,fuzzing")
    assert result["operations"]["tested"] == len(ENDING_KEYS)


def test_the_security_page_lists_every_business_rule_the_fuzzer_may_meet() -> None:
    """docs/security.md's "Contract fuzzing" table: one row per rule, with its code and status."""
    page = SECURITY_PAGE.read_text()
    section = page.split("## Contract fuzzing", 1)[1].split("\n## ", 1)[0]
    rows = {
        tuple(cell.strip() for cell in line.strip("|").split("|")[:3])
        for line in section.splitlines()
        if line.startswith("| `")
    }
    expected = {
        (", ".join(f"`{operation}`" for operation in rule.operations), str(rule.status), f"`{rule.code}`")
        for rule in BUSINESS_RULES
    }
    assert rows == expected


# ---------------------------------------------------------------- explicit examples


@pytest.fixture(scope="module")
def served_contract(local_stack: RunningStack) -> BaseSchema:
    """The document as a client fetches it; requests go to the SDK's baseUrl (its paths begin with
    /api/v1)."""
    schema = schemathesis.openapi.from_url(f"{local_stack.api_root}/openapi.json")
    schema.config.update(base_url=local_stack.base_url)
    return schema


@dataclass
class Client:
    """Requests built from the served document's operations, sent with one tenant's key and checked
    as the fuzzer's are."""

    schema: BaseSchema
    api_key: str

    def call(self, method: str, path: str, status: int, **case: Any) -> Any:
        operation = self.schema[path][method]
        response = operation.Case(**case).call_and_validate(
            checks=CHECKS, headers={"X-API-Key": self.api_key}, timeout=HTTP_TIMEOUT
        )
        assert response.status_code == status, response.text
        body = response.json()
        return body["data"] if body["success"] else body

    def download(self, path: str, **case: Any) -> str:
        """A GET whose success is a file (the export): its text, checked as the document states."""
        response = (
            self.schema[path]["GET"]
            .Case(**case)
            .call_and_validate(checks=CHECKS, headers={"X-API-Key": self.api_key}, timeout=HTTP_TIMEOUT)
        )
        assert response.status_code == 200, response.text
        return str(response.text)


def wait_until(check: Callable[[], Any], what: str) -> Any:
    return wait_for(check, what, timeout=60, interval=0.2)


def test_explicit_examples_accept_every_kind_of_notification_and_retry_a_failed_one(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a free tenant and a paid one with sandbox keys, When they send the notifications a client
    sends, Then each is accepted (202), followed, listed and, once failed, retried (201), every
    answer as the document states."""
    _, free_key = local_stack.create_tenant(plan="free", name="FreeContract")
    free = Client(served_contract, free_key)
    paid = Client(served_contract, paid_tenant(local_stack, "PaidContract"))
    email = {"to": "someone@example.com", "subject": "Contract", "body": "<p>Hi</p>"}
    sandbox = local_stack.sandbox_url

    free.call("POST", "/api/v1/notifications/email", 202, body=email)
    paid.call("POST", "/api/v1/notifications/email", 202, body={**email, "provider": "RESEND", "priority": 1})
    paid.call(
        "POST",
        "/api/v1/notifications/email",
        202,
        body=email,
        headers={"Idempotency-Key": f"contract-{uuid.uuid4().hex}"},
    )
    hook = {
        "url": f"{sandbox}/hooks/contract",
        "payload": {"event": "order.paid"},
        "headers": {"X-Trace": "1"},
    }
    accepted = paid.call("POST", "/api/v1/notifications/webhook", 202, body=hook)
    refused = paid.call(
        "POST", "/api/v1/notifications/webhook", 202, body={**hook, "url": f"{sandbox}/hooks/fail-400"}
    )

    job_id = accepted["jobId"]
    wait_until(
        lambda: (
            paid.call("GET", "/api/v1/notifications/jobs/{id}", 200, path_parameters={"id": job_id})["status"]
            == "completed"
        ),
        "the webhook to be delivered",
    )
    failed_id = refused["jobId"]
    wait_until(
        lambda: (
            paid.call("GET", "/api/v1/notifications/jobs/{id}", 200, path_parameters={"id": failed_id})[
                "status"
            ]
            == "failed"
        ),
        "the refused webhook to fail",
    )
    retried = paid.call(
        "POST", "/api/v1/notifications/jobs/{id}/retry", 201, path_parameters={"id": failed_id}
    )
    assert (retried["jobId"], retried["status"]) == (failed_id, "pending")

    page = paid.call("GET", "/api/v1/notifications/jobs", 200, query={"limit": 2, "type": "email"})
    assert [job["type"] for job in page["data"]] == ["email", "email"]
    assert (
        len(paid.call("GET", "/api/v1/notifications/jobs", 200, query={"status": "completed"})["data"]) >= 1
    )
    exported = paid.download("/api/v1/notifications/jobs/export", query={"format": "jsonl", "type": "email"})
    assert {json.loads(line)["type"] for line in exported.splitlines()} == {"email"}


def test_explicit_examples_take_an_account_through_every_account_operation(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a paid tenant, When it manages its key, providers, signing secret, domains and
    suppressions, Then every operation answers its documented success."""
    client = Client(served_contract, local_stack.create_tenant(plan="startup", name="AccountContract")[1])
    sendgrid = {"provider": "SENDGRID"}
    key = {"apiKey": f"sandbox-{uuid.uuid4().hex}"}

    assert client.call("GET", "/api/v1/account", 200)["plan"] == "startup"
    client.call("PUT", "/api/v1/account/providers/{provider}", 201, path_parameters=sendgrid, body=key)
    client.call("PUT", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid, body=key)
    client.call(
        "PUT", "/api/v1/account/providers/{provider}", 201, path_parameters={"provider": "RESEND"}, body=key
    )
    client.call(
        "PATCH", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid, body={"priority": 2}
    )
    assert [p["provider"] for p in client.call("GET", "/api/v1/account/providers", 200)] == [
        "RESEND",
        "SENDGRID",
    ]

    domain = {"domain": f"mail-{uuid.uuid4().hex[:8]}.example.com"}
    client.call("POST", "/api/v1/account/domains", 201, body=domain)
    client.call("POST", "/api/v1/account/domains/{domain}/verify", 200, path_parameters=domain)
    assert len(client.call("GET", "/api/v1/account/domains", 200)) == 1
    client.call("DELETE", "/api/v1/account/domains/{domain}", 200, path_parameters=domain)
    client.call("DELETE", "/api/v1/account/providers/{provider}", 200, path_parameters=sendgrid)

    client.call("POST", "/api/v1/account/webhook-secret", 201)
    client.call("POST", "/api/v1/account/webhook-secret/rotate", 200)
    assert client.call("GET", "/api/v1/account/webhook-secret", 200)["hasSecret"] is True
    client.call("DELETE", "/api/v1/account/webhook-secret", 200)

    assert client.call("GET", "/api/v1/account/suppressions", 200) == []
    client.call(
        "DELETE", "/api/v1/account/suppressions/{email}", 404, path_parameters={"email": "a@example.com"}
    )

    rotated = client.call("POST", ROTATE_KEY, 200, body={"graceSeconds": 60})
    assert rotated["previousKeyValidUntil"] is not None
    client.api_key = rotated["apiKey"]
    for path in ("/api/v1/ping", "/api/v1/info", "/api/v1/health", "/api/v1/providers"):
        client.call("GET", path, 200)


def test_explicit_examples_take_a_template_through_every_template_operation(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a paid tenant, When it writes, versions, previews, publishes, sends with and deletes a
    template, Then every operation answers its documented success."""
    client = Client(served_contract, paid_tenant(local_stack, "TemplateContract"))
    body = {"name": "Receipt", "subject": "Receipt {{ number }}", "html": "<p>{{ number }}</p>"}
    template_id = client.call("POST", "/api/v1/templates", 201, body=body)["id"]
    path = {"id": template_id}
    client.call(
        "PUT", "/api/v1/templates/{id}", 200, path_parameters=path, body={**body, "text": "{{ number }}"}
    )
    client.call("POST", "/api/v1/templates/{id}/publish", 200, path_parameters=path, body={"version": 1})
    preview = client.call(
        "POST", "/api/v1/templates/{id}/preview", 200, path_parameters=path, body={"data": {"number": "A-1"}}
    )
    assert (preview["version"], preview["subject"], preview["text"]) == (2, "Receipt A-1", "A-1")
    shown = client.call("GET", "/api/v1/templates/{id}", 200, path_parameters=path)
    assert (shown["version"], shown["publishedVersion"]) == (2, 1)
    assert [listed["id"] for listed in client.call("GET", "/api/v1/templates", 200)] == [template_id]
    send = {"to": "someone@example.com", "template": {"id": template_id, "data": {"number": "A-2"}}}
    client.call("POST", "/api/v1/notifications/email", 202, body=send)
    client.call("DELETE", "/api/v1/templates/{id}", 200, path_parameters=path)


def test_explicit_examples_take_an_event_type_through_every_event_type_operation(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a paid tenant, When it declares, versions, deprecates, archives and un-archives an
    event type and reads its catalog's document, Then every operation answers its documented success."""
    client = Client(served_contract, paid_tenant(local_stack, "EventTypeContract"))
    schema = {"type": "object", "properties": {"amount": {"type": "integer", "minimum": 0}}}
    body = {"name": "order.paid", "description": "An order was paid", "schema": schema}
    assert client.call("POST", "/api/v1/event-types", 201, body=body)["version"] == 1
    path = {"name": "order.paid"}
    changed = {"schema": {**schema, "required": ["amount"]}, "deprecated": True}
    assert (
        client.call("PATCH", "/api/v1/event-types/{name}", 200, path_parameters=path, body=changed)["version"]
        == 2
    )
    kept = client.call("GET", "/api/v1/event-types/{name}", 200, path_parameters=path, query={"version": 1})
    assert kept["schema"] == schema
    assert client.call("DELETE", "/api/v1/event-types/{name}", 200, path_parameters=path)["archived"] is True
    listed = client.call("GET", "/api/v1/event-types", 200, query={"includeArchived": True})
    assert [kind["name"] for kind in listed] == ["order.paid"]
    client.call("PATCH", "/api/v1/event-types/{name}", 200, path_parameters=path, body={"archived": False})
    document = client.download("/api/v1/event-types/openapi.json")
    assert list(json.loads(document)["webhooks"]) == ["order.paid"]


def test_explicit_examples_take_a_subscription_through_every_subscription_operation(
    local_stack: RunningStack, served_contract: BaseSchema
) -> None:
    """Given a paid tenant with an event type, When it registers, reads, changes, tests, disables,
    enables, rotates, reads the deliveries of, recovers and deletes a subscription, Then every
    operation answers its documented success."""
    client = Client(served_contract, paid_tenant(local_stack, "SubscriptionContract"))
    client.call("POST", "/api/v1/event-types", 201, body={"name": "order.paid"})
    body = {
        "url": f"{local_stack.sandbox_url}/hooks/contract-{uuid.uuid4().hex}",
        "eventTypes": ["order.paid"],
    }
    created = client.call("POST", "/api/v1/subscriptions", 201, body=body)
    path = {"id": created["id"]}
    assert [listed["id"] for listed in client.call("GET", "/api/v1/subscriptions", 200)] == [created["id"]]
    client.call("GET", "/api/v1/subscriptions/{id}", 200, path_parameters=path)
    client.call("PATCH", "/api/v1/subscriptions/{id}", 200, path_parameters=path, body={"description": "ERP"})
    assert client.call("POST", "/api/v1/subscriptions/{id}/test", 200, path_parameters=path, body={})["ok"]
    client.call("POST", "/api/v1/subscriptions/{id}/disable", 200, path_parameters=path)
    client.call("POST", "/api/v1/subscriptions/{id}/enable", 200, path_parameters=path)
    client.call("POST", "/api/v1/subscriptions/{id}/secret/rotate", 200, path_parameters=path)
    client.call("GET", "/api/v1/subscriptions/{id}/deliveries", 200, path_parameters=path)
    recover = {"since": "2026-01-01T00:00:00Z"}
    client.call("POST", "/api/v1/subscriptions/{id}/recover", 200, path_parameters=path, body=recover)
    client.call("DELETE", "/api/v1/subscriptions/{id}", 200, path_parameters=path)
