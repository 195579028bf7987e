"""`herald key`: a tenant's named API keys (list, create, revoke, rotate), as the operator, who is
named in the account's audit log."""

from __future__ import annotations

import argparse
import json
from typing import Any

import msgspec

from herald.composition.operator import OperatorServices, operator_grant
from herald.domain.access import Scope
from herald.domain.clock import parse_iso
from herald.http.access_answers import Key, NewKey
from herald.http.account_answers import RotatedApiKey

SCOPES = [scope.value for scope in Scope]


def add_key_commands(groups: Any, utc_time: Any) -> None:
    key = groups.add_parser("key", help="a tenant's API keys").add_subparsers(dest="command", required=True)
    listing = key.add_parser("list", help="a tenant's keys (never their secrets)")
    listing.add_argument("--tenant", required=True)
    listing.add_argument("--json", action="store_true")
    create = key.add_parser("create", help="create a named key and print it once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--name", required=True)
    create.add_argument("--scope", action="append", choices=SCOPES, required=True, help="repeat for several")
    create.add_argument("--domain", action="append", default=[], help="a sending domain it may use (repeat)")
    create.add_argument("--expires-at", type=utc_time, help="RFC 3339 time after which it stops working")
    create.add_argument("--json", action="store_true")
    revoke = key.add_parser("revoke", help="revoke a key: its next request is refused")
    revoke.add_argument("--tenant", required=True)
    revoke.add_argument("key_id")
    rotate = key.add_parser("rotate", help="a new secret for a key, printed once")
    rotate.add_argument("tenant_id")
    rotate.add_argument("--key", help="the key's id (default: the tenant's first full key)")
    rotate.add_argument(
        "--grace-seconds",
        type=int,
        default=0,
        help="keep the old secret valid this long (default 0: it and every secret still in an "
        "earlier rotation's grace stop working now)",
    )
    rotate.add_argument("--json", action="store_true")
    key.add_parser(
        "migrate", help="after upgrading: make each tenant's key from before named keys its first named key"
    )


def key_command(args: argparse.Namespace, services: OperatorServices) -> None:
    commands = {"list": _list, "create": _create, "revoke": _revoke, "rotate": _rotate, "migrate": _migrate}
    commands[args.command](args, services)


def _list(args: argparse.Namespace, services: OperatorServices) -> None:
    keys = [Key.of(key) for key in services.keys.list(args.tenant)]
    if args.json:
        print(json.dumps(msgspec.to_builtins(keys)))
        return
    for key in keys:
        used = key.last_used_at or "never used"
        print(f"{key.id}  {key.preview}  {','.join(key.scopes):<16} {used:<24}  {key.name}")


def _create(args: argparse.Namespace, services: OperatorServices) -> None:
    issued = services.keys.create(
        args.tenant,
        operator_grant(),
        args.name,
        [Scope(scope) for scope in args.scope],
        domains=args.domain,
        expires_at=parse_iso(args.expires_at) if args.expires_at else None,
    )
    _print_new(NewKey.of(issued), args.json)


def _revoke(args: argparse.Namespace, services: OperatorServices) -> None:
    key = services.keys.revoke(args.tenant, operator_grant(), args.key_id)
    print(f"{key.key_id} ({key.name}) revoked; its next request is refused (401 invalid_api_key)")


def _rotate(args: argparse.Namespace, services: OperatorServices) -> None:
    key_id = args.key or _first_full_key(args.tenant_id, services)
    issued = services.keys.rotate(args.tenant_id, operator_grant(), key_id, args.grace_seconds)
    rotated = RotatedApiKey.of(issued)
    if args.json:
        print(json.dumps({"tenantId": args.tenant_id, "keyId": key_id, **msgspec.to_builtins(rotated)}))
        return
    print(f"tenant  {args.tenant_id}\napi key {rotated.api_key}  (shown once: store it now)")
    if rotated.previous_key_valid_until is None:
        print("old key revoked now, with every key still in an earlier rotation's grace period")
        print("the next request with a revoked key is refused (401 invalid_api_key)")
    else:
        print(f"old key valid until {rotated.previous_key_valid_until}, then revoked")


def _migrate(_args: argparse.Namespace, services: OperatorServices) -> None:
    migrated = services.migrate_keys()
    for tenant_id in migrated:
        print(f'{tenant_id}: its key is now the named key "Default key" (full)')
    print(f"{len(migrated)} tenant(s) migrated; the others had named keys already")


def _first_full_key(tenant_id: str, services: OperatorServices) -> str:
    first = next((key for key in services.keys.list(tenant_id) if Scope.FULL in key.scopes), None)
    if first is None:
        raise SystemExit(f"herald: {tenant_id} has no full key; name one with --key")
    return first.key_id


def _print_new(new: NewKey, as_json: bool) -> None:
    if as_json:
        print(json.dumps(msgspec.to_builtins(new)))
        return
    print(f"key id  {new.id}  ({new.name}: {', '.join(new.scopes)})")
    print(f"api key {new.key}  (shown once: store it now)")
