"""The account routes through the local stack, as a tenant's own client drives them: provider keys
checked live against the sandbox and stored sealed, priorities, sending domains, the signing secret
and its rotation, API key rotation with and without a grace period, and the suppression list.

Every test creates its own tenants with the operator CLI, so none depends on another or on the demo
tenant."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
import requests
from standardwebhooks import Webhook

from tests.e2e.clients import table_items
from tests.e2e.conftest import wait_for as shared_wait_for
from tests.support.stored_items import readable, table_text

if TYPE_CHECKING:
    from herald_harness.running_stack import RunningStack

pytestmark = pytest.mark.e2e

TIMEOUT = 15
CLI_TIMEOUT = 60
# How long a test waits for something the workers or the clock bring about.
POLL_SECONDS = 15.0


@dataclass(frozen=True)
class Tenant:
    tenant_id: str
    api_key: str


class AccountClient:
    """A tenant's HTTP client of the local stack's API."""

    def __init__(self, stack: RunningStack, api_key: str) -> None:
        self.base = stack.api_root
        self.api_key = api_key

    def call(self, method: str, path: str, body: Any = None, *, key: str | None = None) -> requests.Response:
        return requests.request(
            method,
            f"{self.base}{path}",
            json=body,
            headers={"X-API-Key": key or self.api_key},
            timeout=TIMEOUT,
        )


def create_tenant(stack: RunningStack, plan: str = "startup") -> Tenant:
    """A tenant of this test's own, made with the operator CLI against the running stack."""
    return Tenant(*stack.create_tenant(plan, name=f"account-{uuid.uuid4().hex[:8]}"))


def sandbox_key(label: str) -> str:
    """A key the sandbox accepts (it begins with ``sandbox-``), unique to this run."""
    return f"sandbox-{label}-{uuid.uuid4().hex}"


def data(response: requests.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is True
    return body["data"]


def error_code(response: requests.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["success"] is False
    return str(body["code"])


def wait_for(probe: Callable[[], Any], what: str) -> Any:
    return shared_wait_for(probe, what, timeout=POLL_SECONDS, interval=0.25)


def paid_tenant_with_keys(
    stack: RunningStack, providers: tuple[str, ...] = ("SENDGRID", "RESEND")
) -> AccountClient:
    """A startup-plan tenant with sandbox keys for ``providers``, prioritised in that order."""
    client = AccountClient(stack, create_tenant(stack).api_key)
    for provider in providers:
        data(client.call("PUT", f"/account/providers/{provider}", {"apiKey": sandbox_key(provider)}), 201)
    return client


def unique_domain(prefix: str = "mail") -> str:
    return f"{prefix}-{uuid.uuid4()}.example.com"


def sandbox_hook(stack: RunningStack, name: str) -> dict[str, Any]:
    def delivered() -> list[dict[str, Any]]:
        answer = requests.get(f"{stack.sandbox_url}/_sandbox/hooks", params={"name": name}, timeout=TIMEOUT)
        return list(answer.json())

    hooks: list[dict[str, Any]] = wait_for(delivered, f"the webhook to /hooks/{name}")
    assert len(hooks) == 1
    return hooks[0]


# ---------------------------------------------------------------- provider keys


def test_a_paid_tenant_stores_keys_checked_live_and_sees_them_only_masked(local_stack: RunningStack) -> None:
    """Given a startup tenant, When it PUTs a SendGrid and a Resend key and then replaces the SendGrid
    one, Then the first PUTs answer 201, the replacement 200, and the list shows each provider by
    priority with its last four characters only, never the key."""
    tenant = create_tenant(local_stack)
    client = AccountClient(local_stack, tenant.api_key)
    sendgrid, resend, replacement = sandbox_key("sg"), sandbox_key("re"), sandbox_key("sg2")

    created = data(client.call("PUT", "/account/providers/sendgrid", {"apiKey": sendgrid}), 201)
    assert (created["provider"], created["priority"], created["lastFour"]) == ("SENDGRID", 1, sendgrid[-4:])
    assert data(client.call("PUT", "/account/providers/RESEND", {"apiKey": resend}), 201)["priority"] == 2
    replaced = client.call("PUT", "/account/providers/SENDGRID", {"apiKey": replacement})
    assert data(replaced, 200)["lastFour"] == replacement[-4:]

    listing = client.call("GET", "/account/providers")
    providers = data(listing, 200)
    assert [(p["provider"], p["priority"], p["lastFour"]) for p in providers] == [
        ("SENDGRID", 1, replacement[-4:]),
        ("RESEND", 2, resend[-4:]),
    ]
    assert providers[0]["addedAt"] == created["addedAt"]
    assert all(p["hasWebhookSecret"] is False for p in providers)
    for provider in providers:
        assert provider["webhookUrl"].endswith(f"/webhooks/{provider['provider'].lower()}/{tenant.tenant_id}")
    for response in (listing, replaced):
        for key in (sendgrid, resend, replacement):
            assert key not in response.text


def test_patch_priority_swaps_with_the_provider_that_held_it(local_stack: RunningStack) -> None:
    """Given SendGrid at 1, Resend at 2 and Postmark at 3, When Postmark is moved to 1, Then SendGrid
    (the holder of 1) takes Postmark's old 3, Resend keeps 2, and the list follows the new order."""
    client = paid_tenant_with_keys(local_stack, ("SENDGRID", "RESEND", "POSTMARK"))

    answered = data(client.call("PATCH", "/account/providers/postmark", {"priority": 1}), 200)

    expected = [("POSTMARK", 1), ("RESEND", 2), ("SENDGRID", 3)]
    assert [(p["provider"], p["priority"]) for p in answered] == expected
    listed = data(client.call("GET", "/account/providers"), 200)
    assert [(p["provider"], p["priority"]) for p in listed] == expected


def test_a_key_the_provider_refuses_is_400_and_nothing_is_stored(local_stack: RunningStack) -> None:
    """Given a tenant with a good SendGrid key, When it PUTs a Postmark key and a SendGrid replacement
    that the providers refuse, Then both answer 400 provider_key_invalid, no Postmark item exists and
    the SendGrid key in use is still the good one."""
    tenant = create_tenant(local_stack)
    client = AccountClient(local_stack, tenant.api_key)
    good = sandbox_key("sg")
    data(client.call("PUT", "/account/providers/SENDGRID", {"apiKey": good}), 201)

    refused = client.call("PUT", "/account/providers/POSTMARK", {"apiKey": "not-a-sandbox-key"})
    assert error_code(refused, 400) == "provider_key_invalid"
    replacement = client.call("PUT", "/account/providers/SENDGRID", {"apiKey": "not-a-sandbox-key-either"})
    assert error_code(replacement, 400) == "provider_key_invalid"

    listed = data(client.call("GET", "/account/providers"), 200)
    assert [(p["provider"], p["lastFour"]) for p in listed] == [("SENDGRID", good[-4:])]
    dynamodb = local_stack.boto3_client("dynamodb")
    stored = dynamodb.get_item(
        TableName=local_stack.outputs["TableName"],
        Key={"pk": {"S": f"TENANT#{tenant.tenant_id}"}, "sk": {"S": "PROVIDER#POSTMARK"}},
    )
    assert "Item" not in stored
    assert "not-a-sandbox-key" not in table_text(table_items(local_stack))


def test_the_free_plan_cannot_bring_provider_keys(local_stack: RunningStack) -> None:
    client = AccountClient(local_stack, create_tenant(local_stack, plan="free").api_key)

    refused = client.call("PUT", "/account/providers/SENDGRID", {"apiKey": sandbox_key("sg")})

    assert error_code(refused, 403) == "plan_required"
    assert data(client.call("GET", "/account/providers"), 200) == []


def test_the_table_holds_provider_keys_only_as_ciphertext(local_stack: RunningStack) -> None:
    """Given stored keys, When the raw table is scanned, Then no attribute anywhere holds a plaintext
    key, and each provider item carries an apiKey map of version, wrapped key, nonce and ciphertext."""
    tenant = create_tenant(local_stack)
    client = AccountClient(local_stack, tenant.api_key)
    keys = {"SENDGRID": sandbox_key("sg"), "RESEND": sandbox_key("re")}
    for provider, key in keys.items():
        data(client.call("PUT", f"/account/providers/{provider}", {"apiKey": key}), 201)

    items = readable(table_items(local_stack))

    for key in keys.values():
        assert not [item for item in items if key in json.dumps(item)]
    mine = [item for item in items if item["pk"]["S"] == f"TENANT#{tenant.tenant_id}"]
    providers = {item["sk"]["S"]: item for item in mine if item["sk"]["S"].startswith("PROVIDER#")}
    assert set(providers) == {"PROVIDER#SENDGRID", "PROVIDER#RESEND"}
    for provider, item in providers.items():
        sealed = item["apiKey"]["M"]
        assert set(sealed) == {"version", "wrappedKey", "nonce", "ciphertext"}
        assert sealed["version"] == {"N": "1"}
        assert len(base64.b64decode(sealed["nonce"]["S"])) == 12
        ciphertext = base64.b64decode(sealed["ciphertext"]["S"])
        # AES-GCM output: exactly the plaintext's length plus the 16-byte tag.
        assert len(ciphertext) == len(keys[provider.removeprefix("PROVIDER#")]) + 16
        assert base64.b64decode(sealed["wrappedKey"]["S"])


# ---------------------------------------------------------------- sending domains


def test_a_domain_is_registered_per_provider_verified_and_then_usable_as_sender(
    local_stack: RunningStack,
) -> None:
    """Given a tenant with two providers, When it registers a domain, Then each provider returns its
    DNS records; after verification the domain is verified, mail from it is accepted and delivered,
    mail from any other domain is 400 from_not_allowed."""
    client = paid_tenant_with_keys(local_stack)
    domain = unique_domain()

    registered = data(client.call("POST", "/account/domains", {"domain": domain}), 201)
    assert registered["domain"] == domain
    assert registered["verified"] is False
    assert {entry["provider"] for entry in registered["providers"]} == {"SENDGRID", "RESEND"}
    for entry in registered["providers"]:
        assert entry["records"], entry
        assert all(record["host"].endswith(domain) for record in entry["records"])
    to = f"reader-{uuid.uuid4().hex[:8]}@example.com"
    email = {"to": to, "subject": "From our domain", "body": "<p>hi</p>", "from": f"news@{domain}"}
    assert error_code(client.call("POST", "/notifications/email", email), 400) == "from_not_allowed"

    verified = data(client.call("POST", f"/account/domains/{domain}/verify"), 200)
    assert verified["verified"] is True
    assert all(entry["verified"] for entry in verified["providers"])
    assert [d["verified"] for d in data(client.call("GET", "/account/domains"), 200)] == [True]

    job_id = data(client.call("POST", "/notifications/email", email), 202)["jobId"]
    other = client.call("POST", "/notifications/email", email | {"from": "news@elsewhere.example.com"})
    assert error_code(other, 400) == "from_not_allowed"

    def delivered() -> list[dict[str, Any]]:
        answer = requests.get(
            f"{local_stack.sandbox_url}/_sandbox/messages", params={"jobId": job_id}, timeout=TIMEOUT
        )
        return list(answer.json())

    message = wait_for(delivered, "the email from the verified domain")[0]
    assert message["from"].endswith(f"news@{domain}")
    assert message["recipient"] == to


def test_a_pending_domain_stays_unverified_and_cannot_send(local_stack: RunningStack) -> None:
    client = paid_tenant_with_keys(local_stack)
    domain = unique_domain("pending")

    data(client.call("POST", "/account/domains", {"domain": domain}), 201)
    verified = data(client.call("POST", f"/account/domains/{domain}/verify"), 200)

    assert verified["verified"] is False
    assert not any(entry["verified"] for entry in verified["providers"])
    email = {"to": "a@example.com", "subject": "s", "body": "<p>x</p>", "from": f"news@{domain}"}
    assert error_code(client.call("POST", "/notifications/email", email), 400) == "from_not_allowed"


def test_a_domain_registered_by_another_tenant_is_409_domain_taken(local_stack: RunningStack) -> None:
    """Given a domain registered by one tenant, When another tenant registers it too, Then it gets
    409 domain_taken and the domain stays the first tenant's alone."""
    owner = paid_tenant_with_keys(local_stack)
    rival = paid_tenant_with_keys(local_stack)
    domain = unique_domain()
    data(owner.call("POST", "/account/domains", {"domain": domain}), 201)

    taken = rival.call("POST", "/account/domains", {"domain": domain})

    assert error_code(taken, 409) == "domain_taken"
    assert data(rival.call("GET", "/account/domains"), 200) == []
    assert error_code(rival.call("POST", f"/account/domains/{domain}/verify"), 404) == "domain_not_found"
    assert [d["domain"] for d in data(owner.call("GET", "/account/domains"), 200)] == [domain]


# ---------------------------------------------------------------- signing secret


def _notifykit_signatures(header: str) -> list[str]:
    return [value for key, _, value in (part.partition("=") for part in header.split(",")) if key == "v1"]


def _notifykit_expected(secret: str, timestamp: str, body: str) -> str:
    signed = f"{timestamp}.{body}".encode()
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def _verify_standard(secret: str, headers: dict[str, str], signature: str, body: str) -> None:
    """Raises unless ``signature`` alone is a valid Standard Webhooks signature by ``secret``."""
    Webhook(secret).verify(body, {**headers, "webhook-signature": signature}, json_parse=False)


def test_the_signing_secret_is_shown_once_rotates_with_overlap_and_can_be_deleted(
    local_stack: RunningStack,
) -> None:
    """Given a tenant, When it creates a signing secret, Then it gets whsec_ + base64 of 32 bytes once,
    a second create is 409 and the status shows hasSecret. When it rotates, Then a new secret comes
    with previousValidUntil about 24 h ahead, and a webhook delivered afterwards is signed by both
    secrets in both header styles (the new one last). When it deletes the secret, Then the status
    shows hasSecret false."""
    client = AccountClient(local_stack, create_tenant(local_stack).api_key)

    created = data(client.call("POST", "/account/webhook-secret"), 201)
    first = created["secret"]
    assert first.startswith("whsec_")
    assert len(base64.b64decode(first.removeprefix("whsec_"), validate=True)) == 32
    assert error_code(client.call("POST", "/account/webhook-secret"), 409) == "signing_secret_exists"
    status = data(client.call("GET", "/account/webhook-secret"), 200)
    assert status == {"hasSecret": True, "createdAt": created["createdAt"], "previousValidUntil": None}

    rotated = data(client.call("POST", "/account/webhook-secret/rotate"), 200)
    second = rotated["secret"]
    assert second.startswith("whsec_")
    assert second != first
    valid_until = datetime.fromisoformat(rotated["previousValidUntil"].replace("Z", "+00:00"))
    assert abs(valid_until - (datetime.now(UTC) + timedelta(hours=24))) < timedelta(minutes=5)
    status = data(client.call("GET", "/account/webhook-secret"), 200)
    assert (status["hasSecret"], status["previousValidUntil"]) == (True, rotated["previousValidUntil"])
    assert first not in json.dumps(status)
    assert second not in json.dumps(status)

    hook_name = f"rotation-{uuid.uuid4().hex}"
    webhook = {"url": f"{local_stack.sandbox_url}/hooks/{hook_name}", "payload": {"event": "rotated"}}
    job_id = data(client.call("POST", "/notifications/webhook", webhook), 202)["jobId"]
    hook = sandbox_hook(local_stack, hook_name)
    headers = {name.lower(): value for name, value in hook["headers"].items()}
    assert headers["webhook-id"] == job_id
    standard = headers["webhook-signature"].split(" ")
    assert len(standard) == 2
    assert all(signature.startswith("v1,") for signature in standard)
    _verify_standard(first, headers, standard[0], hook["body"])
    _verify_standard(second, headers, standard[1], hook["body"])
    notifykit = _notifykit_signatures(headers["x-webhook-signature"])
    timestamp = headers["x-webhook-timestamp"]
    assert notifykit == [
        _notifykit_expected(first, timestamp, hook["body"]),
        _notifykit_expected(second, timestamp, hook["body"]),
    ]

    assert data(client.call("DELETE", "/account/webhook-secret"), 200) == {"deleted": True}
    assert data(client.call("GET", "/account/webhook-secret"), 200)["hasSecret"] is False
    assert (
        error_code(client.call("POST", "/account/webhook-secret/rotate"), 404) == "signing_secret_not_found"
    )


# ---------------------------------------------------------------- API key rotation


def _status_with(client: AccountClient, key: str) -> int:
    return client.call("GET", "/account", key=key).status_code


# Longer than the requests made during a grace take on a busy machine; and one short to wait out.
LONG_GRACE_SECONDS = 300
SHORT_GRACE_SECONDS = 2


def _rotate(client: AccountClient, grace_seconds: int) -> tuple[str, datetime]:
    """The new key, and when the old one ends: ``grace_seconds`` after the rotation was answered,
    at most (the local stack reads this machine's clock)."""
    asked = datetime.now(UTC)
    rotated = data(client.call("POST", "/account/api-key/rotate", {"graceSeconds": grace_seconds}), 200)
    answered = datetime.now(UTC)
    valid_until = datetime.fromisoformat(rotated["previousKeyValidUntil"].replace("Z", "+00:00"))
    grace = timedelta(seconds=grace_seconds)
    # Whole milliseconds in the answer.
    assert asked + grace - timedelta(milliseconds=1) <= valid_until <= answered + grace
    return str(rotated["apiKey"]), valid_until


def test_a_rotated_key_keeps_the_old_one_during_the_grace_period(local_stack: RunningStack) -> None:
    """Given a tenant, When it rotates its API key with a grace, Then both keys work during it, and
    the old key cannot rotate again (the new key is the current one)."""
    old = create_tenant(local_stack).api_key
    client = AccountClient(local_stack, old)

    new, valid_until = _rotate(client, LONG_GRACE_SECONDS)
    assert new.startswith("hk_")
    assert new != old

    assert _status_with(client, new) == 200
    assert _status_with(client, old) == 200
    again = client.call("POST", "/account/api-key/rotate", {"graceSeconds": 0}, key=old)
    assert error_code(again, 409) == "key_rotated"
    assert datetime.now(UTC) < valid_until, "the grace ended before the test was done"


def test_once_the_grace_period_has_passed_the_old_key_is_refused(local_stack: RunningStack) -> None:
    """Given a key rotated with a short grace, When the grace has passed, Then the old key gets 401
    invalid_api_key while the new one still works."""
    old = create_tenant(local_stack).api_key
    client = AccountClient(local_stack, old)

    new, _ = _rotate(client, SHORT_GRACE_SECONDS)

    wait_for(lambda: _status_with(client, old) == 401, "the old key's refusal after its grace")
    assert error_code(client.call("GET", "/account", key=old), 401) == "invalid_api_key"
    assert _status_with(client, new) == 200


def test_a_key_rotated_without_grace_is_refused_at_once(local_stack: RunningStack) -> None:
    """Given a tenant whose key this API container has just authenticated (and cached), When it
    rotates with graceSeconds 0, Then the very next request with the old key is 401."""
    old = create_tenant(local_stack).api_key
    client = AccountClient(local_stack, old)
    assert _status_with(client, old) == 200

    rotated = data(client.call("POST", "/account/api-key/rotate", {"graceSeconds": 0}), 200)

    assert rotated["previousKeyValidUntil"] is None
    assert error_code(client.call("GET", "/account", key=old), 401) == "invalid_api_key"
    assert _status_with(client, rotated["apiKey"]) == 200


# ---------------------------------------------------------------- suppressions


def test_a_new_tenants_suppression_list_is_empty_and_unknown_addresses_are_404(
    local_stack: RunningStack,
) -> None:
    client = AccountClient(local_stack, create_tenant(local_stack).api_key)

    assert data(client.call("GET", "/account/suppressions"), 200) == []
    missing = client.call("DELETE", "/account/suppressions/nobody@example.com")
    assert error_code(missing, 404) == "suppression_not_found"
