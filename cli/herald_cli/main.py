"""herald: the operator CLI (tenants, plans, API keys, the dead-letter queue, any tenant's job)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from herald.composition.operator import MissingOutput, OperatorServices
from herald.domain.errors import DependencyError, HeraldError
from herald.domain.plans import Plan
from herald.observability import logger
from herald.services.job_queries import operator_job
from herald.services.ports import TenantNotFound
from herald.services.tenants import IssuedKey
from herald_cli.operations import dead_letter_command, show_job
from herald_cli.target import TargetError, deployed_target, local_target
from herald_local.state import add_local_dir_option

PLANS = [plan.value for plan in Plan]


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

    key = groups.add_parser("key", help="API keys").add_subparsers(dest="command", required=True)
    rotate = key.add_parser("rotate", help="issue a new API key and print it once")
    rotate.add_argument("tenant_id")
    rotate.add_argument("--grace-seconds", type=int, default=0, help="keep the old key valid this long")
    rotate.add_argument("--json", action="store_true")

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
    redrive.add_argument("--json", action="store_true")

    jobs = groups.add_parser("jobs", help="any tenant's jobs").add_subparsers(dest="command", required=True)
    job_show = jobs.add_parser("show", help="a job's document, whichever tenant it belongs to")
    job_show.add_argument("id")
    job_show.add_argument("--tenant", help="its tenant id (without it, every tenant is looked through)")
    job_show.add_argument("--json", action="store_true")
    return parser


def _print_key(issued: IssuedKey, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"tenantId": issued.tenant_id, "apiKey": issued.api_key}))
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
    if args.group == "jobs":
        show_job(operator_job(services.jobs, services.tenants, args.id, args.tenant), args.json)
        return 0
    _run_tenant_command(args, services)
    return 0


def _run_tenant_command(args: argparse.Namespace, services: OperatorServices) -> None:
    admin = services.admin
    if args.group == "tenant" and args.command == "create":
        _print_key(admin.create(args.name, args.email, args.plan), args.json)
    elif args.group == "tenant" and args.command == "list":
        _list(services, args.json)
    elif args.group == "tenant" and args.command == "set-plan":
        profile = admin.set_plan(args.tenant_id, args.plan)
        print(f"{args.tenant_id} is now on the {profile.plan} plan")
    elif args.group == "tenant":
        profile = admin.set_status(args.tenant_id, active=args.command == "enable")
        print(f"{args.tenant_id} is now {profile.status}")
    else:
        _print_key(admin.rotate_api_key(args.tenant_id, args.grace_seconds), args.json)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
