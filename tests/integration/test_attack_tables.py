"""Attacks in tables, against the real ApiFunction on moto resources built from template.yaml with
the deployed rule (no local webhook origin): hostile webhook targets are refused at acceptance and
never dialled; every tenant-scoped route, given another tenant's ids, answers 404 and changes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from herald.adapters.store.account_store import DynamoAccountStore
from herald.adapters.store.suppression_store import DynamoSuppressions
from herald.adapters.store.unsubscribe_store import DynamoUnsubscribes
from herald.domain.addresses import Suppression
from herald.domain.audit import AuditAction
from herald.domain.clock import now_iso
from herald.domain.providers import SendingDomain
from herald.domain.unsubscribes import Unsubscribe, UnsubscribeSource
from herald_harness.dns import resolve_as, resolve_publicly, spy_on_connect
from herald_harness.in_moto import HeraldInMoto, harness_entry, herald_in_moto

# Names an attacker controls, answering what the attack needs.
ATTACKER_DNS = {
    "internal.attacker.test": ["10.0.0.5"],
    "loopback.attacker.test": ["127.0.0.1"],
    "metadata.attacker.test": ["169.254.169.254"],
    "ecs.attacker.test": ["169.254.170.2"],
    "v6loopback.attacker.test": ["::1"],
    "v6metadata.attacker.test": ["fd00:ec2::254"],
    "mapped.attacker.test": ["::ffff:10.0.0.1"],
    "mixed.attacker.test": ["93.184.215.14", "192.168.0.10"],
    "cgnat.attacker.test": ["100.64.0.1"],
    "azure.attacker.test": ["168.63.129.16"],
    "127.0.0.1.nip.io": ["127.0.0.1"],
}
HOSTILE_TARGETS = [
    # loopback, private, link-local, metadata, reserved: IPv4 literals in every spelling
    "https://127.0.0.1/hook",
    "https://127.1/hook",
    "https://0.0.0.0/hook",
    "https://0/hook",
    "https://2130706433/hook",
    "https://0x7f000001/hook",
    "https://017700000001/hook",
    "https://10.0.0.1/hook",
    "https://172.16.0.1/hook",
    "https://192.168.1.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://169.254.170.2/v2/credentials",
    "https://100.64.0.1/hook",
    "https://100.100.100.200/latest/meta-data",
    "https://168.63.129.16/machine",
    "https://192.0.0.1/hook",
    "https://192.0.2.1/hook",
    "https://198.18.0.1/hook",
    "https://224.0.0.1/hook",
    "https://240.0.0.1/hook",
    "https://255.255.255.255/hook",
    # IPv6 literals
    "https://[::1]/hook",
    "https://[::]/hook",
    "https://[fe80::1]/hook",
    "https://[fc00::1]/hook",
    "https://[fd00:ec2::254]/latest/meta-data",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://[64:ff9b::a9fe:a9fe]/hook",
    "https://[2001:db8::1]/hook",
    "https://[ff02::1]/hook",
    # names that resolve inward
    "https://localhost/hook",
    "https://localhost:8080/hook",
    *(f"https://{name}/hook" for name in ATTACKER_DNS),
    # schemes and forms
    "http://hooks.example.com/hook",
    "ftp://hooks.example.com/hook",
    "file:///etc/passwd",
    "gopher://127.0.0.1:25/_HELO",
    "https://user:secret@hooks.example.com/hook",
    "https://hooks.example.com@127.0.0.1/hook",
    "https:///hook",
    "https://no-such-host.invalid/hook",
]


@pytest.fixture(scope="module")
def herald() -> Iterator[HeraldInMoto]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        resolve_publicly(monkeypatch)
        resolve_as(monkeypatch, ATTACKER_DNS)
        with herald_in_moto(monkeypatch) as stack:
            yield stack


def test_the_table_holds_at_least_forty_hostile_targets() -> None:
    assert len(set(HOSTILE_TARGETS)) == len(HOSTILE_TARGETS) >= 40


def test_every_hostile_target_is_refused_at_acceptance_and_never_dialled(
    herald: HeraldInMoto, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = herald.new_key()
    dialled = spy_on_connect(monkeypatch)
    answers = {
        url: herald.api("POST", "/api/v1/notifications/webhook", {"url": url, "payload": {"x": 1}}, key=key)
        for url in HOSTILE_TARGETS
    }
    monkeypatch.undo()

    accepted = {url: answer.status for url, answer in answers.items() if answer.status != 400}
    assert accepted == {}
    assert {answer.body["code"] for answer in answers.values()} == {"url_not_allowed"}
    assert all(
        answer.body["error"].startswith("The webhook URL is not allowed: ") for answer in answers.values()
    )
    assert dialled == []
    assert herald.api("GET", "/api/v1/notifications/jobs", key=key).data["data"] == []


# ---------------------------------------------------------------- tenant isolation


@pytest.fixture(scope="module")
def owner(herald: HeraldInMoto) -> dict[str, Any]:
    """A tenant with a failed job, a provider key, a sending domain, a suppressed address and an
    unsubscribed one."""
    issued = herald.new_tenant("startup")
    email = {"to": "user@example.com", "subject": "s", "body": "<p>b</p>"}
    job_id = herald.api("POST", "/api/v1/notifications/email", email, key=issued.api_key).data["jobId"]
    DynamoSuppressions(herald.table).suppress(
        issued.tenant_id, Suppression("gone@example.com", "hard bounce", now_iso())
    )
    DynamoUnsubscribes(herald.table).record(
        issued.tenant_id, Unsubscribe("left@example.com", "news", now_iso(), UnsubscribeSource.ONE_CLICK)
    )
    DynamoAccountStore(herald.table).claim_domain(
        issued.tenant_id,
        SendingDomain("mail.owner.test", now_iso()),
        harness_entry(issued.tenant_id, AuditAction.DOMAIN_ADDED, "mail.owner.test"),
    )
    return {"key": issued.api_key, "tenant": issued.tenant_id, "job": job_id}


ISOLATED_ROUTES = [
    ("GET", "/api/v1/notifications/jobs/{job}", None, "job_not_found"),
    ("POST", "/api/v1/notifications/jobs/{job}/retry", None, "job_not_retryable"),
    ("PATCH", "/api/v1/account/providers/SENDGRID", {"priority": 1}, "provider_not_found"),
    ("DELETE", "/api/v1/account/providers/SENDGRID", None, "provider_not_found"),
    ("POST", "/api/v1/account/domains/mail.owner.test/verify", None, "domain_not_found"),
    ("DELETE", "/api/v1/account/domains/mail.owner.test", None, "domain_not_found"),
    ("DELETE", "/api/v1/account/suppressions/gone@example.com", None, "suppression_not_found"),
    ("DELETE", "/api/v1/account/unsubscribes/left@example.com?topic=news", None, "unsubscribe_not_found"),
]


@pytest.mark.parametrize("route", ISOLATED_ROUTES, ids=[f"{m} {p}" for m, p, _, _ in ISOLATED_ROUTES])
def test_another_tenants_ids_answer_404_on_every_tenant_scoped_route(
    herald: HeraldInMoto, owner: dict[str, Any], route: tuple[str, str, Any, str]
) -> None:
    method, path, body, code = route
    intruder = herald.new_tenant("startup", providers=()).api_key
    answer = herald.api(method, path.format(job=owner["job"]), body, key=intruder)
    assert (answer.status, answer.body["code"]) == (404, code), answer.body


def test_lists_show_a_tenant_only_its_own(herald: HeraldInMoto, owner: dict[str, Any]) -> None:
    intruder = herald.new_tenant("startup", providers=()).api_key
    lists = ("/api/v1/notifications/jobs", "/api/v1/account/suppressions", "/api/v1/account/domains")
    for path in (*lists, "/api/v1/account/unsubscribes", "/api/v1/account/unsubscribes?topic=news"):
        data = herald.api("GET", path, key=intruder).data
        assert (data["data"] if isinstance(data, dict) else data) == [], path
    assert herald.api("GET", "/api/v1/account/providers", key=intruder).data == []


def test_the_owners_data_is_unchanged_after_the_intrusions(
    herald: HeraldInMoto, owner: dict[str, Any]
) -> None:
    key = owner["key"]
    assert herald.api("GET", f"/api/v1/notifications/jobs/{owner['job']}", key=key).status == 200
    assert [s["email"] for s in herald.api("GET", "/api/v1/account/suppressions", key=key).data] == [
        "gone@example.com"
    ]
    assert [p["provider"] for p in herald.api("GET", "/api/v1/account/providers", key=key).data] == [
        "SENDGRID"
    ]
    unsubscribes = herald.api("GET", "/api/v1/account/unsubscribes", key=key).data["data"]
    assert [(u["email"], u["topic"]) for u in unsubscribes] == [("left@example.com", "news")]
