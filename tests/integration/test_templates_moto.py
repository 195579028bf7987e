"""Email templates against moto, through the real API handler and the real table: create, new
versions, publish, preview and delete, each change with its audit entry in the same transaction;
a send that names a template is rendered at accept (its queued job carries the rendered mail and
the template's id and version) in the write units of the same mail sent without one; the scopes;
another tenant's template stays out of reach."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from bench.rig import table_schemas
from bench.table_meter import TableMeter
from herald.adapters.store.template_store import DynamoTemplateStore
from herald.domain.access import Actor, ActorKind
from herald.domain.audit import AuditAction, entry
from herald.domain.templates import TemplateContent, TemplateVersion
from herald.services.outcomes import TemplateChanged
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto
from herald_local.aws.sdk_calls import observing
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root

WELCOME = {
    "name": "Welcome",
    "subject": "Welcome, {{ name }}",
    "html": "<p>Hello {{ name }}, your plan is {{ plan | upcase }}.</p>",
    "text": "Hello {{ name }}",
}
DATA = {"name": "Ada <3", "plan": "indie"}


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def items(herald: HeraldInMoto, prefix: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    found = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return sorted((item for item in found if str(item["pk"]).startswith(prefix)), key=lambda item: item["sk"])


def audit(herald: HeraldInMoto, tenant_id: str) -> list[tuple[str, str, str]]:
    return [
        (item["action"], item["target"], item["details"].get("version", ""))
        for item in items(herald, f"AUDIT#{tenant_id}")
        if str(item["action"]).startswith("template.")
    ]


def created(herald: HeraldInMoto, key: str) -> str:
    answer = herald.api("POST", "/api/v1/templates", WELCOME, key=key)
    assert answer.status == 201, answer.text
    template_id: str = answer.data["id"]
    return template_id


def test_versions_publish_preview_and_delete_each_write_their_audit_entry(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    template_id = created(herald, key)

    edited = herald.api(
        "PUT",
        f"/api/v1/templates/{template_id}",
        {**WELCOME, "subject": "Hi {{ name }}", "name": None},
        key=key,
    )
    assert edited.status == 200, edited.text
    assert (edited.data["version"], edited.data["publishedVersion"], edited.data["name"]) == (
        2,
        None,
        "Welcome",
    )
    published = herald.api("POST", f"/api/v1/templates/{template_id}/publish", {"version": 1}, key=key)
    assert published.status == 200, published.text
    shown = herald.api("GET", f"/api/v1/templates/{template_id}", key=key).data
    assert (shown["draft"]["subject"], shown["published"]["subject"]) == (
        "Hi {{ name }}",
        "Welcome, {{ name }}",
    )
    assert [(v["version"], v["published"]) for v in shown["versions"]] == [(1, True), (2, False)]
    listed = herald.api("GET", "/api/v1/templates", key=key).data
    assert [(t["id"], t["version"], t["publishedVersion"]) for t in listed] == [(template_id, 2, 1)]

    preview = herald.api("POST", f"/api/v1/templates/{template_id}/preview", {"data": DATA}, key=key)
    assert preview.status == 200, preview.text
    assert preview.data == {
        "version": 2,
        "subject": "Hi Ada <3",
        "html": "<p>Hello Ada &lt;3, your plan is INDIE.</p>",
        "text": "Hello Ada <3",
    }

    assert herald.api("DELETE", f"/api/v1/templates/{template_id}", key=key).status == 200
    assert herald.api("GET", f"/api/v1/templates/{template_id}", key=key).status == 404
    assert items(herald, f"TEMPLATE#{tenant_id}#") == []
    # Entries of one millisecond sort by their random ids.
    assert sorted(audit(herald, tenant_id)) == [
        (AuditAction.TEMPLATE_CREATED.value, template_id, "1"),
        (AuditAction.TEMPLATE_DELETED.value, template_id, ""),
        (AuditAction.TEMPLATE_PUBLISHED.value, template_id, "1"),
        (AuditAction.TEMPLATE_UPDATED.value, template_id, "2"),
    ]


def test_a_change_decided_from_a_stale_head_writes_nothing_not_even_its_entry(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    tenant_id = herald.tenant_of(key)
    template_id = created(herald, key)
    store = DynamoTemplateStore(herald.table)
    detail = store.detail(tenant_id, template_id)
    assert detail is not None
    actor = Actor(ActorKind.OPERATOR, "ops", "operator ops")
    stale = TemplateVersion(2, TemplateContent("s", "h"), "2026-12-04T12:00:00.000Z", "ops")
    herald.api("PUT", f"/api/v1/templates/{template_id}", WELCOME, key=key)  # version 2 meanwhile
    before = audit(herald, tenant_id)

    late = entry(tenant_id, stale.created_at, actor, AuditAction.TEMPLATE_UPDATED, template_id, version="2")
    with pytest.raises(TemplateChanged):
        store.add_version(tenant_id, detail.template, stale, None, late)

    assert audit(herald, tenant_id) == before
    kept = herald.api("GET", f"/api/v1/templates/{template_id}", key=key).data
    assert kept["draft"]["subject"] == WELCOME["subject"]


def test_a_templated_send_is_rendered_at_accept_and_its_job_names_the_version(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    template_id = created(herald, key)
    send = {"to": "ada@example.com", "template": {"id": template_id, "data": DATA}}

    unpublished = herald.api("POST", "/api/v1/notifications/email", send, key=key)
    assert (unpublished.status, unpublished.body["code"]) == (409, "template_not_published")
    herald.api("POST", f"/api/v1/templates/{template_id}/publish", {}, key=key)
    accepted = herald.api("POST", "/api/v1/notifications/email", send, key=key)
    assert accepted.status == 202, accepted.text

    (message,) = herald.queued("EmailNormalQueueUrl")
    payload = json.loads(message["Body"])["payload"]
    assert payload == {
        "to": "ada@example.com",
        "subject": "Welcome, Ada <3",
        "body": "<p>Hello Ada &lt;3, your plan is INDIE.</p>",
        "text": "Hello Ada <3",
        "template": {"id": template_id, "version": 1},
    }
    job = herald.api("GET", f"/api/v1/notifications/jobs/{accepted.data['jobId']}", key=key).data
    assert job["template"] == {"id": template_id, "version": 1}
    assert job["payload"]["subject"] == "Welcome, Ada <3"


def test_a_send_missing_a_variable_or_mixing_content_is_refused_with_what_to_fix(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    template_id = created(herald, key)
    missing = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": "ada@example.com", "template": {"id": template_id, "version": 1, "data": {"name": "Ada"}}},
        key=key,
    )
    assert (missing.status, missing.body["code"]) == (400, "template_render_failed")
    assert missing.body["error"] == "The template's html, line 1: 'plan' is undefined."
    both = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": "ada@example.com", "subject": "Hi", "template": {"id": template_id}},
        key=key,
    )
    assert both.status == 400
    assert "send either a template or subject and body, not both" in both.body["error"]
    assert herald.queued("EmailNormalQueueUrl") == []


def test_a_templated_accept_writes_the_units_of_the_same_mail_sent_without_a_template(
    herald: HeraldInMoto,
) -> None:
    key = herald.new_key()
    template_id = created(herald, key)
    herald.api("POST", f"/api/v1/templates/{template_id}/publish", {}, key=key)
    rendered = herald.api("POST", f"/api/v1/templates/{template_id}/preview", {"data": DATA}, key=key).data
    plain = {
        "to": "ada@example.com",
        "subject": rendered["subject"],
        "body": rendered["html"],
        "text": rendered["text"],
    }
    templated = {"to": "ada@example.com", "template": {"id": template_id, "data": DATA}}
    schemas = table_schemas(load_template(project_root() / "template.yaml"))
    # The account's first send of the minute creates its counters and records the key's use: not
    # measured.
    assert herald.api("POST", "/api/v1/notifications/email", plain, key=key).status == 202
    units = {}
    for name, body in (("plain", plain), ("templated", templated)):
        meter = TableMeter(schemas, client("dynamodb"))
        with observing(meter):
            assert herald.api("POST", "/api/v1/notifications/email", body, key=key).status == 202
        units[name] = (sum(w.charge.total for w in meter.writes), [r.request for r in meter.reads])
    assert units["templated"][0] == units["plain"][0] <= 5, units
    # The template's one read: a GetItem of its published copy.
    assert units["templated"][1].count("GetItem") == units["plain"][1].count("GetItem") + 1


def test_scopes_and_tenants(herald: HeraldInMoto) -> None:
    key = herald.new_key()
    template_id = created(herald, key)
    scoped = {}
    for scope in ("send", "read"):
        answer = herald.api("POST", "/api/v1/account/keys", {"name": scope, "scopes": [scope]}, key=key)
        scoped[scope] = answer.data["key"]
    refused = herald.api("POST", "/api/v1/templates", WELCOME, key=scoped["read"])
    assert (refused.status, refused.body["requiredScope"]) == (403, "manage")
    assert (
        herald.api(
            "POST", f"/api/v1/templates/{template_id}/preview", {"data": DATA}, key=scoped["read"]
        ).status
        == 200
    )
    assert herald.api("GET", "/api/v1/templates", key=scoped["send"]).status == 403

    stranger = herald.new_key()
    assert herald.api("GET", f"/api/v1/templates/{template_id}", key=stranger).status == 404
    foreign = herald.api(
        "POST",
        "/api/v1/notifications/email",
        {"to": "ada@example.com", "template": {"id": template_id, "version": 1, "data": DATA}},
        key=stranger,
    )
    assert (foreign.status, foreign.body["code"]) == (404, "template_not_found")
