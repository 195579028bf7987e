"""The API as a NotifyKit SDK v2 user meets it: the SDK's client, re-implemented here as its source
behaves, with the baseUrl the local stack's banner gives, and what its errors show. Then the key
rules an operator and a tenant rely on: a rotation without grace ends every older key at once, the
CLI says until when an old key works and that a revocation holds from the next request.

What the SDK does (its client and error classes): axios joins ``baseUrl`` and the route's path
(``/api/v1/...``) with one slash; every request carries ``X-API-Key`` and ``Content-Type:
application/json``; a success answers ``data``; an error answer becomes ``NotifyKitError`` whose
message is the body's ``error`` (its ``errors`` list only when ``error`` is itself a list) and whose
``getFullMessage()`` is ``[status] message`` followed by those errors; ``retryAfter`` is read on 429.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.e2e.conftest import wait_for

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

TIMEOUT = 20
EMAIL = {"to": "someone@example.com", "subject": "Hello", "body": "<p>Hi</p>"}


class NotifyKitError(Exception):
    def __init__(
        self,
        message: str,
        status_code: int | None = None,
        errors: list[Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.status_code, self.errors, self.retry_after = (
            message,
            status_code,
            errors,
            retry_after,
        )

    def full_message(self) -> str:
        """``getFullMessage()``: what an SDK user logs."""
        text = f"[{self.status_code}] {self.message}" if self.status_code else self.message
        if self.errors:
            text += "\nValidation errors:\n" + "\n".join(f"  - {error}" for error in self.errors)
        return text


def sdk_url(base_url: str, path: str) -> str:
    """axios's rule for ``baseURL`` + a relative URL."""
    return re.sub(r"/?/$", "", base_url) + "/" + re.sub(r"^/+", "", path)


@dataclass(frozen=True)
class NotifyKitClient:
    base_url: str
    api_key: str

    def _request(self, method: str, path: str, body: Any = None, params: Any = None) -> Any:
        response = requests.request(
            method,
            sdk_url(self.base_url, path),
            json=body,
            params=params,
            headers={"X-API-Key": self.api_key, "Content-Type": "application/json"},
            timeout=TIMEOUT,
        )
        data = response.json()
        if response.ok:
            if data.get("success") is False:
                raise NotifyKitError(
                    data.get("error") or data.get("message") or "Request failed", response.status_code
                )
            return data["data"] if data.get("data") is not None else data
        raise _error(response.status_code, data)

    def ping(self) -> Any:
        return self._request("GET", "/api/v1/ping")

    def get_api_info(self) -> Any:
        return self._request("GET", "/api/v1/info")

    def send_email(self, options: dict[str, Any]) -> Any:
        return self._request("POST", "/api/v1/notifications/email", options)

    def send_webhook(self, options: dict[str, Any]) -> Any:
        return self._request("POST", "/api/v1/notifications/webhook", options)

    def get_job(self, job_id: str) -> Any:
        return self._request("GET", f"/api/v1/notifications/jobs/{job_id}")

    def list_jobs(self, **options: Any) -> Any:
        return self._request("GET", "/api/v1/notifications/jobs", params=options)

    def retry_job(self, job_id: str) -> Any:
        return self._request("POST", f"/api/v1/notifications/jobs/{job_id}/retry")


def _error(status: int, data: Any) -> NotifyKitError:
    message, errors = f"Request failed with status code {status}", None
    if data.get("error"):
        if isinstance(data["error"], list):
            errors, message = data["error"], ", ".join(data["error"])
        else:
            message = data["error"]
    elif data.get("message"):
        if isinstance(data["message"], list):
            errors, message = data["message"], "Validation failed"
        else:
            message = data["message"]
    retry_after = (
        data.get("retryAfter") if status == 429 and isinstance(data.get("retryAfter"), int) else None
    )
    return NotifyKitError(message, status, errors, retry_after)


def printed_base_url(stack: RunningStack) -> str:
    """The SDK baseUrl the stack's banner gives a newcomer."""
    found = re.search(r"^  SDK baseUrl +(\S+)", stack.console(), re.MULTILINE)
    assert found is not None, stack.console()
    return found.group(1)


def test_the_sdk_with_the_printed_base_url_reaches_every_route_it_calls(local_stack: RunningStack) -> None:
    """Given the baseUrl the banner prints and a paid tenant, When the SDK calls each of its methods,
    Then each answers as the SDK expects: pong, service info, accepted email and webhook, the job, the
    listing, and a failed webhook retried."""
    base_url = printed_base_url(local_stack)
    assert base_url == local_stack.base_url
    _, api_key = local_stack.create_tenant(plan="startup", name="Sdk")
    sdk = NotifyKitClient(base_url, api_key)
    setup = requests.put(
        sdk_url(base_url, "/api/v1/account/providers/RESEND"),
        json={"apiKey": f"sandbox-{uuid.uuid4().hex}"},
        headers={"X-API-Key": api_key},
        timeout=TIMEOUT,
    )
    assert setup.status_code == 201, setup.text

    assert sdk.ping() == {"message": "pong"}
    assert sdk.get_api_info()["name"] == "Herald"
    email = sdk.send_email({**EMAIL, "priority": 1})
    assert (email["status"], email["type"]) == ("pending", "email")
    refused = sdk.send_webhook(
        {"url": f"{local_stack.sandbox_url}/hooks/fail-410", "payload": {"event": "x"}}
    )
    job = wait_for(
        lambda: (job := sdk.get_job(refused["jobId"]))["status"] == "failed" and job, "the webhook to fail"
    )
    assert job["deliveryLogs"][0]["status"] == "failed"
    assert sdk.retry_job(refused["jobId"]) == {
        "jobId": refused["jobId"],
        "status": "pending",
        "message": "Job has been re-queued for processing",
    }
    listing = sdk.list_jobs(type="email", limit=5)
    assert [summary["id"] for summary in listing["data"]] == [email["jobId"]]
    assert listing["pagination"]["total"] == 1


def test_the_api_root_is_not_the_sdks_base_url(local_stack: RunningStack) -> None:
    """The mistake the old docs led to: the SDK adds /api/v1 itself, so the API root as baseUrl
    reaches no route."""
    with pytest.raises(NotifyKitError) as caught:
        NotifyKitClient(local_stack.api_root, "hk_" + "0" * 64).ping()
    assert caught.value.status_code == 404
    assert caught.value.message == "No route GET /api/v1/api/v1/ping."


def test_an_sdk_user_sees_every_field_problem_of_a_refused_request(local_stack: RunningStack) -> None:
    """Given a request with three wrong fields, When the SDK shows its error, Then the message names
    all three (the SDK reads the one sentence in ``error``)."""
    sdk = NotifyKitClient(
        local_stack.base_url, local_stack.create_tenant(plan="startup", name="SdkErrors")[1]
    )
    with pytest.raises(NotifyKitError) as caught:
        sdk.send_email(
            {"to": "not-an-address", "subject": "two\nlines", "body": "<p>x</p>", "cc": "x@example.com"}
        )
    assert caught.value.full_message() == (
        "[400] Invalid request: to: An email address must have an @-sign; "
        "subject: must not contain line breaks; cc: Unknown field 'cc'."
    )


def test_an_sdk_user_gets_retry_after_when_rate_limited(local_stack: RunningStack) -> None:
    sdk = NotifyKitClient(local_stack.base_url, local_stack.create_tenant(plan="free", name="SdkLimited")[1])
    webhook = {"url": f"{local_stack.sandbox_url}/hooks/limited", "payload": {"n": 1}}
    # The free plan takes 5 a minute: the 6th is refused, or the 11th if a minute began meanwhile.
    refusal = None
    for _ in range(11):
        try:
            sdk.send_webhook(webhook)
        except NotifyKitError as error:
            refusal = error
            break
    assert refusal is not None
    assert refusal.status_code == 429
    assert refusal.retry_after is not None
    assert 1 <= refusal.retry_after <= 60


# ---------------------------------------------------------------- key rotation and revocation


def _status(stack: RunningStack, api_key: str) -> int:
    return requests.get(
        f"{stack.api_root}/account", headers={"X-API-Key": api_key}, timeout=TIMEOUT
    ).status_code


def _rotate(stack: RunningStack, api_key: str, grace_seconds: int) -> dict[str, Any]:
    answer = requests.post(
        f"{stack.api_root}/account/api-key/rotate",
        json={"graceSeconds": grace_seconds},
        headers={"X-API-Key": api_key},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    rotated: dict[str, Any] = answer.json()["data"]
    return rotated


def test_a_rotation_without_grace_ends_a_key_still_in_an_earlier_grace_at_once(
    local_stack: RunningStack,
) -> None:
    """Given a key rotated with an hour's grace (both keys work), When the tenant rotates again
    without grace because a key leaked, Then only the newest key works, from the next request on."""
    _, first = local_stack.create_tenant(plan="startup", name="Leaked")
    second = _rotate(local_stack, first, 3600)
    assert second["previousKeyValidUntil"] is not None
    assert [_status(local_stack, key) for key in (first, second["apiKey"])] == [200, 200]

    third = _rotate(local_stack, second["apiKey"], 0)
    assert third["previousKeyValidUntil"] is None
    assert [_status(local_stack, key) for key in (first, second["apiKey"], third["apiKey"])] == [
        401,
        401,
        200,
    ]


def test_the_operator_revokes_every_older_key_and_is_told_it_holds_from_the_next_request(
    local_stack: RunningStack,
) -> None:
    """Given a tenant whose first key an operator rotated with a grace period, When the operator
    rotates again without grace, Then the CLI says the revoked keys are refused from the next
    request, and neither older key works."""
    tenant_id, first = local_stack.create_tenant(plan="startup", name="Revoked")
    graced = local_stack.cli("key", "rotate", tenant_id, "--grace-seconds", "3600").splitlines()
    second = graced[1].split()[2]
    assert re.fullmatch(r"old key valid until \S+Z, then revoked", graced[2])

    revoked = local_stack.cli("key", "rotate", tenant_id).splitlines()
    assert revoked[2:] == [
        "old key revoked now, with every key still in an earlier rotation's grace period",
        "the next request with a revoked key is refused (401 invalid_api_key)",
    ]
    third = revoked[1].split()[2]
    assert [_status(local_stack, key) for key in (first, second, third)] == [401, 401, 200]


def test_a_disabled_tenant_is_refused_and_the_operator_is_told_what_happens_to_its_jobs(
    local_stack: RunningStack,
) -> None:
    tenant_id, api_key = local_stack.create_tenant(plan="startup", name="Disabled")
    assert local_stack.cli("tenant", "disable", tenant_id).splitlines() == [
        f"{tenant_id} is now disabled",
        "its next request is refused (403 tenant_disabled); its queued jobs end failed, not sent",
    ]
    refused = requests.get(f"{local_stack.api_root}/account", headers={"X-API-Key": api_key}, timeout=TIMEOUT)
    assert (refused.status_code, refused.json()["code"]) == (403, "tenant_disabled")
