"""SES v2 tenants, which moto does not implement, imitated: ``CreateTenant``,
``CreateTenantResourceAssociation``, ``GetTenant``, ``ListTenants``, ``UpdateReputationEntityPolicy``,
``UpdateReputationEntityCustomerManagedStatus`` and ``GetReputationEntity`` (a tenant is the only
reputation entity imitated), and the check ``SendEmail`` makes of its ``TenantName``.

``TenantBook`` holds the imitated account's tenants and answers each operation with the body SES
answers (or raises ``SesError``); the sandbox serves it on SES's real REST-JSON paths (the local
stack's functions reach it there), and in-process tests on moto answer the same operations from it
before botocore sends them (``herald_harness.ses_tenants``).

``POST /ses/_sandbox/tenants/<name>/trip`` plays SES's reputation policy finding the tenant's bounce
or complaint rate too high: the tenant is paused (a reinstatement the operator made before is
lifted, as a new finding does in SES) while every other tenant keeps sending.
``GET /ses/_sandbox/tenants`` lists them with their state.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, request

from herald_local.config import ACCOUNT_ID
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.replies import json_reply

REGION = "us-east-1"


class SesError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _no_tenant(name: str) -> SesError:
    return SesError(404, "NotFoundException", f"Tenant {name} does not exist")


@dataclass
class Tenant:
    name: str
    tenant_id: str
    created: float
    resources: set[str] = field(default_factory=set)
    policy: str | None = None
    # What the operator set (UpdateReputationEntityCustomerManagedStatus).
    customer_status: str = "ENABLED"
    # An open reputation finding under the tenant's policy (set by ``trip``).
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
    """The imitated account's tenants; each public method is one SES operation (or sandbox route)."""

    tenants: dict[str, Tenant] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _tenant(self, name: str) -> Tenant:
        tenant = self.tenants.get(name)
        if tenant is None:
            raise _no_tenant(name)
        return tenant

    def _entity(self, reference: str) -> Tenant:
        found = next((tenant for tenant in list(self.tenants.values()) if tenant.arn == reference), None)
        if found is None:
            raise SesError(404, "NotFoundException", f"No reputation entity {reference}")
        return found

    def create_tenant(self, body: Mapping[str, Any]) -> dict[str, Any]:
        name = as_str(body.get("TenantName"))
        with self.lock:
            if name in self.tenants:
                raise SesError(400, "AlreadyExistsException", f"Tenant {name} already exists")
            self.tenants[name] = Tenant(name, f"tn-{uuid.uuid4().hex[:20]}", time.time())
            return self.tenants[name].summary()

    def create_tenant_resource_association(self, body: Mapping[str, Any]) -> dict[str, Any]:
        resource = as_str(body.get("ResourceArn"))
        with self.lock:
            tenant = self._tenant(as_str(body.get("TenantName")))
            if resource in tenant.resources:
                raise SesError(400, "AlreadyExistsException", f"{resource} is associated already")
            tenant.resources.add(resource)
        return {}

    def get_tenant(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"Tenant": self._tenant(as_str(body.get("TenantName"))).summary()}

    def list_tenants(self, body: Mapping[str, Any]) -> dict[str, Any]:
        wanted = as_dict(body.get("Filter")).get("SENDING_STATUS")
        tenants = [tenant.summary() for tenant in list(self.tenants.values())]
        return {"Tenants": [item for item in tenants if wanted in (None, item["SendingStatus"])]}

    def update_reputation_entity_policy(self, body: Mapping[str, Any]) -> dict[str, Any]:
        self._entity(as_str(body.get("ReputationEntityReference"))).policy = as_str(
            body.get("ReputationEntityPolicy")
        )
        return {}

    def update_reputation_entity_customer_managed_status(self, body: Mapping[str, Any]) -> dict[str, Any]:
        tenant = self._entity(as_str(body.get("ReputationEntityReference")))
        tenant.customer_status = as_str(body.get("SendingStatus"))
        return {}

    def get_reputation_entity(self, body: Mapping[str, Any]) -> dict[str, Any]:
        tenant = self._entity(as_str(body.get("ReputationEntityReference")))
        entity = {
            "ReputationEntityReference": tenant.arn,
            "ReputationEntityType": "RESOURCE",
            "ReputationManagementPolicy": tenant.policy,
            "CustomerManagedStatus": {"Status": tenant.customer_status},
            "AwsSesManagedStatus": {"Status": "ENABLED"},
            "SendingStatusAggregate": tenant.sending_status,
            "ReputationImpact": "HIGH" if tenant.finding else "LOW",
        }
        return {"ReputationEntity": entity}

    def check_send(self, name: str | None) -> None:
        """What SendEmail checks of ``TenantName``: the tenant exists and is not paused."""
        if name is None:
            return
        tenant = self._tenant(name)
        if tenant.sending_status == "DISABLED":
            raise SesError(400, "SendingPausedException", f"Sending is paused for tenant {name}")

    def trip(self, name: str) -> dict[str, Any]:
        with self.lock:
            tenant = self._tenant(name)
            tenant.finding = True
            tenant.customer_status = "ENABLED"  # a new finding lifts an earlier reinstatement
            return tenant.summary()

    def listing(self) -> list[dict[str, Any]]:
        return [
            {**tenant.summary(), "Resources": sorted(tenant.resources), "Policy": tenant.policy}
            for tenant in list(self.tenants.values())
        ]


# The operations ``TenantBook`` answers, by their SES name.
OPERATIONS: Mapping[str, Callable[[TenantBook, Mapping[str, Any]], dict[str, Any]]] = {
    "CreateTenant": TenantBook.create_tenant,
    "CreateTenantResourceAssociation": TenantBook.create_tenant_resource_association,
    "GetTenant": TenantBook.get_tenant,
    "ListTenants": TenantBook.list_tenants,
    "UpdateReputationEntityPolicy": TenantBook.update_reputation_entity_policy,
    "UpdateReputationEntityCustomerManagedStatus": TenantBook.update_reputation_entity_customer_managed_status,
    "GetReputationEntity": TenantBook.get_reputation_entity,
}


def error(failure: SesError) -> Response:
    return json_reply(
        {"message": failure.message}, failure.status, headers={"x-amzn-ErrorType": f"{failure.code}:"}
    )


def _answer(operation: Callable[[], Any]) -> Response:
    try:
        return json_reply(operation())
    except SesError as failure:
        return error(failure)


def _body(**labels: str) -> dict[str, Any]:
    """The request's JSON body with its URI labels (as botocore's parameters name them)."""
    return {**as_dict(request.get_json(silent=True)), **labels}


def add_routes(blueprint: Blueprint, book: TenantBook) -> None:
    posts = {
        "/v2/email/tenants": "CreateTenant",
        "/v2/email/tenants/resources": "CreateTenantResourceAssociation",
        "/v2/email/tenants/get": "GetTenant",
        "/v2/email/tenants/list": "ListTenants",
    }
    for path, name in posts.items():
        blueprint.add_url_rule(
            path, name, lambda name=name: _answer(lambda: OPERATIONS[name](book, _body())), methods=["POST"]
        )
    entity = "/v2/email/reputation/entities/RESOURCE/<path:reference>"
    for path, name, method in (
        (f"{entity}/policy", "UpdateReputationEntityPolicy", "PUT"),
        (f"{entity}/customer-managed-status", "UpdateReputationEntityCustomerManagedStatus", "PUT"),
        (entity, "GetReputationEntity", "GET"),
    ):
        blueprint.add_url_rule(
            path,
            name,
            lambda reference, name=name: _answer(
                lambda: OPERATIONS[name](book, _body(ReputationEntityReference=reference))
            ),
            methods=[method],
        )
    blueprint.add_url_rule(
        "/_sandbox/tenants/<name>/trip",
        "trip_tenant",
        lambda name: _answer(lambda: book.trip(name)),
        methods=["POST"],
    )
    blueprint.add_url_rule(
        "/_sandbox/tenants", "list_tenants", lambda: json_reply(book.listing()), methods=["GET"]
    )
