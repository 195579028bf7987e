"""Members against moto, through the real handlers and the real table: an owner invites by the
account routes (the invitation mailed through SES), the invited people sign in by code and act
with their roles, a lowered role and a removal end sessions, the last owner stays, a person
switches accounts and cannot reach another's; the member store's transactions keep an owner under
concurrent changes and write every change with its audit entry; the operator CLI's member commands."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.types import TypeDeserializer

from herald.adapters.store.member_store import DynamoMemberStore
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.access import Actor, ActorKind, Member, MemberStatus, Role, generate_id
from herald.domain.audit import AuditAction, entry
from herald.domain.clock import iso, utc_now
from herald.services.outcomes import MemberChanged
from herald_cli.main import main
from herald_harness.in_moto import HeraldInMoto, client, herald_in_moto
from herald_local.config import STACK_NAME
from tests.integration.test_console_moto import last_code, mail_to, session_of, sign_up

OWNER = "owner@acme.example"


@pytest.fixture
def herald(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeraldInMoto]:
    with herald_in_moto(monkeypatch) as running:
        yield running


def by_session(herald: HeraldInMoto, cookie: str) -> dict[str, str]:
    return {"cookie": cookie, "origin": herald.origin}


def sign_in(herald: HeraldInMoto, email: str) -> str:
    origin = {"origin": herald.origin}
    assert herald.api("POST", "/api/v1/signin", {"email": email}, headers=origin).status == 202
    answer = herald.api(
        "POST", "/api/v1/signin/verify", {"email": email, "code": last_code(email)}, headers=origin
    )
    assert answer.status == 200, answer.text
    return session_of(answer)


def invite(herald: HeraldInMoto, cookie: str, email: str, role: str) -> dict[str, Any]:
    answer = herald.api(
        "POST", "/api/v1/account/members", {"email": email, "role": role}, headers=by_session(herald, cookie)
    )
    assert answer.status == 201, answer.text
    data: dict[str, Any] = answer.data
    return data


def items(herald: HeraldInMoto, prefix: str) -> list[dict[str, Any]]:
    raw = client("dynamodb").scan(TableName=herald.topology.outputs["TableName"])["Items"]
    found = [{name: TypeDeserializer().deserialize(value) for name, value in item.items()} for item in raw]
    return [item for item in found if str(item["pk"]).startswith(prefix)]


def audit_actions(herald: HeraldInMoto, tenant_id: str) -> list[str]:
    return [
        item["action"] for item in sorted(items(herald, f"AUDIT#{tenant_id}"), key=lambda item: item["sk"])
    ]


def test_invited_people_sign_in_and_act_with_their_roles_until_lowered_or_removed(
    herald: HeraldInMoto,
) -> None:
    owner, signed_up = sign_up(herald, OWNER)
    tenant_id = signed_up["tenantId"]
    dev = invite(herald, owner, "dev@example.com", "developer")
    viewer = invite(herald, owner, "viewer@example.com", "viewer")
    assert (dev["role"], dev["status"], dev["invitedBy"], dev["invitationSent"]) == (
        "developer",
        "invited",
        OWNER,
        True,
    )
    mail = mail_to("dev@example.com")[-1]
    assert mail.subject == 'You are invited to "Acme" on Herald'
    assert f'{OWNER} invited you to the Herald account "Acme" as a developer.' in mail.body
    assert f"{herald.origin}/console" in mail.body
    twice = herald.api(
        "POST",
        "/api/v1/account/members",
        {"email": "dev@example.com", "role": "viewer"},
        headers=by_session(herald, owner),
    )
    assert (twice.status, twice.body["code"], twice.body["error"]) == (
        409,
        "member_exists",
        "dev@example.com is already a member of this account or invited to it.",
    )

    dev_session, viewer_session = sign_in(herald, "dev@example.com"), sign_in(herald, "viewer@example.com")
    listed = herald.api("GET", "/api/v1/account/members", headers={"cookie": owner}).data
    assert [(m["email"], m["role"], m["status"]) for m in listed] == [
        (OWNER, "owner", "active"),
        ("dev@example.com", "developer", "active"),
        ("viewer@example.com", "viewer", "active"),
    ]
    assert herald.api("GET", "/api/v1/account", headers={"cookie": viewer_session}).status == 200
    refused = herald.api(
        "POST",
        "/api/v1/account/keys",
        {"name": "CI", "scopes": ["send"]},
        headers=by_session(herald, viewer_session),
    )
    assert (refused.status, refused.body["code"], refused.body["error"]) == (
        403,
        "insufficient_scope",
        "This request needs the developer role or higher (the manage scope); your role is viewer.",
    )
    made = herald.api(
        "POST",
        "/api/v1/account/keys",
        {"name": "CI", "scopes": ["send"]},
        headers=by_session(herald, dev_session),
    )
    assert made.status == 201, made.text

    lowered = herald.api(
        "PATCH", f"/api/v1/account/members/{dev['id']}", {"role": "viewer"}, headers=by_session(herald, owner)
    )
    assert (lowered.status, lowered.data["role"]) == (200, "viewer")
    ended = herald.api("GET", "/api/v1/account", headers={"cookie": dev_session})
    assert (ended.status, ended.body["code"], ended.body["error"]) == (
        401,
        "invalid_session",
        "The console session has ended; sign in again.",
    )
    removed = herald.api(
        "DELETE", f"/api/v1/account/members/{viewer['id']}", headers=by_session(herald, owner)
    )
    assert removed.status == 200
    assert herald.api("GET", "/api/v1/account", headers={"cookie": viewer_session}).status == 401
    assert audit_actions(herald, tenant_id) == [
        "tenant.created",
        "member.invited",
        "member.invited",
        "member.joined",
        "member.joined",
        "key.created",
        "member.role_changed",
        "member.removed",
    ]
    # The person's list of accounts follows: the removed viewer has none, the developer's role is copied.
    persons = {item["memberId"]: item for item in items(herald, "PERSON#")}
    assert viewer["id"] not in persons
    assert (persons[dev["id"]]["role"], persons[dev["id"]]["status"]) == ("viewer", "active")


def test_the_last_owner_can_neither_leave_nor_be_demoted_and_an_admin_cannot_touch_an_owner(
    herald: HeraldInMoto,
) -> None:
    owner, _ = sign_up(herald, OWNER)
    me = next(m for m in herald.api("GET", "/api/v1/account/members", headers={"cookie": owner}).data)
    for method, body in (("DELETE", None), ("PATCH", {"role": "admin"})):
        answer = herald.api(
            method, f"/api/v1/account/members/{me['id']}", body, headers=by_session(herald, owner)
        )
        assert (answer.status, answer.body["code"], answer.body["error"]) == (
            409,
            "last_owner",
            f"{OWNER} is the account's last owner; make another member owner first.",
        )
    invite(herald, owner, "admin@example.com", "admin")
    admin = sign_in(herald, "admin@example.com")
    for method, body in (("DELETE", None), ("PATCH", {"role": "viewer"})):
        answer = herald.api(
            method, f"/api/v1/account/members/{me['id']}", body, headers=by_session(herald, admin)
        )
        assert (answer.status, answer.body["code"]) == (403, "insufficient_scope")
        assert answer.body["error"].endswith("Only an owner may make, change or remove an owner.")
    as_owner = herald.api(
        "POST",
        "/api/v1/account/members",
        {"email": "boss@example.com", "role": "owner"},
        headers=by_session(herald, admin),
    )
    assert (as_owner.status, as_owner.body["error"]) == (
        403,
        "You cannot invite someone as an owner: the owner role allows billing, ownership, which you lack. "
        "Only an owner may make, change or remove an owner.",
    )


def test_a_person_switches_between_their_accounts_and_never_into_anothers(herald: HeraldInMoto) -> None:
    alpha, alpha_up = sign_up(herald, "alpha@example.com")
    _, beta_up = sign_up(herald, "beta@example.com")
    invite(herald, alpha, "beta@example.com", "developer")
    beta = sign_in(herald, "beta@example.com")  # opens beta's own account first
    listed = herald.api("GET", "/api/v1/console/accounts", headers={"cookie": beta})
    assert listed.status == 200
    assert sorted((a["tenantId"], a["role"], a["current"]) for a in listed.data) == sorted(
        [(alpha_up["tenantId"], "developer", False), (beta_up["tenantId"], "owner", True)]
    )
    switched = herald.api(
        "POST", "/api/v1/console/switch", {"tenantId": alpha_up["tenantId"]}, headers=by_session(herald, beta)
    )
    assert (switched.status, switched.data["tenantId"]) == (200, alpha_up["tenantId"])
    in_alpha = session_of(switched)
    assert (
        herald.api("GET", "/api/v1/account", headers={"cookie": in_alpha}).data["tenantId"]
        == alpha_up["tenantId"]
    )
    assert herald.api("GET", "/api/v1/account", headers={"cookie": beta}).status == 401  # the old one ended

    # alpha's owner is no member of beta's account: neither an existing id nor a made-up one opens it.
    for target in (beta_up["tenantId"], "00000000-0000-0000-0000-000000000000"):
        attack = herald.api(
            "POST", "/api/v1/console/switch", {"tenantId": target}, headers=by_session(herald, alpha)
        )
        assert (attack.status, attack.body["code"], attack.body["error"]) == (
            404,
            "tenant_not_found",
            f"You are not a member of an account {target}.",
        )
        assert attack.cookies == []
    mine = herald.api("GET", "/api/v1/console/accounts", headers={"cookie": alpha}).data
    assert [a["tenantId"] for a in mine] == [alpha_up["tenantId"]]
    # A switch from another origin is refused before anything is read.
    forged = herald.api(
        "POST",
        "/api/v1/console/switch",
        {"tenantId": alpha_up["tenantId"]},
        headers={"cookie": in_alpha, "origin": "https://evil.example"},
    )
    assert (forged.status, forged.body["code"]) == (403, "cross_origin_request")


def _member(email: str, role: Role) -> Member:
    now = iso(utc_now())
    return Member(generate_id("mem"), email, role, MemberStatus.ACTIVE, now, "test", now)


def test_two_owners_demoting_each_other_at_once_leave_one_owner_and_one_audit_entry(
    herald: HeraldInMoto,
) -> None:
    """Both changes were decided from the same read (two owners); the table's conditions let one
    through, and the other writes nothing, not even its audit entry."""
    _, signed_up = sign_up(herald, OWNER)
    tenant_id = signed_up["tenantId"]
    store, tenants = DynamoMemberStore(herald.table), DynamoTenantStore(herald.table)
    first = tenants.load(tenant_id).members[0]
    second = _member("second@example.com", Role.OWNER)
    actor = Actor(ActorKind.OPERATOR, "t", "operator t")
    store.invite(tenant_id, "Acme", second, _entry(tenant_id, actor, AuditAction.MEMBER_INVITED), None)
    demoted = Member(**{**_fields(second), "role": Role.VIEWER})
    store.change_role(
        tenant_id, second, demoted, _entry(tenant_id, actor, AuditAction.MEMBER_ROLE_CHANGED), first
    )
    with pytest.raises(MemberChanged):
        store.change_role(
            tenant_id,
            first,
            Member(**{**_fields(first), "role": Role.VIEWER}),
            _entry(tenant_id, actor, AuditAction.MEMBER_ROLE_CHANGED),
            second,
        )
    roles = {member.email: member.role for member in tenants.load(tenant_id).members}
    assert roles == {OWNER: Role.OWNER, "second@example.com": Role.VIEWER}
    assert audit_actions(herald, tenant_id).count("member.role_changed") == 1
    # The same address invited twice at once: the person's membership item lets one through.
    racer = Member(**{**_fields(_member("pat@example.com", Role.VIEWER)), "status": MemberStatus.INVITED})
    store.invite(tenant_id, "Acme", racer, _entry(tenant_id, actor, AuditAction.MEMBER_INVITED), None)
    with pytest.raises(MemberChanged):
        store.invite(
            tenant_id,
            "Acme",
            Member(**{**_fields(racer), "member_id": generate_id("mem")}),
            _entry(tenant_id, actor, AuditAction.MEMBER_INVITED),
            None,
        )
    assert [m.email for m in tenants.load(tenant_id).members].count("pat@example.com") == 1


def _fields(member: Member) -> dict[str, Any]:
    return {name: getattr(member, name) for name in member.__struct_fields__}


def _entry(tenant_id: str, actor: Actor, action: AuditAction) -> Any:
    return entry(tenant_id, iso(utc_now()), actor, action, "target")


def test_the_operator_lists_adds_and_removes_members_and_the_audit_log_names_them(
    herald: HeraldInMoto, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, signed_up = sign_up(herald, OWNER)
    tenant_id = signed_up["tenantId"]
    monkeypatch.setattr("getpass.getuser", lambda: "ops-jane")

    def cli(*args: str) -> tuple[int, str, str]:
        status = main(["--stack", STACK_NAME, "--region", "us-east-1", *args])
        out, err = capsys.readouterr()
        return status, out, err

    status, out, _ = cli("member", "add", "--tenant", tenant_id, "dev@example.com", "--role", "developer")
    assert status == 0
    member_id = out.split()[0]
    assert out.splitlines() == [
        f"{member_id}  dev@example.com invited to {tenant_id} as developer",
        f"no mail was sent: ask them to sign in at {herald.origin}/console with this address within 7 days",
    ]
    status, out, _ = cli("member", "list", "--tenant", tenant_id, "--json")
    assert status == 0
    assert [(row["email"], row["role"], row["status"], row["invitedBy"]) for row in json.loads(out)] == [
        (OWNER, "owner", "active", OWNER),
        ("dev@example.com", "developer", "invited", "operator ops-jane"),
    ]
    status, out, _ = cli("member", "remove", "--tenant", tenant_id, member_id)
    assert (status, out) == (
        0,
        f"{member_id}  dev@example.com removed from {tenant_id}; their next request is refused\n",
    )
    owner_id = json.loads(cli("member", "list", "--tenant", tenant_id, "--json")[1])[0]["id"]
    status, _, err = cli("member", "remove", "--tenant", tenant_id, owner_id)
    assert (status, err) == (
        1,
        f"herald: {OWNER} is the account's last owner; make another member owner first.\n",
    )
    audit = sorted(items(herald, f"AUDIT#{tenant_id}"), key=lambda item: item["sk"])[-2:]
    assert [(a["action"], a["actorKind"], a["actorId"], a["actorName"]) for a in audit] == [
        ("member.invited", "operator", "ops-jane", "operator ops-jane"),
        ("member.removed", "operator", "ops-jane", "operator ops-jane"),
    ]


def test_a_lapsed_invitation_makes_way_for_a_new_one_and_an_accepted_one_keeps_no_expiry(
    herald: HeraldInMoto,
) -> None:
    owner, signed_up = sign_up(herald, OWNER)
    tenant_id = signed_up["tenantId"]
    long_ago = "2020-01-01T00:00:00.000Z"
    lapsed = Member(generate_id("mem"), "late@example.com", Role.VIEWER, MemberStatus.INVITED, long_ago, "x")
    actor = Actor(ActorKind.OPERATOR, "t", "operator t")
    DynamoMemberStore(herald.table).invite(
        tenant_id, "Acme", lapsed, _entry(tenant_id, actor, AuditAction.MEMBER_INVITED), None
    )
    listed = herald.api("GET", "/api/v1/account/members", headers={"cookie": owner}).data
    assert [m["email"] for m in listed] == [OWNER]
    again = invite(herald, owner, "late@example.com", "developer")
    assert again["id"] != lapsed.member_id
    sign_in(herald, "late@example.com")
    members = {item["memberId"]: item for item in items(herald, f"TENANT#{tenant_id}") if "memberId" in item}
    assert lapsed.member_id not in members
    assert (members[again["id"]]["status"], "expiresAt" in members[again["id"]]) == ("active", False)
    person = next(item for item in items(herald, "PERSON#") if item["memberId"] == again["id"])
    assert (person["status"], person["role"], "expiresAt" in person) == ("active", "developer", False)
