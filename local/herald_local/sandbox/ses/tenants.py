"""SES v2 tenants, which moto does not implement, imitated on their real REST-JSON paths so Herald's
adapter speaks to them exactly as to SES: ``CreateTenant``, ``CreateTenantResourceAssociation``,
``GetTenant``, ``ListTenants``, ``UpdateReputationEntityPolicy``,
``UpdateReputationEntityCustomerManagedStatus`` and ``GetReputationEntity`` (a tenant is the only
reputation entity imitated), and the check ``SendEmail`` makes of its ``TenantName``.

``POST /ses/_sandbox/tenants/<name>/trip`` plays SES's reputation policy finding the tenant's bounce
or complaint rate too high: the tenant is paused (a reinstatement the operator made before is
lifted, as a new finding does in SES) while every other tenant keeps sending.
``GET /ses/_sandbox/tenants`` lists them with their state.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, request

from herald_local.config import ACCOUNT_ID
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.replies import json_reply

REGION = "us-east-1"


def error(status: int, code: str, message: str) -> Response:
    return json_reply({"message": message}, status, headers={"x-amzn-ErrorType": f"{code}:"})


@dataclass
class Tenant:
    name: str
    tenant_id: str
    created: float
    resources: set[str] = field(default_factory=set)
    policy: str | None = None
    # What the operator set (UpdateReputationEntityCustomerManagedStatus).
    customer_status: str = "ENABLED"
    # An open reputation finding under the tenant's policy (set by the trip route).
    finding: bool = False

    @property
    def arn(self) -> str:
        return f"arn:aws:ses:{REGION}:{ACCOUNT_ID}:tenant/{self.name}/{self.tenant_id}"

    @property
    def sending_status(self) -> str:
        """As SES aggregates it: a finding pauses the tenant unless the operator reinstated it."""
        if self.customer_status == "DISABLED" or (self.finding and self.customer_status != "REINSTATED"):
            return "DISABLED"
        return self.customer_status

    def summary(self) -> dict[str, Any]:
        return {
            "TenantName": self.name,
            "TenantId": self.tenant_id,
            "TenantArn": self.arn,
            "CreatedTimestamp": self.created,
            "SendingStatus": self.sending_status,
        }


@dataclass
class TenantBook:
    """The imitated account's tenants (shared by every request of one sandbox)."""

    tenants: dict[str, Tenant] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def by_arn(self, arn: str) -> Tenant | None:
        return next((tenant for tenant in self.tenants.values() if tenant.arn == arn), None)

    def refusal(self, name: str | None) -> Response | None:
        """What SendEmail answers for ``TenantName`` (None: it may send)."""
        if name is None:
            return None
        tenant = self.tenants.get(name)
        if tenant is None:
            return error(404, "NotFoundException", f"Tenant {name} does not exist")
        if tenant.sending_status == "DISABLED":
            return error(400, "SendingPausedException", f"Sending is paused for tenant {name}")
        return None


def _body() -> dict[str, Any]:
    return as_dict(request.get_json(silent=True))


def _not_found(name: str) -> Response:
    return error(404, "NotFoundException", f"Tenant {name} does not exist")


def add_routes(blueprint: Blueprint, book: TenantBook) -> None:
    _tenant_routes(blueprint, book)
    _reputation_routes(blueprint, book)
    _sandbox_routes(blueprint, book)


def _tenant_routes(blueprint: Blueprint, book: TenantBook) -> None:
    @blueprint.post("/v2/email/tenants")
    def create_tenant() -> Response:
        name = as_str(_body().get("TenantName"))
        with book.lock:
            if name in book.tenants:
                return error(400, "AlreadyExistsException", f"Tenant {name} already exists")
            tenant = Tenant(name, f"tn-{uuid.uuid4().hex[:20]}", time.time())
            book.tenants[name] = tenant
        return json_reply(tenant.summary())

    @blueprint.post("/v2/email/tenants/resources")
    def associate() -> Response:
        body = _body()
        name, resource = as_str(body.get("TenantName")), as_str(body.get("ResourceArn"))
        with book.lock:
            tenant = book.tenants.get(name)
            if tenant is None:
                return _not_found(name)
            if resource in tenant.resources:
                return error(400, "AlreadyExistsException", f"{resource} is associated already")
            tenant.resources.add(resource)
        return json_reply({})

    @blueprint.post("/v2/email/tenants/get")
    def get_tenant() -> Response:
        name = as_str(_body().get("TenantName"))
        tenant = book.tenants.get(name)
        return _not_found(name) if tenant is None else json_reply({"Tenant": tenant.summary()})

    @blueprint.post("/v2/email/tenants/list")
    def list_tenants() -> Response:
        wanted = as_dict(_body().get("Filter")).get("SENDING_STATUS")
        tenants = [tenant.summary() for tenant in list(book.tenants.values())]
        return json_reply({"Tenants": [item for item in tenants if wanted in (None, item["SendingStatus"])]})


def _reputation_routes(blueprint: Blueprint, book: TenantBook) -> None:
    entity = "/v2/email/reputation/entities/RESOURCE/<path:reference>"

    @blueprint.put(f"{entity}/policy")
    def update_policy(reference: str) -> Response:
        tenant = book.by_arn(reference)
        if tenant is None:
            return error(400, "BadRequestException", f"No reputation entity {reference}")
        tenant.policy = as_str(_body().get("ReputationEntityPolicy"))
        return json_reply({})

    @blueprint.put(f"{entity}/customer-managed-status")
    def update_status(reference: str) -> Response:
        tenant = book.by_arn(reference)
        if tenant is None:
            return error(400, "BadRequestException", f"No reputation entity {reference}")
        tenant.customer_status = as_str(_body().get("SendingStatus"))
        return json_reply({})

    @blueprint.get(entity)
    def get_entity(reference: str) -> Response:
        tenant = book.by_arn(reference)
        if tenant is None:
            return error(404, "NotFoundException", f"No reputation entity {reference}")
        return json_reply(
            {
                "ReputationEntity": {
                    "ReputationEntityReference": tenant.arn,
                    "ReputationEntityType": "RESOURCE",
                    "ReputationManagementPolicy": tenant.policy,
                    "CustomerManagedStatus": {"Status": tenant.customer_status},
                    "AwsSesManagedStatus": {"Status": "ENABLED"},
                    "SendingStatusAggregate": tenant.sending_status,
                    "ReputationImpact": "HIGH" if tenant.finding else "LOW",
                }
            }
        )


def _sandbox_routes(blueprint: Blueprint, book: TenantBook) -> None:
    @blueprint.post("/_sandbox/tenants/<name>/trip")
    def trip(name: str) -> Response:
        with book.lock:
            tenant = book.tenants.get(name)
            if tenant is None:
                return _not_found(name)
            tenant.finding = True
            tenant.customer_status = "ENABLED"  # a new finding lifts an earlier reinstatement
        return json_reply(tenant.summary())

    @blueprint.get("/_sandbox/tenants")
    def tenants() -> Response:
        return json_reply(
            [
                {**tenant.summary(), "Resources": sorted(tenant.resources), "Policy": tenant.policy}
                for tenant in list(book.tenants.values())
            ]
        )
