"""Named keys through the local stack, as a team's clients use them: a send-only key limited to one
sending domain for CI, a read-only key for a dashboard, a manage key for provisioning; each tries
what its scopes do not allow and is refused with a sentence naming the scope; a revoked key is
refused from the next request while the others keep working."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from tests.e2e.test_account import AccountClient, data, paid_tenant_with_keys, sandbox_key, unique_domain

if TYPE_CHECKING:
    import requests

    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e


def refusal(response: requests.Response, status: int) -> tuple[str, str]:
    assert response.status_code == status, response.text
    body = response.json()
    return body["code"], body["error"]


def mail(domain: str) -> dict[str, str]:
    return {
        "to": f"reader-{uuid.uuid4().hex[:8]}@example.com",
        "subject": "Scoped",
        "body": "<p>hi</p>",
        "from": f"ci@{domain}",
    }


def test_three_named_keys_each_do_what_their_scopes_allow_and_nothing_else(local_stack: RunningStack) -> None:
    owner = paid_tenant_with_keys(local_stack, ("SENDGRID",))
    allowed, other = unique_domain("a"), unique_domain("b")
    for domain in (allowed, other):
        data(owner.call("POST", "/account/domains", {"domain": domain}), 201)
        data(owner.call("POST", f"/account/domains/{domain}/verify"), 200)

    ci = data(
        owner.call("POST", "/account/keys", {"name": "CI", "scopes": ["send"], "domains": [allowed]}), 201
    )
    dashboard = data(owner.call("POST", "/account/keys", {"name": "dashboard", "scopes": ["read"]}), 201)
    provisioning = data(
        owner.call("POST", "/account/keys", {"name": "provisioning", "scopes": ["manage"]}), 201
    )
    send, read, manage = (AccountClient(local_stack, key["key"]) for key in (ci, dashboard, provisioning))

    # The send key sends from its domain, and nothing else.
    assert data(send.call("POST", "/notifications/email", mail(allowed)), 202)["status"] == "pending"
    assert refusal(send.call("POST", "/notifications/email", mail(other)), 403) == (
        "insufficient_scope",
        f"This API key may not send from {other}; it may send only from {allowed}.",
    )
    assert refusal(send.call("GET", "/notifications/jobs"), 403) == (
        "insufficient_scope",
        'This request needs the read scope, which the API key "CI" lacks.',
    )
    sendgrid = {"apiKey": sandbox_key("sendgrid")}
    assert refusal(send.call("PUT", "/account/providers/SENDGRID", sendgrid), 403)[0] == "insufficient_scope"
    assert refusal(send.call("POST", "/account/keys", {"name": "x", "scopes": ["send"]}), 403)[0] == (
        "insufficient_scope"
    )

    # The read key reads and cannot send.
    assert data(read.call("GET", "/notifications/jobs"), 200)["pagination"]["total"] >= 1
    assert refusal(read.call("POST", "/notifications/email", mail(allowed)), 403) == (
        "insufficient_scope",
        'This request needs the send scope, which the API key "dashboard" lacks.',
    )

    # The manage key provisions keys within its own scope, not beyond it.
    data(manage.call("POST", "/account/keys", {"name": "deploy bot", "scopes": ["manage"]}), 201)
    escalated = manage.call("POST", "/account/keys", {"name": "escalated", "scopes": ["full"]})
    assert refusal(escalated, 403)[0] == "insufficient_scope"

    # The list shows previews, never a secret; the owner revokes CI and only CI stops.
    listed = data(owner.call("GET", "/account/keys"), 200)
    assert [key["name"] for key in listed] == ["Default key", "CI", "dashboard", "provisioning", "deploy bot"]
    assert all(ci["key"] not in str(key) for key in listed)
    assert next(key for key in listed if key["name"] == "CI")["preview"] == f"hk_…{ci['key'][-4:]}"
    data(owner.call("DELETE", f"/account/keys/{ci['id']}"), 200)
    assert refusal(send.call("POST", "/notifications/email", mail(allowed)), 401)[0] == "invalid_api_key"
    assert data(read.call("GET", "/account"), 200)["plan"] == "startup"
