"""One-click unsubscribe end to end, through the local stack over HTTP, as Gmail does it: a send with
a topic, its List-Unsubscribe header read from the provider sandbox's mailbox, a POST to that URL
with the form body List-Unsubscribe=One-Click and no cookie, and the next sends of that topic and of
another one."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import requests

from herald_harness.tenants import new_tenant
from tests.e2e.clients import address, email, finished_job, sandbox

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

HTTP_TIMEOUT = (3.05, 20.0)
ONE_CLICK = {"Content-Type": "application/x-www-form-urlencoded"}


def _one_click(url: str) -> requests.Response:
    """Gmail's POST: the form body, no cookie, no key, redirects not followed."""
    return requests.post(
        url, data="List-Unsubscribe=One-Click", headers=ONE_CLICK, allow_redirects=False, timeout=HTTP_TIMEOUT
    )


def test_a_one_click_post_to_the_mailed_link_stops_that_topic_for_that_recipient(
    local_stack: RunningStack,
) -> None:
    tenant = new_tenant(local_stack, ("SENDGRID",))
    to = address("reader")
    first = finished_job(tenant, tenant.send("email", email(to, unsubscribe={"topic": "newsletter"})))
    [message] = sandbox(local_stack, "messages", jobId=first["id"])
    headers = message["mailHeaders"]
    url = headers["List-Unsubscribe"].removeprefix("<").removesuffix(">")

    answer = _one_click(url)

    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert url.startswith(f"{local_stack.base_url}/u/1.")
    assert (answer.status_code, answer.is_redirect) == (200, False)
    assert "You are unsubscribed" in answer.text
    assert _one_click(url).status_code == 200  # a replay is harmless
    stopped = finished_job(tenant, tenant.send("email", email(to, unsubscribe={"topic": "newsletter"})))
    assert (stopped["status"], stopped["errorMessage"]) == (
        "failed",
        "recipient unsubscribed from newsletter",
    )
    assert sandbox(local_stack, "attempts", jobId=stopped["id"]) == []
    other = finished_job(tenant, tenant.send("email", email(to, unsubscribe={"topic": "billing"})))
    assert other["status"] == "completed"
    listed = tenant.call("GET", "/account/unsubscribes?topic=newsletter").json()["data"]["data"]
    assert [(item["topic"], item["source"]) for item in listed] == [("newsletter", "one-click")]


def test_a_forged_token_is_a_404(local_stack: RunningStack) -> None:
    answer = _one_click(
        f"{local_stack.base_url}/u/1.dGVuYW50CmFkYUBleGFtcGxlLmNvbQpuZXdz.AAAAAAAAAAAAAAAAAAAAAA"
    )

    assert answer.status_code == 404
    assert "This unsubscribe link is not valid." in answer.text
