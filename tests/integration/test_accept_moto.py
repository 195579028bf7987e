"""The accept path of the real ApiFunction against moto resources built from template.yaml."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.client import BaseClient

from bench.rig import table_schemas
from bench.samples import ORDER_EMAIL_HTML, ORDER_EVENT
from bench.table_meter import TableMeter
from herald.adapters.store import conversions
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.account import TenantProfile
from herald.domain.audit import AuditAction
from herald.domain.clock import iso
from herald.domain.notifications import NotificationRequest
from herald.domain.plans import current_period
from herald_harness.dns import resolve_publicly
from herald_harness.in_moto import REGION, HeraldInMoto, client, harness_entry, herald_in_moto
from herald_local.aws.sdk_calls import observing
from herald_local.awslambda.functions import runner_environment
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root
from tests.support.stored_items import readable
from tests.unit.test_api_cold_start import probe_cold_start

EMAIL = {"to": "user@example.com", "subject": "Hello", "body": "<p>Hi</p>"}
WEBHOOK = {"url": "https://hooks.example.com/in", "payload": {"event": "order.paid"}}


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    """One stack for the module (creating it takes seconds); every test uses tenants of its own."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield from _stack(monkeypatch)


def _stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    resolve_publicly(monkeypatch)  # no DNS here: the webhook hosts of these tests resolve publicly
    with herald_in_moto(monkeypatch) as stack:
        yield stack


@pytest.fixture(autouse=True)
def _empty_queues(herald: HeraldInMoto) -> None:
    herald.drain_queues()


def _bodies(messages: list[dict[str, Any]]) -> list[str]:
    return [message["Body"] for message in messages]


def test_the_job_row_is_pending_before_its_message_is_sent(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    seen_at_send: list[str | None] = []
    sqs = herald.sqs()
    original = sqs.send_message

    def observing_send(**kwargs: Any) -> Any:
        body = json.loads(kwargs["MessageBody"])
        state = herald.job_state(body["tenantId"], body["jobId"])
        seen_at_send.append(state.status if state else None)
        return original(**kwargs)

    monkeypatch.setattr(sqs, "send_message", observing_send)
    answer = herald.api("POST", "/api/v1/notifications/email", EMAIL, key=key)
    assert answer.status == 202
    assert seen_at_send == ["pending"]


def test_an_accept_encodes_its_request_once_for_its_fingerprint_job_item_and_message(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    encoded: list[NotificationRequest] = []
    encode = conversions._document

    def counted(request: NotificationRequest) -> dict[str, Any]:
        encoded.append(request)
        return encode(request)

    monkeypatch.setattr(conversions, "_document", counted)

    answer = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "idempotencyKey": "once"}, key=key)

    assert answer.status == 202
    assert len(encoded) == 1
    (message,) = herald.queued("EmailNormalQueueUrl")
    assert json.loads(message["Body"])["payload"] == {**EMAIL, "idempotencyKey": "once"}


@pytest.mark.parametrize(
    ("route", "body", "output"),
    [
        ("email", {**EMAIL, "priority": 1}, "EmailCriticalQueueUrl"),
        ("email", EMAIL, "EmailNormalQueueUrl"),
        ("email", {**EMAIL, "priority": 10}, "EmailLowQueueUrl"),
        ("webhook", {**WEBHOOK, "priority": 1}, "WebhookCriticalQueueUrl"),
        ("webhook", WEBHOOK, "WebhookNormalQueueUrl"),
    ],
)
def test_each_priority_lands_in_its_channels_queue_grouped_by_tenant(
    herald: HeraldInMoto, route: str, body: dict[str, Any], output: str
) -> None:
    key = herald.new_key()
    answer = herald.api("POST", f"/api/v1/notifications/{route}", body, key=key)
    assert answer.status == 202
    messages = herald.queued(output)
    assert len(messages) == 1
    assert answer.data["jobId"] in messages[0]["Body"]
    job = herald.api("GET", f"/api/v1/notifications/jobs/{answer.data['jobId']}", key=key).data
    assert messages[0]["Attributes"]["MessageGroupId"]
    assert job["status"] == "pending"
    assert job["payload"] == ({**body, "method": "POST"} if route == "webhook" else body)


def test_the_free_plan_always_goes_to_the_low_queue(herald: HeraldInMoto) -> None:
    key = herald.new_key("free")
    answer = herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "priority": 1}, key=key)
    assert answer.status == 202
    assert len(herald.queued("EmailLowQueueUrl")) == 1
    assert herald.queued("EmailCriticalQueueUrl") == []


def test_twenty_concurrent_identical_requests_create_exactly_one_job(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    body = {**EMAIL, "idempotencyKey": "order-42"}
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(
            pool.map(lambda _: herald.api("POST", "/api/v1/notifications/email", body, key=key), range(20))
        )
    statuses = Counter(answer.status for answer in answers)
    assert statuses == {202: 1, 409: 19}
    job_id = next(answer.data["jobId"] for answer in answers if answer.status == 202)
    assert {answer.body["jobId"] for answer in answers if answer.status == 409} == {job_id}
    assert all(answer.body["code"] == "duplicate_request" for answer in answers if answer.status == 409)
    listing = herald.api("GET", "/api/v1/notifications/jobs", key=key).data
    assert listing["pagination"]["total"] == 1
    assert len(herald.queued("EmailNormalQueueUrl")) == 1
    usage = herald.api("GET", "/api/v1/account", key=key).data["usage"]
    assert usage["emails"] == 1


def test_the_same_key_with_another_body_is_422(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    assert (
        herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "idempotencyKey": "k"}, key=key).status
        == 202
    )
    other = herald.api(
        "POST", "/api/v1/notifications/email", {**EMAIL, "subject": "x", "idempotencyKey": "k"}, key=key
    )
    assert (other.status, other.body["code"]) == (422, "idempotency_key_reused")


def test_an_enqueue_failure_fails_the_job_with_503_and_retry_requeues_it(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    real_url = herald.queue_url("EmailNormalQueueUrl")
    herald.use_function_environment("ApiFunction", {"HERALD_QUEUE_EMAIL_NORMAL": real_url + "-missing"})
    refused = herald.api("POST", "/api/v1/notifications/email", EMAIL, key=key)
    assert (refused.status, refused.body["code"]) == (503, "queue_unavailable")
    job_id = refused.body["jobId"]
    failed = herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key).data
    assert failed["status"] == "failed"
    assert "queued" in failed["errorMessage"]
    assert failed["payload"] == EMAIL

    herald.use_function_environment("ApiFunction", {"HERALD_QUEUE_EMAIL_NORMAL": real_url})
    retried = herald.api("POST", f"/api/v1/notifications/jobs/{job_id}/retry", key=key)
    assert retried.status == 201
    assert retried.data == {
        "jobId": job_id,
        "status": "pending",
        "message": "Job has been re-queued for processing",
    }
    assert job_id in herald.queued("EmailNormalQueueUrl")[0]["Body"]
    assert herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key).data["status"] == "pending"
    again = herald.api("POST", f"/api/v1/notifications/jobs/{job_id}/retry", key=key)
    assert (again.status, again.body["code"]) == (404, "job_not_retryable")


def test_another_tenants_job_is_404_never_403(herald: HeraldInMoto) -> None:
    owner, intruder = herald.new_key(), herald.new_key()
    job_id = herald.api("POST", "/api/v1/notifications/email", EMAIL, key=owner).data["jobId"]
    for method, path in (
        ("GET", f"/api/v1/notifications/jobs/{job_id}"),
        ("POST", f"/api/v1/notifications/jobs/{job_id}/retry"),
    ):
        answer = herald.api(method, path, key=intruder)
        assert answer.status == 404
    assert herald.api("GET", "/api/v1/notifications/jobs", key=intruder).data["pagination"]["total"] == 0


def test_listing_is_newest_first_with_filters_paging_and_a_cursor(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    ids = [
        herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "subject": f"n{i}"}, key=key).data[
            "jobId"
        ]
        for i in range(5)
    ]
    herald.api("POST", "/api/v1/notifications/webhook", WEBHOOK, key=key)
    emails = herald.api("GET", "/api/v1/notifications/jobs?type=email&limit=2&page=2", key=key).data
    assert emails["pagination"] == {
        "total": 5,
        "page": 2,
        "limit": 2,
        "totalPages": 3,
        "nextCursor": emails["pagination"]["nextCursor"],
    }
    assert [job["id"] for job in emails["data"]] == [ids[2], ids[1]]
    first = herald.api("GET", "/api/v1/notifications/jobs?type=email&limit=3", key=key).data
    cursor = first["pagination"]["nextCursor"]
    rest = herald.api("GET", f"/api/v1/notifications/jobs?type=email&limit=3&cursor={cursor}", key=key).data
    assert [job["id"] for job in first["data"] + rest["data"]] == ids[::-1]
    bad = herald.api("GET", "/api/v1/notifications/jobs?status=lost", key=key)
    assert (bad.status, bad.body["details"][0]["field"]) == (400, "status")


def _listing_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each DynamoDB Query of a job index page from now on (the day counters' read aside): its request
    and answer."""
    reads: list[tuple[dict[str, Any], dict[str, Any]]] = []
    real_call = BaseClient.__dict__["_make_api_call"]

    def recording(aws: BaseClient, operation: str, params: Any) -> Any:
        answer = real_call(aws, operation, params)
        if operation == "Query" and "IndexName" in params:
            reads.append((params, answer))
        return answer

    monkeypatch.setattr(BaseClient, "_make_api_call", recording)
    return reads


def test_a_listing_page_reads_only_the_entries_it_needs_not_a_whole_index_page(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    herald.api("POST", "/api/v1/notifications/webhook", WEBHOOK, key=key)
    emails = [
        herald.api("POST", "/api/v1/notifications/email", EMAIL, key=key).data["jobId"] for _ in range(12)
    ]
    reads = _listing_reads(monkeypatch)

    page = herald.api("GET", "/api/v1/notifications/jobs?limit=2&page=2", key=key).data

    assert [job["id"] for job in page["data"]] == [emails[-3], emails[-4]]
    assert page["pagination"]["total"] == 13
    assert [(request["Limit"], answer["ScannedCount"]) for request, answer in reads] == [(4, 4)]

    reads.clear()
    oldest = herald.api("GET", "/api/v1/notifications/jobs?type=webhook&limit=1", key=key).data
    assert [job["type"] for job in oldest["data"]] == ["webhook"]
    # The filter drops emails, so the read goes on past the page's size, in one request.
    assert [(request["Limit"], answer["ScannedCount"], answer["Count"]) for request, answer in reads] == [
        (100, 13, 1)
    ]


def test_bad_inputs_get_their_documented_errors(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    cases = [
        (herald.api("POST", "/api/v1/notifications/email", EMAIL), 401, "missing_api_key"),
        (herald.api("POST", "/api/v1/notifications/email", EMAIL, key="hk_short"), 401, "malformed_api_key"),
        (
            herald.api("POST", "/api/v1/notifications/email", EMAIL, key="hk_" + "a" * 64),
            401,
            "invalid_api_key",
        ),
        (herald.api("POST", "/api/v1/notifications/email", b"{not json", key=key), 400, "invalid_json"),
        (
            herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "bcc": "x"}, key=key),
            400,
            "validation_error",
        ),
        (
            herald.api("POST", "/api/v1/notifications/email", {**EMAIL, "body": "x" * 700_000}, key=key),
            413,
            "payload_too_large",
        ),
        (
            herald.api(
                "POST",
                "/api/v1/notifications/webhook",
                {**WEBHOOK, "url": "https://169.254.169.254/"},
                key=key,
            ),
            400,
            "url_not_allowed",
        ),
        (herald.api("GET", "/api/v1/notifications/jobs/nope", key=key), 404, "job_not_found"),
        (herald.api("GET", "/api/v1/nothing-here", key=key), 404, "not_found"),
    ]
    for answer, status, code in cases:
        assert (answer.status, answer.body["code"]) == (status, code), answer.body
        assert answer.body["success"] is False
        assert answer.body["timestamp"].endswith("Z")


def test_the_free_plans_rate_limit_answers_429_with_retry_after(herald: HeraldInMoto) -> None:
    key = herald.new_key("free")
    statuses = [herald.api("POST", "/api/v1/notifications/webhook", WEBHOOK, key=key) for _ in range(6)]
    assert [answer.status for answer in statuses[:5]] == [202] * 5
    limited = statuses[5]
    assert (limited.status, limited.body["code"]) == (429, "rate_limit_exceeded")
    assert 1 <= limited.body["retryAfter"] <= 60
    assert limited.headers["Retry-After"] == str(limited.body["retryAfter"])


def test_health_checks_the_table_and_every_queue(herald: HeraldInMoto) -> None:
    answer = herald.api("GET", "/api/v1/health")
    assert answer.status == 200
    assert answer.data == {"status": "ok", "checks": {"table": "ok", "queues": "ok"}}


# ---------------------------------------------------------------- billing periods and limits


def _set_usage(herald: HeraldInMoto, tenant_id: str, period: str, total: int) -> None:
    """The tenant's counter item of ``period`` as a month of traffic would have left it."""
    client("dynamodb").put_item(
        TableName=herald.topology.outputs["TableName"],
        Item={
            "pk": {"S": f"USAGE#{tenant_id}"},
            "sk": {"S": f"PERIOD#{period}"},
            "kind": {"S": "usage"},
            "total": {"N": str(total)},
            "webhooks": {"N": str(total)},
            "emails": {"N": "0"},
        },
    )


def test_an_exhausted_quota_is_403_naming_usage_limit_and_reset(herald: HeraldInMoto) -> None:
    issued = herald.new_tenant("free")
    period = current_period(
        datetime.fromisoformat(_profile(herald, issued.tenant_id).period_anchor.replace("Z", "+00:00")),
        datetime.now(UTC),
    )
    _set_usage(herald, issued.tenant_id, period.key, 100)

    answer = herald.api("POST", "/api/v1/notifications/webhook", WEBHOOK, key=issued.api_key)

    assert (answer.status, answer.body["code"]) == (403, "quota_exceeded")
    assert (answer.body["usage"], answer.body["limit"]) == (100, 100)
    assert answer.body["resetsAt"] == iso(period.end)
    assert (
        answer.body["error"]
        == f"The monthly quota of your plan is used up (100 of 100); it resets at {iso(period.end)}."
    )


def test_a_tenant_whose_period_ended_is_accepted_again_before_any_schedule_runs(herald: HeraldInMoto) -> None:
    """The previous period's count is exhausted; the period rolled over seconds ago (its anchor);
    the accept path counts in the new period at once."""
    issued = herald.new_tenant("free")
    anchor = datetime.now(UTC) - timedelta(seconds=5)
    DynamoTenantStore(herald.table).update_profile(
        issued.tenant_id,
        harness_entry(issued.tenant_id, AuditAction.TENANT_CHANGED, issued.tenant_id),
        period_anchor=iso(anchor),
    )
    previous = current_period(anchor, anchor - timedelta(seconds=1))
    _set_usage(herald, issued.tenant_id, previous.key, 100)

    answer = herald.api("POST", "/api/v1/notifications/webhook", WEBHOOK, key=issued.api_key)

    assert answer.status == 202, answer.body
    overview = herald.api("GET", "/api/v1/account", key=issued.api_key).data
    assert overview["usage"] == {"emails": 0, "webhooks": 1, "total": 1}
    assert overview["periodStart"] == iso(anchor)


def test_the_quota_reset_function_run_twice_gives_the_same_state(herald: HeraldInMoto) -> None:
    lapsing, free = herald.new_tenant("startup"), herald.new_tenant("free")
    DynamoTenantStore(herald.table).update_profile(
        lapsing.tenant_id,
        harness_entry(lapsing.tenant_id, AuditAction.TENANT_CHANGED, lapsing.tenant_id),
        paid_until=iso(datetime.now(UTC) - timedelta(days=8)),
    )

    first = herald.invoke_function("QuotaResetFunction", {"source": "aws.scheduler", "detail": {}})
    profiles = {t: _profile(herald, t) for t in (lapsing.tenant_id, free.tenant_id)}
    second = herald.invoke_function("QuotaResetFunction", {"source": "aws.scheduler", "detail": {}})

    assert first["outcomes"].get("lapsed") == 1
    assert "lapsed" not in second["outcomes"]
    assert "advanced" not in second["outcomes"]
    # Neither tenant is due again before its new period ends.
    assert not {lapsing.tenant_id, free.tenant_id} & {
        profile.tenant_id for profile in DynamoTenantStore(herald.table).due_for_reset(datetime.now(UTC))
    }
    assert {t: _profile(herald, t) for t in profiles} == profiles
    assert profiles[lapsing.tenant_id].plan == "free"
    assert profiles[free.tenant_id].period_end is not None


def _profile(herald: HeraldInMoto, tenant_id: str) -> TenantProfile:
    herald.use_function_environment("ApiFunction", {"HERALD_AWS_MAX_ATTEMPTS": "1"})
    return DynamoTenantStore(herald.table).profile(tenant_id)


def test_a_webhooks_headers_rest_sealed_and_the_tenant_sees_its_credentials_masked(
    herald: HeraldInMoto,
) -> None:
    """The values of custom headers (a receiver's credentials, often) are in clear nowhere Herald
    keeps them: not in the job's item, not in its queue message; the job document masks credentials
    and shows the other values."""
    herald.drain_queues()
    key = herald.new_key()
    token = "Bearer receiver-token-5f1e"
    headers = {"Authorization": token, "X-Api-Key": "receiver-api-key-77", "X-Tenant-Ref": "acme-7"}
    job_id = herald.api(
        "POST", "/api/v1/notifications/webhook", {**WEBHOOK, "headers": headers}, key=key
    ).data["jobId"]

    stored = readable(client("dynamodb").scan(TableName=herald.table.address.name)["Items"])
    assert any(job_id in json.dumps(item) for item in stored)
    # The deflated request is read as text: the values are sealed, not merely compressed.
    assert any("X-Api-Key" in json.dumps(item) for item in stored)
    assert not any(
        secret in json.dumps(item) for item in stored for secret in (token, "receiver-api-key-77", "acme-7")
    )
    [message] = herald.queued("WebhookNormalQueueUrl")
    assert "receiver-token" not in message["Body"]
    assert json.loads(message["Body"])["payload"]["headerNames"] == [
        "Authorization",
        "X-Api-Key",
        "X-Tenant-Ref",
    ]

    shown = herald.api("GET", f"/api/v1/notifications/jobs/{job_id}", key=key).data["payload"]["headers"]
    assert shown == {"Authorization": "[masked]", "X-Api-Key": "[masked]", "X-Tenant-Ref": "acme-7"}


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("email", {"to": "marta@example.org", "subject": "Your order", "body": ORDER_EMAIL_HTML}),
        ("webhook", {"url": "https://hooks.example.com/in", "payload": ORDER_EVENT}),
        ("webhook", {"url": "https://hooks.example.com/in", "payload": ORDER_EVENT, "idempotencyKey": "o-1"}),
    ],
)
def test_a_1_kb_request_is_accepted_with_four_write_units(
    herald: HeraldInMoto, route: str, body: dict[str, Any]
) -> None:
    """The usage counter, the job item (its request deflated to well under 1 KB), its listing entry
    and its search entry (by recipient or host): one unit each."""
    key = herald.new_key()
    # The tenant's first request of an hour also moves its counter's entry in the active-tenants
    # index (once an hour); the steady state is measured.
    first = {name: value for name, value in body.items() if name != "idempotencyKey"}
    assert herald.api("POST", f"/api/v1/notifications/{route}", first, key=key).status == 202
    meter = TableMeter(table_schemas(load_template(project_root() / "template.yaml")), client("dynamodb"))
    with observing(meter):
        assert herald.api("POST", f"/api/v1/notifications/{route}", body, key=key).status == 202
    charged = {write.item: (write.charge.table_units, write.charge.index_units) for write in meter.writes}
    assert charged == {"USAGE#* PERIOD#*": (1, 0), "JOB#*#* JOB": (1, 2)}


def test_building_the_api_services_loads_none_of_what_only_some_requests_need(herald: HeraldInMoto) -> None:
    """The send path's services, with the function's environment from the template (no AWS call)."""
    unused = "http://127.0.0.1:9"
    environment = runner_environment(herald.topology.functions["ApiFunction"], unused, REGION, unused)

    probed = probe_cold_start(environment, "services")

    assert probed["at_import"] == []
    assert (probed["status"], probed["allow"], probed["account_routes"]) == (405, "GET", True)
