"""``herald tenant show`` (one tenant, with its sending on the platform's SES when it is free) and
``herald tenant resume-sending`` (reinstates a free tenant SES paused for its reputation)."""

from __future__ import annotations

import argparse
import json

from herald.composition.operator import OperatorServices, operator_grant
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.plans import Plan
from herald.services.outcomes import TenantNotFound

# What each SES state means to the operator, in the words `tenant show` prints.
_SENDING_TEXT = {
    "enabled": "enabled",
    "paused": "paused by SES after too many bounces or complaints (sending_paused); "
    "`herald tenant resume-sending` reinstates it",
    "reinstated": "reinstated by the operator (SES pauses it again on a new finding)",
}


def add_tenant_view_commands(tenant: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    show = tenant.add_parser("show", help="one tenant: plan, status, limits and its SES sending (free plan)")
    show.add_argument("tenant_id")
    show.add_argument("--json", action="store_true")
    resume = tenant.add_parser(
        "resume-sending", help="reinstate a free tenant's sending that SES paused for its reputation"
    )
    resume.add_argument("tenant_id")


def _ses_sending(services: OperatorServices, tenant_id: str) -> tuple[str, str] | None:
    """(SES tenant name, sending state) of a free tenant; None before its SES tenant exists."""
    if services.ses_tenants is None:
        raise HeraldError(
            "The stack has no PlatformSenderAddress output; deploy the current template.yaml.",
            ErrorCode.VALIDATION_ERROR,
        )
    tenant = services.ses_tenants.status(tenant_id)
    return (tenant.name, tenant.sending.value) if tenant else None


def show_tenant(args: argparse.Namespace, services: OperatorServices) -> None:
    try:
        profile = services.tenants.profile(args.tenant_id)
    except TenantNotFound as exc:
        raise HeraldError(f"No tenant {args.tenant_id}.", ErrorCode.TENANT_NOT_FOUND) from exc
    ses = _ses_sending(services, profile.tenant_id) if profile.plan == Plan.FREE else None
    row = {
        "tenantId": profile.tenant_id,
        "name": profile.name,
        "email": profile.email,
        "plan": profile.plan,
        "status": profile.status,
        "createdAt": profile.created_at,
        "quotaLimit": profile.quota_limit,
        "rateLimit": profile.rate_limit,
        "sesTenant": ses[0] if ses else None,
        "sesSending": ses[1] if ses else None,
    }
    if args.json:
        print(json.dumps(row))
        return
    for name, value in row.items():
        if name != "sesSending":
            print(f"{name:<11} {'-' if value is None else value}")
    if profile.plan == Plan.FREE:
        sending = _SENDING_TEXT[ses[1]] if ses else "no SES tenant yet (its first send creates it)"
        print(f"{'sesSending':<11} {sending}")


def resume_sending(args: argparse.Namespace, services: OperatorServices) -> None:
    _ses_sending(services, args.tenant_id)  # refuses a stack without SES tenants before any change
    services.admin.resume_sending(args.tenant_id, operator_grant().actor)
    ses = _ses_sending(services, args.tenant_id)
    state = _SENDING_TEXT[ses[1]] if ses else "unknown"
    print(f"{args.tenant_id}: SES sending {state}")
