"""Email templates over HTTP through the local stack, as a tenant uses them: create a template,
publish it, send with a template and data; the provider sandbox's mailbox shows the rendered mail
(variables escaped in the HTML part only), the job names the template and version it rendered, a
draft is sent only when named, and a send missing a variable is refused at once naming it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from herald_harness.tenants import new_tenant
from tests.e2e.clients import address, finished_job, sandbox

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack
    from herald_harness.tenants import Tenant

pytestmark = pytest.mark.e2e

RECEIPT = {
    "name": "Receipt",
    "subject": "Receipt {{ order.number }} for {{ name }}",
    "html": "<h1>Thanks, {{ name }}</h1><ul>{% for item in order.items %}<li>{{ item.title }} × {{ item.qty }}</li>"
    "{% endfor %}</ul>",
    "text": "Thanks, {{ name }}: {{ order.items | size }} items",
}
DATA = {"name": "Ada & Bo", "order": {"number": "A-42", "items": [{"title": "<Tea>", "qty": 2}]}}


def answered(tenant: Tenant, method: str, path: str, body: Any, status: int) -> dict[str, Any]:
    answer = tenant.call(method, path, body)
    assert answer.status_code == status, answer.text
    result: dict[str, Any] = answer.json()
    return result


def test_a_published_template_sends_the_rendered_mail(local_stack: RunningStack) -> None:
    tenant = new_tenant(local_stack)
    template = answered(tenant, "POST", "/templates", RECEIPT, 201)["data"]
    assert (template["version"], template["publishedVersion"]) == (1, None)
    template_id = template["id"]
    answered(tenant, "POST", f"/templates/{template_id}/publish", {}, 200)
    to = address("templated")

    job_id = tenant.send("email", {"to": to, "template": {"id": template_id, "data": DATA}})
    job = finished_job(tenant, job_id)

    assert job["status"] == "completed"
    assert job["template"] == {"id": template_id, "version": 1}
    [mail] = sandbox(local_stack, "messages", jobId=job_id)
    assert (mail["recipient"], mail["subject"]) == (to, "Receipt A-42 for Ada & Bo")
    assert mail["html"] == "<h1>Thanks, Ada &amp; Bo</h1><ul><li>&lt;Tea&gt; × 2</li></ul>"
    assert mail["text"] == "Thanks, Ada & Bo: 1 items"


def test_a_draft_is_sent_only_when_named_and_a_missing_variable_is_refused_at_once(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack)
    template_id = answered(tenant, "POST", "/templates", RECEIPT, 201)["data"]["id"]
    answered(tenant, "POST", f"/templates/{template_id}/publish", {}, 200)
    draft = {**RECEIPT, "subject": "Draft receipt {{ order.number }}"}
    assert answered(tenant, "PUT", f"/templates/{template_id}", draft, 200)["data"]["version"] == 2

    published = finished_job(
        tenant, tenant.send("email", {"to": address("pub"), "template": {"id": template_id, "data": DATA}})
    )
    named = finished_job(
        tenant,
        tenant.send(
            "email", {"to": address("draft"), "template": {"id": template_id, "version": 2, "data": DATA}}
        ),
    )
    assert [
        sandbox(local_stack, "messages", jobId=job["id"])[0]["subject"] for job in (published, named)
    ] == [
        "Receipt A-42 for Ada & Bo",
        "Draft receipt A-42",
    ]
    assert named["template"] == {"id": template_id, "version": 2}

    refused = answered(
        tenant,
        "POST",
        "/notifications/email",
        {"to": address("missing"), "template": {"id": template_id, "data": {"name": "Ada"}}},
        400,
    )
    assert (refused["code"], refused["error"]) == (
        "template_render_failed",
        "The template's subject, line 1: 'order' is undefined.",
    )
