"""herald: the operator CLI (tenants, plans, limits, API keys, members, the dead-letter queue, any
tenant's job, a tenant's audit log, scheduled functions). Its changes are recorded in the tenant's
audit log as the operator's: the OS user running it."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import msgspec

from herald.composition.operator import MissingOutput, OperatorServices, operator_grant
from herald.domain.access import Actor, Member, Role
from herald.domain.audit import MAX_AUDIT_PAGE, AuditEntry
from herald.domain.clock import InvalidTime, iso, parse_timestamp
from herald.domain.errors import DependencyError, ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.http.answers import Job
from herald.observability import logger
from herald.services.audit import audit_action
from herald.services.job_queries import operator_job
from herald.services.outcomes import TenantNotFound
from herald.services.tenants import IssuedKey
from herald_cli.keys import add_key_commands, key_command
from herald_cli.operations import dead_letter_command, show_job
from herald_cli.schedules import run_deployed, run_local
from herald_cli.target import TargetError, deployed_target, local_target
from herald_cli.tenant_view import add_tenant_view_commands, resume_sending, show_tenant
from herald_local.state import add_local_dir_option

PLANS = [plan.value for plan in Plan]


def utc_time(value: str) -> str:
    """An RFC 3339 date-time with an offset, as the dead-letter copies note theirs (UTC)."""
    try:
        return iso(parse_timestamp(value))
    except InvalidTime as exc:
        raise argparse.ArgumentTypeError(f"{value}: {exc}") from exc


def operator() -> Actor:
    """Who the audit log names for this CLI's changes: the OS user running it."""
    return operator_grant().actor


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="herald",
        description="Operate a Herald stack: the running local stack (`make run`) unless --stack is given.",
    )
    parser.add_argument(
        "--stack", help="deployed CloudFormation stack name (default: the running local stack)"
    )
    add_local_dir_option(parser)
    parser.add_argument("--region", help="AWS region of --stack")
    groups = parser.add_subparsers(dest="group", required=True)

    tenant = groups.add_parser("tenant", help="tenants").add_subparsers(dest="command", required=True)
    create = tenant.add_parser("create", help="create a tenant and print its API key once")
    create.add_argument("--name", required=True)
    create.add_argument("--email", required=True)
    create.add_argument("--plan", choices=PLANS, default=Plan.FREE.value)
    create.add_argument("--json", action="store_true", help='print {"tenantId": ..., "apiKey": ...}')
    listing = tenant.add_parser("list", help="list tenants, oldest first")
    listing.add_argument("--json", action="store_true")
    set_plan = tenant.add_parser("set-plan", help="change a tenant's plan")
    set_plan.add_argument("tenant_id")
    set_plan.add_argument("plan", choices=PLANS)
    for name, text in (("disable", "refuse the tenant's requests (403)"), ("enable", "accept them again")):
        tenant.add_parser(name, help=text).add_argument("tenant_id")
    limit = tenant.add_parser("set-limit", help="override the plan's monthly quota or per-minute rate limit")
    limit.add_argument("tenant_id")
    limit.add_argument(
        "quota", nargs="?", type=int, help="jobs per billing period instead of the plan's quota"
    )
    limit.add_argument("--clear", action="store_true", help="back to the plan's quota")
    limit.add_argument("--rate", type=int, help="requests per minute instead of the plan's rate limit")
    limit.add_argument("--clear-rate", action="store_true", help="back to the plan's rate limit")
    add_tenant_view_commands(tenant)

    add_key_commands(groups, utc_time)

    _member_parsers(groups)

    dlq = groups.add_parser("dlq", help="the dead-letter queue").add_subparsers(dest="command", required=True)
    dlq_list = dlq.add_parser("list", help="what the dead-letter queue holds, oldest first")
    dlq_list.add_argument("--limit", type=int, default=100, help="at most this many messages (default 100)")
    dlq_list.add_argument("--json", action="store_true")
    dlq_show = dlq.add_parser("show", help="one job's dead-letter copies (or one message, by its id)")
    dlq_show.add_argument("id", help="a job id, or a dead-letter message id")
    dlq_show.add_argument("--json", action="store_true")
    redrive = dlq.add_parser(
        "redrive", help="queue failed jobs again with a fresh attempt budget and delete their copies"
    )
    which = redrive.add_mutually_exclusive_group(required=True)
    which.add_argument("--job", metavar="ID", help="the job to redrive")
    which.add_argument("--all", action="store_true", help="every job in the dead-letter queue")
    which.add_argument(
        "--since",
        metavar="TIME",
        type=utc_time,
        help="the jobs that failed at or after this ISO-8601 time (e.g. 2026-12-01T09:00:00Z)",
    )
    redrive.add_argument("--json", action="store_true")

    jobs = groups.add_parser("jobs", help="any tenant's jobs").add_subparsers(dest="command", required=True)
    job_show = jobs.add_parser("show", help="a job's document, whichever tenant it belongs to")
    job_show.add_argument("id")
    job_show.add_argument("--tenant", help="its tenant id (without it, every tenant is looked through)")
    job_show.add_argument("--json", action="store_true")

    _add_audit(groups)
    schedules = groups.add_parser("schedules", help="scheduled functions")
    run = schedules.add_subparsers(dest="command", required=True).add_parser(
        "run", help="run a scheduled function now (e.g. QuotaResetFunction)"
    )
    run.add_argument("function", help="the function's logical id in template.yaml")
    return parser


def _member_parsers(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    member = groups.add_parser("member", help="a tenant's members").add_subparsers(
        dest="command", required=True
    )
    listing = member.add_parser("list", help="the members and pending invitations, oldest first")
    add = member.add_parser(
        "add", help="invite a person with a role (they accept by signing in to the console; no mail is sent)"
    )
    add.add_argument("email")
    add.add_argument("--role", required=True, choices=[role.value for role in Role])
    remove = member.add_parser("remove", help="remove a member or cancel an invitation")
    remove.add_argument("member_id")
    for command in (listing, add, remove):
        command.add_argument("--tenant", required=True, help="the tenant's id")
        command.add_argument("--json", action="store_true")


def _member_row(member: Member) -> dict[str, str | None]:
    return {
        "id": member.member_id,
        "email": member.email,
        "role": member.role.value,
        "status": member.status.value,
        "invitedBy": member.invited_by,
        "createdAt": member.created_at,
        "joinedAt": member.joined_at,
    }


def _print_members(members: Sequence[Member], as_json: bool) -> None:
    rows = [_member_row(member) for member in members]
    if as_json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(f"{row['id']}  {row['role']:<9} {row['status']:<7} {row['createdAt']}  {row['email']}")


def _member_list(args: argparse.Namespace, services: OperatorServices) -> None:
    _print_members(services.members.list(args.tenant), args.json)


def _member_add(args: argparse.Namespace, services: OperatorServices) -> None:
    invited = services.members.invite(args.tenant, operator_grant(), args.email, Role(args.role), "")
    if args.json:
        print(json.dumps(_member_row(invited.member)))
        return
    member = invited.member
    print(f"{member.member_id}  {member.email} invited to {args.tenant} as {member.role}")
    print(f"no mail was sent: ask them to sign in at {services.console_url} with this address within 7 days")


def _member_remove(args: argparse.Namespace, services: OperatorServices) -> None:
    member = services.members.remove(args.tenant, operator_grant(), args.member_id)
    if args.json:
        print(json.dumps(_member_row(member)))
        return
    print(f"{member.member_id}  {member.email} removed from {args.tenant}; their next request is refused")


def _add_audit(groups: Any) -> None:
    audit = groups.add_parser("audit", help="a tenant's audit log, newest first")
    audit.add_argument("--tenant", required=True, help="the tenant's id")
    audit.add_argument("--action", help="only this action (e.g. provider.added)")
    audit.add_argument("--actor", help="only what this actor did: a key's or member's id or name, exact")
    audit.add_argument(
        "--limit",
        type=int,
        default=50,
        help=f"at most this many entries (default 50, up to {MAX_AUDIT_PAGE})",
    )
    audit.add_argument("--json", action="store_true", help="one JSON object per entry, one per line")


def _print_key(issued: IssuedKey, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"tenantId": issued.tenant_id, "keyId": issued.key_id, "apiKey": issued.api_key}))
    else:
        print(f"tenant  {issued.tenant_id}\napi key {issued.api_key}  (shown once: store it now)")


def _list(services: OperatorServices, as_json: bool) -> None:
    rows = [
        {
            "tenantId": p.tenant_id,
            "name": p.name,
            "email": p.email,
            "plan": p.plan,
            "status": p.status,
            "createdAt": p.created_at,
        }
        for p in services.tenants.all_profiles()
    ]
    if as_json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(
            f"{row['tenantId']}  {row['plan']:<8} {row['status']:<9} {row['createdAt']}  {row['name']} <{row['email']}>"
        )


def _run(args: argparse.Namespace, services: OperatorServices) -> int:
    if args.group == "dlq":
        return dead_letter_command(args, services.dead_letters)
    if args.group == "audit":
        _audit(args, services)
        return 0
    if args.group == "jobs":
        owner, view = operator_job(services.jobs, services.tenants, args.id, args.tenant)
        show_job({"tenantId": owner, **msgspec.to_builtins(Job.of_view(view))}, args.json)
        return 0
    COMMANDS[(args.group, args.command)](args, services)
    return 0


def _audit(args: argparse.Namespace, services: OperatorServices) -> None:
    """Reads on page by page until ``--limit`` entries are shown or the log ends (a filtered page
    may hold fewer entries than it read)."""
    action = audit_action(args.action) if args.action else None
    wanted, shown, cursor = max(1, min(args.limit, MAX_AUDIT_PAGE)), 0, None
    while shown < wanted:
        page = services.audit.page(
            args.tenant, action=action, actor=args.actor, limit=wanted - shown, cursor=cursor
        )
        for item in page.entries:
            print(_audit_line(item, args.json))
        shown += len(page.entries)
        cursor = page.next_cursor
        if cursor is None:
            break


def _audit_line(item: AuditEntry, as_json: bool) -> str:
    actor = item.actor
    if as_json:
        return json.dumps(
            {
                "id": item.entry_id,
                "at": item.at,
                "action": item.action.value,
                "target": item.target,
                "actor": {"type": actor.kind.value, "id": actor.id, "name": actor.name},
                "ip": actor.ip,
                "details": dict(item.details),
            }
        )
    details = " ".join(f"{name}={value}" for name, value in sorted(item.details.items()))
    who = f"{actor.kind.value}:{actor.name}"
    return f"{item.at}  {item.action.value:<24} {item.target}  by {who} from {actor.ip or '-'}  {details}".rstrip()


def _create(args: argparse.Namespace, services: OperatorServices) -> None:
    _print_key(services.admin.create(args.name, args.email, args.plan, operator()), args.json)


def _set_plan(args: argparse.Namespace, services: OperatorServices) -> None:
    profile = services.admin.set_plan(args.tenant_id, args.plan, operator())
    print(f"{args.tenant_id} is now on the {profile.plan} plan")


def _set_status(args: argparse.Namespace, services: OperatorServices) -> None:
    enabling = args.command == "enable"
    profile = services.admin.set_status(args.tenant_id, active=enabling, actor=operator())
    print(f"{args.tenant_id} is now {profile.status}")
    if enabling:
        print("its next request is accepted")
    else:
        print("its next request is refused (403 tenant_disabled); its queued jobs end failed, not sent")


def _set_limit(args: argparse.Namespace, services: OperatorServices) -> None:
    quota_given, rate_given = args.quota is not None or args.clear, args.rate is not None or args.clear_rate
    if not (quota_given or rate_given) or (args.quota is not None and args.clear):
        raise HeraldError(
            "Give a quota N or --clear, and/or --rate N or --clear-rate.", ErrorCode.VALIDATION_ERROR
        )
    admin = services.admin
    profile = admin.set_quota(args.tenant_id, args.quota, operator()) if quota_given else None
    if rate_given:
        profile = admin.set_rate(args.tenant_id, args.rate, operator())
    assert profile is not None
    quota = "the plan's" if profile.quota_limit is None else str(profile.quota_limit)
    rate = "the plan's" if profile.rate_limit is None else f"{profile.rate_limit} per minute"
    print(f"{args.tenant_id}: monthly quota {quota}, rate limit {rate} (from its next request)")


COMMANDS: dict[tuple[str, str], Callable[[argparse.Namespace, OperatorServices], None]] = {
    ("tenant", "create"): _create,
    ("tenant", "list"): lambda args, services: _list(services, args.json),
    ("tenant", "set-plan"): _set_plan,
    ("tenant", "disable"): _set_status,
    ("tenant", "enable"): _set_status,
    ("tenant", "set-limit"): _set_limit,
    ("tenant", "show"): show_tenant,
    ("tenant", "resume-sending"): resume_sending,
    **{("key", command): key_command for command in ("list", "create", "revoke", "rotate", "migrate")},
    ("member", "list"): _member_list,
    ("member", "add"): _member_add,
    ("member", "remove"): _member_remove,
}


def _run_schedule(args: argparse.Namespace) -> int:
    try:
        if args.stack:
            result = run_deployed(args.function, args.stack, args.region)
        else:
            result = run_local(args.function, args.local_dir)
    except TargetError as exc:
        print(f"herald: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.group == "schedules":
        return _run_schedule(args)
    with _core_logs_to_stderr():
        return _main(args)


@contextmanager
def _core_logs_to_stderr() -> Iterator[None]:
    """The core's log lines go to stderr while a command runs: stdout is its answer (--json is parsed)."""
    handler = logger.registered_handler
    if not isinstance(handler, logging.StreamHandler):
        yield
        return
    previous, handler.stream = handler.stream, sys.stderr
    try:
        yield
    finally:
        handler.stream = previous


def _main(args: argparse.Namespace) -> int:
    try:
        target = deployed_target(args.stack, args.region) if args.stack else local_target(args.local_dir)
        return _run(args, OperatorServices(target.outputs, region=target.region, endpoint=target.endpoint))
    except (TargetError, MissingOutput) as exc:
        print(f"herald: {exc}", file=sys.stderr)
        return 2
    except TenantNotFound as exc:
        print(f"herald: no tenant {exc}", file=sys.stderr)
        return 1
    except (HeraldError, DependencyError) as exc:
        print(f"herald: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
