"""Members over HTTP on the running local stack: an owner signs up and invites a developer and a
viewer, each signs in with the code the sandbox mailbox received, acts with their role, and a
removal ends the viewer's session on its next request."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import requests

from herald_harness.running_stack import RunningStack
from herald_harness.tenants import HTTP_TIMEOUT
from tests.e2e.browser import codes_sent, latest_code
from tests.e2e.clients import sandbox

pytestmark = pytest.mark.e2e


class Person:
    """A browser as far as the server sees one: the session cookie and the console's Origin (the
    cookie is Secure, which ``requests`` keeps off http://, so it is sent by hand)."""

    def __init__(self, stack: RunningStack, email: str) -> None:
        self.stack, self.email, self.cookie = stack, email, ""

    def call(self, method: str, path: str, body: Any = None) -> requests.Response:
        headers = {"Origin": self.stack.base_url}
        if self.cookie:
            headers["Cookie"] = f"herald_session={self.cookie}"
        return requests.request(
            method, f"{self.stack.api_root}{path}", json=body, headers=headers, timeout=HTTP_TIMEOUT
        )

    def signs_in(self, route: str = "/signin", **extra: str) -> dict[str, Any]:
        sent = codes_sent(self.stack, self.email)
        asked = self.call("POST", route, {"email": self.email, **extra})
        assert asked.status_code == 202, asked.text
        code = latest_code(self.stack, self.email, after=sent)
        verified = self.call("POST", "/signin/verify", {"email": self.email, "code": code})
        assert verified.status_code == 200, verified.text
        self.cookie = verified.cookies["herald_session"]
        data: dict[str, Any] = verified.json()["data"]
        return data


def error_of(answer: requests.Response) -> tuple[int, str, str]:
    body = answer.json()
    return answer.status_code, body["code"], body["error"]


def test_an_owner_invites_a_developer_and_a_viewer_who_sign_in_and_act_with_their_roles(
    local_stack: RunningStack,
) -> None:
    tag = uuid.uuid4().hex[:8]
    owner = Person(local_stack, f"owner-{tag}@example.com")
    tenant_id = owner.signs_in("/signup", name="Members E2E")["tenantId"]
    dev, viewer = (
        Person(local_stack, f"dev-{tag}@example.com"),
        Person(local_stack, f"viewer-{tag}@example.com"),
    )
    ids = {}
    for person, role in ((dev, "developer"), (viewer, "viewer")):
        invited = owner.call("POST", "/account/members", {"email": person.email, "role": role})
        assert invited.status_code == 201, invited.text
        assert (invited.json()["data"]["status"], invited.json()["data"]["invitationSent"]) == (
            "invited",
            True,
        )
        ids[role] = invited.json()["data"]["id"]
        mail = sandbox(local_stack, "messages", to=person.email, provider="ses")[-1]
        assert mail["subject"] == 'You are invited to "Members E2E" on Herald'
        assert person.signs_in()["tenantId"] == tenant_id

    assert viewer.call("GET", "/account").status_code == 200
    assert error_of(viewer.call("POST", "/account/keys", {"name": "CI", "scopes": ["send"]})) == (
        403,
        "insufficient_scope",
        "This request needs the developer role or higher (the manage scope); your role is viewer.",
    )
    made = dev.call("POST", "/account/keys", {"name": "CI", "scopes": ["send"]})
    assert made.status_code == 201, made.text
    assert made.json()["data"]["key"].startswith("hk_")
    # The viewer rotating the developer's key through the console, and reading the members and the
    # audit log, which a viewer may.
    rotated = viewer.call("POST", f"/account/keys/{made.json()['data']['id']}/rotate", {"graceSeconds": 0})
    assert error_of(rotated)[:2] == (403, "insufficient_scope")
    assert viewer.call("GET", "/account/members").status_code == 200
    audit = viewer.call("GET", "/account/audit").json()["data"]["entries"]
    assert [(entry["action"], entry["actor"]["name"]) for entry in audit[:3]] == [
        ("key.created", dev.email),
        ("member.joined", viewer.email),
        ("member.invited", owner.email),
    ]

    listed = owner.call("GET", "/account/members").json()["data"]
    assert [(m["email"], m["role"], m["status"]) for m in listed] == [
        (owner.email, "owner", "active"),
        (dev.email, "developer", "active"),
        (viewer.email, "viewer", "active"),
    ]
    assert owner.call("DELETE", f"/account/members/{ids['viewer']}").status_code == 200
    assert error_of(viewer.call("GET", "/account")) == (
        401,
        "invalid_session",
        "The console session has ended; sign in again.",
    )
