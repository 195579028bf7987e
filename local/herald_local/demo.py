"""The demo tenant of the local stack, set up as an operator and a client would.

The operator CLI creates the tenant (it finds the stack through the state file), which claims its
address, so its owner can sign in to the console; then, with the tenant's own API key and through
the HTTP API, the tenant stores sandbox keys for every provider and creates a webhook signing
secret, which the sandbox learns so it can check signatures.
Each step that fails prints a warning and the stack stays up.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import urllib3

from herald.domain.vendors import TENANT_PROVIDERS

log = logging.getLogger(__name__)

# The demo tenant's owner signs in to the console with this address (the sandbox mailbox gets the
# code) and sees there the jobs the README's walk-through sends with the demo key. A reserved
# example domain: the sign-in takes only addresses on a real top-level domain.
DEMO_EMAIL = "demo@example.com"
DEMO_TENANT = ("Demo", DEMO_EMAIL, "startup")
_CLI_TIMEOUT_SECONDS = 60
_http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=3.0, read=30.0))


@dataclass(frozen=True)
class DemoTenant:
    tenant_id: str
    api_key: str
    # Shown in the banner and the state file, so a developer can verify the demo's webhooks.
    signing_secret: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"tenantId": self.tenant_id, "apiKey": self.api_key, "signingSecret": self.signing_secret}


def _cli() -> Path:
    return Path(sys.executable).with_name("herald")


def create_tenant(state_dir: Path) -> DemoTenant | None:
    name, email, plan = DEMO_TENANT
    command = [str(_cli()), "--local-dir", str(state_dir), "tenant", "create"]
    command += ["--name", name, "--email", email, "--plan", plan, "--json"]
    try:
        finished = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_CLI_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("demo tenant not created: `herald tenant create` could not run (%s)", exc)
        return None
    if finished.returncode != 0:
        log.warning(
            "demo tenant not created: `herald tenant create` failed: %s", finished.stderr.strip()[-500:]
        )
        return None
    try:
        created = json.loads(finished.stdout)
        return DemoTenant(str(created["tenantId"]), str(created["apiKey"]))
    except (json.JSONDecodeError, KeyError, TypeError):
        log.warning("demo tenant not created: `herald tenant create --json` printed no tenantId/apiKey")
        return None


def _call(method: str, url: str, api_key: str, body: dict[str, Any]) -> tuple[int, Any]:
    response = _http.request(
        method,
        url,
        body=json.dumps(body).encode(),
        headers={"X-API-Key": api_key, "Content-Type": "application/json"},
    )
    try:
        return response.status, json.loads(response.data or b"null")
    except json.JSONDecodeError:
        return response.status, None


def _warn_failed(step: str, status: int, answer: Any) -> None:
    code = answer.get("code") if isinstance(answer, dict) else None
    if status == 404:
        log.warning(
            "demo tenant: %s is not served yet (HTTP 404, %s); skipped", step, code or "no error code"
        )
    else:
        log.warning("demo tenant: %s answered HTTP %s (%s)", step, status, code or "no error code")


def configure(tenant: DemoTenant, api_root: str, sandbox_url: str) -> DemoTenant:
    """Sandbox provider keys and a signing secret, set through the API with the tenant's own key;
    the tenant with its signing secret (None when that step failed)."""
    try:
        _store_provider_keys(tenant, api_root)
        secret = _create_signing_secret(tenant, api_root, sandbox_url)
    except urllib3.exceptions.HTTPError as exc:
        log.warning(
            "demo tenant: the API or the sandbox did not answer (%s); setup incomplete", type(exc).__name__
        )
        return tenant
    return replace(tenant, signing_secret=secret)


def _store_provider_keys(tenant: DemoTenant, api_root: str) -> None:
    for name in TENANT_PROVIDERS:
        provider = name.value
        body = {"apiKey": sandbox_key(provider)}
        status, answer = _call("PUT", f"{api_root}/account/providers/{provider}", tenant.api_key, body)
        if status >= 300:
            _warn_failed(f"PUT /account/providers/{provider}", status, answer)


def _create_signing_secret(tenant: DemoTenant, api_root: str, sandbox_url: str) -> str | None:
    status, answer = _call("POST", f"{api_root}/account/webhook-secret", tenant.api_key, {})
    secret = answer.get("data", {}).get("secret") if isinstance(answer, dict) else None
    if status >= 300 or not isinstance(secret, str):
        _warn_failed("POST /account/webhook-secret", status, answer)
        return None
    response = _http.request(
        "POST",
        f"{sandbox_url}/_sandbox/secrets",
        body=json.dumps({"secret": secret}).encode(),
        headers={"Content-Type": "application/json"},
    )
    if response.status >= 300:
        log.warning("demo tenant: the sandbox refused the signing secret (HTTP %s)", response.status)
    return secret


def sandbox_key(provider: str) -> str:
    """The sandbox accepts keys that begin with ``sandbox-``."""
    return f"sandbox-demo-{provider.lower()}"
