"""Rate limits, quotas and billing periods through the local stack, as a client and an operator see them."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from herald_harness.running_stack import RunningStack
from tests.e2e.clients import in_one_minute

pytestmark = pytest.mark.e2e


def _send(stack: RunningStack, key: str) -> requests.Response:
    webhook = {"url": f"{stack.sandbox_url}/hooks/limits", "payload": {"event": "limits"}}
    return requests.post(
        f"{stack.api_root}/notifications/webhook", json=webhook, headers={"X-API-Key": key}, timeout=30
    )


def _account(stack: RunningStack, key: str) -> dict[str, Any]:
    answer = requests.get(f"{stack.api_root}/account", headers={"X-API-Key": key}, timeout=30)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


def test_thirty_concurrent_requests_against_a_limit_of_five_accept_exactly_five(
    local_stack: RunningStack,
) -> None:
    def thirty_at_once(key: str) -> list[requests.Response]:
        with ThreadPoolExecutor(30) as pool:
            return list(pool.map(lambda _: _send(local_stack, key), range(30)))

    key, answers = in_one_minute(
        lambda: local_stack.create_tenant(plan="free", name="Burst5")[1], thirty_at_once
    )

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202] * 5 + [429] * 25
    for limited in (answer for answer in answers if answer.status_code == 429):
        body = limited.json()
        assert body["code"] == "rate_limit_exceeded"
        assert (
            body["error"] == f"Rate limit of 5 requests per minute exceeded; retry in {body['retryAfter']} s."
        )
        assert limited.headers["Retry-After"] == str(body["retryAfter"])
        assert 1 <= body["retryAfter"] <= 60
    assert _account(local_stack, key)["usage"] == {"emails": 0, "webhooks": 5, "total": 5}


def test_a_custom_quota_set_by_the_operator_ends_with_403_quota_exceeded(local_stack: RunningStack) -> None:
    tenant_id, key = local_stack.create_tenant(plan="free", name="Quota2")
    printed = local_stack.cli("tenant", "set-limit", tenant_id, "2")
    assert printed.startswith(f"{tenant_id}: monthly quota 2, rate limit the plan's")

    statuses = [_send(local_stack, key).status_code for _ in range(2)]
    refused = _send(local_stack, key)

    assert statuses == [202, 202]
    body = refused.json()
    period_end = _account(local_stack, key)["periodEnd"]
    assert (refused.status_code, body["code"]) == (403, "quota_exceeded")
    assert (body["usage"], body["limit"], body["resetsAt"]) == (2, 2, period_end)
    assert body["error"] == f"The monthly quota of your plan is used up (2 of 2); it resets at {period_end}."
    account = _account(local_stack, key)
    assert (account["limits"]["monthlyWebhooks"], account["retentionDays"]) == (2, 14)


def test_the_quota_reset_schedule_runs_on_demand_and_a_second_run_changes_nothing(
    local_stack: RunningStack,
) -> None:
    local_stack.create_tenant(plan="free", name="Reset")

    first = json.loads(local_stack.cli("schedules", "run", "QuotaResetFunction"))
    second = json.loads(local_stack.cli("schedules", "run", "QuotaResetFunction"))

    assert first["tenants"] >= 1
    assert first["outcomes"].get("advanced", 0) >= 1
    # Every tenant's next period end is a month away: the second run reads no tenant at all.
    assert (second["tenants"], second["outcomes"]) == (0, {})
