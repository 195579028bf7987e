"""One-click unsubscribe through the real handlers on moto resources built from template.yaml: the
email worker signs the link into each vendor's request (read back from the provider sandbox), the
console function's /u/{token} routes record and take back an unsubscribe as a mailbox provider and
a recipient call them, the next send of the topic fails naming it without any provider call, and
the tenant's list and removal (audited) go through the API."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes
from herald.domain.clock import now_iso
from herald.domain.unsubscribes import ALL_TOPICS, Unsubscribe, UnsubscribeSource
from herald_harness.in_moto import ApiAnswer, client, herald_in_moto
from herald_local.sandbox import SandboxServer
from tests.integration.test_workers_moto import EMAIL_QUEUE, Rig, StubDns, email, one_record

ONE_CLICK = b"List-Unsubscribe=One-Click"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    """One moto stack and one provider sandbox for the module, as the workers' tests have them."""
    dns = StubDns()
    with pytest.MonkeyPatch.context() as monkeypatch, SandboxServer() as sandbox:
        monkeypatch.setattr(socket, "getaddrinfo", dns.getaddrinfo)
        with herald_in_moto(monkeypatch) as herald:
            yield Rig(herald, sandbox, dns)


@pytest.fixture(autouse=True)
def _fresh_start(rig: Rig) -> None:
    rig.herald.drain_queues()
    rig.forget_environment()


def _send(rig: Rig, key: str, to: str, topic: str | None, provider: str | None = None) -> dict[str, Any]:
    """Accept the email, run the worker on it, and answer its job document."""
    body = (
        email(to)
        | ({"unsubscribe": {"topic": topic}} if topic else {})
        | ({"provider": provider} if provider else {})
    )
    job_id = rig.accept(key, "email", body)
    rig.deliver(EMAIL_QUEUE, [one_record(rig, EMAIL_QUEUE)])
    return rig.job(key, job_id)


def _link(rig: Rig, job_id: str) -> str:
    [message] = rig.sandbox.store.messages(job_id=job_id)
    headers = message.summary.mail_headers
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = headers["List-Unsubscribe"]
    assert link.startswith("<") and link.endswith(">")  # noqa: PT018 (one bracketed URI)
    return link[1:-1]


def _browser(rig: Rig, method: str, url: str, body: bytes | None = None, **headers: str) -> ApiAnswer:
    """A request to the console function's routes as a mailbox provider or a browser sends it: no key,
    no cookie; the rig's next API call switches back to the API's environment."""
    path = url.split("://", 1)[1].partition("/")[2]
    rig.forget_environment()
    return rig.herald.api(method, f"/{path}", body, headers=headers, content_type=FORM if body else None)


@pytest.mark.parametrize("provider", ["SENDGRID", "RESEND", "POSTMARK", "MAILGUN"])
def test_each_vendor_receives_the_one_click_headers(rig: Rig, provider: str) -> None:
    _, key = rig.new_tenant([provider])
    job = _send(rig, key, f"ada+{uuid.uuid4().hex}@example.com", "newsletter", provider)

    assert job["status"] == "completed"
    assert _link(rig, job["id"]).startswith(f"{rig.herald.origin}/u/1.")


def test_a_one_click_post_stops_the_topic_for_that_recipient_only(rig: Rig) -> None:
    tenant_id, key = rig.new_tenant(["SENDGRID"])
    to = f"Ada+{uuid.uuid4().hex}@Example.com"
    url = _link(rig, _send(rig, key, to, "newsletter")["id"])

    posted = _browser(rig, "POST", url, ONE_CLICK)
    replayed = _browser(rig, "POST", url, ONE_CLICK)
    attempts = len(rig.sandbox.store.attempts(to=to.lower()))

    assert (posted.status, replayed.status) == (200, 200)
    assert "Location" not in posted.headers
    assert "You are unsubscribed" in posted.text
    failed = _send(rig, key, to, "newsletter")
    assert (failed["status"], failed["errorMessage"]) == ("failed", "recipient unsubscribed from newsletter")
    assert failed["deliveryLogs"][0]["providers"] == []
    assert len(rig.sandbox.store.attempts(to=to.lower())) == attempts
    assert _send(rig, key, to, "billing")["status"] == "completed"
    assert _send(rig, key, to, None)["status"] == "completed"
    listed = rig.api("GET", "/api/v1/account/unsubscribes?topic=newsletter", key=key).data["data"]
    assert [(item["email"], item["topic"], item["source"]) for item in listed] == [
        (to.lower(), "newsletter", "one-click")
    ]
    assert tenant_id


def test_an_empty_post_also_unsubscribes_and_the_page_resubscribes_from_its_own_origin_only(rig: Rig) -> None:
    _, key = rig.new_tenant(["SENDGRID"])
    to = f"bo+{uuid.uuid4().hex}@example.com"
    url = _link(rig, _send(rig, key, to, "news")["id"])

    assert "Unsubscribe" in _browser(rig, "GET", url).text
    assert _browser(rig, "POST", url).status == 200
    page = _browser(rig, "GET", url)
    assert (page.status, "You are unsubscribed" in page.text) == (200, True)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert _browser(rig, "POST", f"{url}/resubscribe", Origin="https://evil.example").status == 403
    assert _browser(rig, "POST", f"{url}/resubscribe", Origin=rig.herald.origin).status == 200
    assert _send(rig, key, to, "news")["status"] == "completed"


def test_a_forged_altered_or_foreign_token_is_a_404_that_records_nothing(rig: Rig) -> None:
    _, key = rig.new_tenant(["SENDGRID"])
    _, other_key = rig.new_tenant(["SENDGRID"])
    url = _link(rig, _send(rig, key, f"cy+{uuid.uuid4().hex}@example.com", "news")["id"])
    version, payload, mac = url.rsplit("/", 1)[1].split(".")
    base = url.rsplit("/", 1)[0]
    forged = [
        f"{base}/1.{payload}.{'A' * len(mac)}",
        f"{base}/1.{payload[:-2]}xx.{mac}",
        f"{base}/2.{payload}.{mac}",
    ]

    answers = [_browser(rig, "POST", bad, ONE_CLICK) for bad in forged]

    assert [answer.status for answer in answers] == [404, 404, 404]
    assert all("This unsubscribe link is not valid." in answer.text for answer in answers)
    for tenant_key in (key, other_key):
        listed = rig.api("GET", "/api/v1/account/unsubscribes", key=tenant_key).data
        assert listed == {"data": [], "nextCursor": None}


def test_removing_an_unsubscribe_through_the_api_is_audited_and_mail_goes_again(rig: Rig) -> None:
    tenant_id, key = rig.new_tenant(["SENDGRID"])
    to = f"di+{uuid.uuid4().hex}@example.com"
    _browser(rig, "POST", _link(rig, _send(rig, key, to, "news")["id"]), ONE_CLICK)

    gone = rig.api("DELETE", f"/api/v1/account/unsubscribes/{to}?topic=news", key=key)
    again = rig.api("DELETE", f"/api/v1/account/unsubscribes/{to}?topic=news", key=key)

    assert gone.status == 200
    assert (again.status, again.body["code"]) == (404, "unsubscribe_not_found")
    [audit] = _items(rig, f"AUDIT#{tenant_id}", "unsubscribe.removed")
    assert (audit["target"], audit["details"]) == (to, {"topic": "news"})
    assert _send(rig, key, to, "news")["status"] == "completed"


def _items(rig: Rig, pk: str, action: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").query(
        TableName=rig.herald.topology.outputs["TableName"],
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )["Items"]
    found = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return [item for item in found if item.get("action") == action]


def test_a_providers_every_topic_unsubscribe_shows_on_the_link_without_a_resubscribe_button(rig: Rig) -> None:
    tenant_id, key = rig.new_tenant(["SENDGRID"])
    to = f"ev+{uuid.uuid4().hex}@example.com"
    url = _link(rig, _send(rig, key, to, "news")["id"])
    entry = Unsubscribe(to, ALL_TOPICS, now_iso(), UnsubscribeSource.PROVIDER, "SENDGRID")
    DynamoUnsubscribes(rig.herald.table).record(tenant_id, entry)

    page = _browser(rig, "GET", url)

    assert (page.status, "You are unsubscribed" in page.text) == (200, True)
    assert "no more list mail from this sender, about <code>news</code> or anything else" in page.text
    assert "Resubscribe" not in page.text
