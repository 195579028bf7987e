"""The local stack as a client sees it: the API over HTTP on localhost, the gateway's own answers for
paths no route serves, bursts of concurrent requests, and Ctrl-C stopping every process the stack started."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from herald_harness.running_stack import without_local_dir
from herald_local.config import project_root
from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e


def _get(url: str) -> tuple[int, dict[str, str], Any]:
    try:
        with urllib.request.urlopen(url, timeout=15) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_ping_answers_pong_in_the_success_envelope(local_stack: RunningStack) -> None:
    status, _, body = _get(f"{local_stack.api_root}/ping")
    assert status == 200
    assert body["success"] is True
    assert body["data"] == {"message": "pong"}


def test_an_unknown_route_under_the_api_answers_404_in_the_error_envelope(local_stack: RunningStack) -> None:
    status, _, body = _get(f"{local_stack.api_root}/no-such-route")
    assert status == 404
    assert body["success"] is False


def test_a_path_outside_every_route_answers_the_gateways_own_404_in_the_error_envelope(
    local_stack: RunningStack,
) -> None:
    origin = local_stack.state["gatewayUrl"]
    status, headers, body = _get(f"{origin}/not-an-api-path")
    assert status == 404
    assert (body["success"], body["code"], body["error"]) == (
        False,
        "not_found",
        "No route serves /not-an-api-path.",
    )
    assert "apigw-requestid" not in {name.lower() for name in headers}


def test_thirty_concurrent_posts_from_one_client_are_all_accepted(local_stack: RunningStack) -> None:
    """Given one client sending 30 webhooks at once, Then every one is accepted (202): the gateway
    waits for a free execution environment instead of answering 5xx."""
    _, api_key = local_stack.create_tenant(plan="startup", name="Burst")
    webhook = {"url": f"{local_stack.sandbox_url}/hooks/burst", "payload": {"event": "burst"}}

    def send(_: int) -> int:
        return _post(local_stack, "/notifications/webhook", api_key, webhook)[0]

    with ThreadPoolExecutor(30) as executor:
        statuses = list(executor.map(send, range(30)))
    assert statuses == [202] * 30


def test_the_stack_publishes_its_resources_and_the_demo_tenant(local_stack: RunningStack) -> None:
    assert local_stack.demo_api_key is not None, local_stack.log_tail()
    assert local_stack.demo_api_key.startswith("hk_")
    assert local_stack.demo_tenant_id
    tables = local_stack.boto3_client("dynamodb").list_tables()["TableNames"]
    assert local_stack.outputs["TableName"] in tables


def test_ctrl_c_stops_moto_and_every_function_runner(fresh_stack: RunningStack) -> None:
    """Given a running stack, When it gets SIGINT, Then it exits 0 and none of its child processes
    (moto, one runner per function) is left, and its state file is gone."""
    assert "moto" in fresh_stack.child_pids
    assert set(fresh_stack.state["functions"]) <= set(fresh_stack.child_pids)
    fresh_stack.stop_cleanly()


def _post(local_stack: RunningStack, path: str, api_key: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{local_stack.api_root}{path}",
        data=json.dumps(body).encode(),
        headers={"X-API-Key": api_key, "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _post_webhook(local_stack: RunningStack, api_key: str, url: str) -> tuple[int, Any]:
    return _post(local_stack, "/notifications/webhook", api_key, {"url": url, "payload": {"event": "ping"}})


def test_a_tenant_may_target_the_sandbox_but_no_other_loopback_port(local_stack: RunningStack) -> None:
    """Given the local stack's one loopback exception, Then a webhook to the provider sandbox is
    accepted, and one to moto (the local AWS) or to the API's own port is refused at acceptance."""
    _, api_key = local_stack.create_tenant(plan="startup", name="Loopback")
    status, _ = _post_webhook(local_stack, api_key, f"{local_stack.sandbox_url}/hooks/loopback")
    assert status == 202
    for url in (f"{local_stack.moto_url}/", f"{local_stack.state['gatewayUrl']}/api/v1/ping"):
        status, body = _post_webhook(local_stack, api_key, url)
        assert (status, body["code"]) == (400, "url_not_allowed"), url


def test_make_invoke_finds_a_stack_by_its_state_folder(local_stack: RunningStack) -> None:
    """Given a stack started with a state folder of its own, When ``make invoke`` is pointed at it
    with --local-dir (and HERALD_LOCAL_DIR is not set), Then it runs the function on the event."""
    finished = subprocess.run(
        [sys.executable, "-m", "herald_local.invoke", "ApiFunction", "events/api/ping.json"]
        + ["--local-dir", str(local_stack.state_dir)],
        cwd=project_root(),
        env=without_local_dir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    answer = json.loads(finished.stdout)
    assert answer["statusCode"] == 200
    assert json.loads(answer["body"])["data"] == {"message": "pong"}


def test_the_console_shows_one_line_per_request_and_delivery_and_the_log_file_everything(
    local_stack: RunningStack,
) -> None:
    """Given the stack started without --verbose, When a client pings and sends an email, Then the
    console shows one line for each request and one for the delivery, keeps the banner with the demo
    key and signing secret, and leaves the functions' own log lines to the full log file."""
    api_key = local_stack.demo_api_key
    assert api_key is not None, local_stack.log_tail()
    recipient = f"console-{uuid.uuid4().hex[:8]}@example.com"
    assert _get(f"{local_stack.api_root}/ping")[0] == 200
    status, accepted = _post(
        local_stack, "/notifications/email", api_key, {"to": recipient, "subject": "Hi", "body": "<p>Hi</p>"}
    )
    assert status == 202
    delivery = re.compile(rf"email job {accepted['data']['jobId']} via \w+ to {recipient}: accepted \(20\d\)")
    console = wait_for(
        lambda: (text := local_stack.console()) and delivery.search(text) and text, "the delivery line"
    )

    assert re.search(r"GET /api/v1/ping -> 200 \(\d+ ms\)", console)
    assert re.search(r"POST /api/v1/notifications/email -> 202 \(\d+ ms\)", console)
    assert f"Demo API key     {api_key}" in console
    assert f"Signing secret   {local_stack.state['demoTenant']['signingSecret']}" in console
    assert local_stack.state["demoTenant"]["signingSecret"].startswith("whsec_")
    for noise in ("START RequestId", "REPORT RequestId", "No application metrics to publish", '"level":'):
        assert noise not in console, noise
    assert "REPORT RequestId" in local_stack.log_file.read_text(errors="replace")
