"""A tenant of a running local stack as its client holds one: made with the operator CLI, then
calling the API over HTTP with its own key."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import requests

from herald.domain.vendors import TENANT_PROVIDERS
from herald_harness.running_stack import RunningStack

HTTP_TIMEOUT = (3.05, 20.0)
# Every vendor of the provider table, in its order.
ALL_PROVIDERS = tuple(name.value for name in TENANT_PROVIDERS)


@dataclass(frozen=True)
class Tenant:
    api_root: str
    tenant_id: str
    api_key: str

    def call(self, method: str, path: str, body: Any = None) -> requests.Response:
        return requests.request(
            method,
            f"{self.api_root}{path}",
            json=body,
            headers={"X-API-Key": self.api_key},
            timeout=HTTP_TIMEOUT,
        )

    def send(self, route: str, body: dict[str, Any]) -> str:
        answer = self.call("POST", f"/notifications/{route}", body)
        assert answer.status_code == 202, answer.text
        return str(answer.json()["data"]["jobId"])

    def job(self, job_id: str) -> dict[str, Any]:
        answer = self.call("GET", f"/notifications/jobs/{job_id}")
        assert answer.status_code == 200, answer.text
        document: dict[str, Any] = answer.json()["data"]
        return document


def new_tenant(stack: RunningStack, providers: Sequence[str] = ALL_PROVIDERS, name: str = "E2E") -> Tenant:
    """A startup-plan tenant made with the operator CLI, with sandbox keys for ``providers`` in order."""
    tenant = Tenant(stack.api_root, *stack.create_tenant(name=name))
    for provider in providers:
        answer = tenant.call(
            "PUT", f"/account/providers/{provider}", {"apiKey": f"sandbox-{uuid.uuid4().hex}"}
        )
        assert answer.status_code == 201, answer.text
    return tenant
