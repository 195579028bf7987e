"""Resend domains (``/domains``), as Resend's API has them: an SPF MX and TXT on the return-path subdomain
(``send`` unless ``custom_return_path``) and a DKIM TXT. A new domain is ``not_started``; verifying
makes it ``verified``, or ``pending`` when its first label starts with ``pending``."""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, Response, request

from herald.domain.clock import utc_now
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.domain_rules import dkim_public_key, found_domain, verifies
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.records import Domain
from herald_local.sandbox.core.replies import json_reply
from herald_local.sandbox.resend.send import PROVIDER, error
from herald_local.sandbox.resend.send import authenticate as authenticate_send

REGIONS = ("us-east-1", "eu-west-1", "sa-east-1", "ap-northeast-1")


def _records(name: str, region: str, return_path: str) -> list[dict[str, Any]]:
    return [
        {
            "record": "SPF",
            "name": return_path,
            "type": "MX",
            "ttl": "Auto",
            "status": "not_started",
            "value": f"feedback-smtp.{region}.amazonses.com",
            "priority": 10,
        },
        {
            "record": "SPF",
            "name": return_path,
            "type": "TXT",
            "ttl": "Auto",
            "status": "not_started",
            "value": '"v=spf1 include:amazonses.com ~all"',
        },
        {
            "record": "DKIM",
            "name": "resend._domainkey",
            "type": "TXT",
            "ttl": "Auto",
            "status": "not_started",
            "value": f"p={dkim_public_key(name)}",
        },
    ]


def _new_domain(name: str, region: str, return_path: str) -> Domain:
    domain_id = str(uuid.uuid4())
    created = utc_now().isoformat(timespec="microseconds")
    details = {
        "object": "domain",
        "id": domain_id,
        "name": name,
        "status": "not_started",
        "created_at": created,
        "region": region,
        "records": _records(name, region, return_path),
    }
    return Domain(domain_id, name, details)


def _verify(domain: Domain) -> None:
    status = "verified" if verifies(domain.name) else "pending"
    domain.details["status"] = status
    for record in domain.details["records"]:
        record["status"] = status


def _summary(domain: Domain) -> dict[str, Any]:
    return {key: domain.details[key] for key in ("id", "name", "status", "created_at", "region")}


def _not_found() -> Response:
    return error(404, "not_found", "Domain not found")


def authenticate() -> Response | None:
    return authenticate_send(request, send_endpoint=False)


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    def found(domain_id: str) -> Domain | Response:
        return found_domain(store, PROVIDER, domain_id, authenticate(), _not_found)

    @blueprint.get("/domains")
    def list_domains() -> Response:
        refusal = authenticate()
        if refusal is not None:
            return refusal
        domains = [_summary(domain) for domain in store.domains(PROVIDER)]
        return json_reply({"object": "list", "has_more": False, "data": domains})

    @blueprint.post("/domains")
    def create_domain() -> Response:
        refusal = authenticate()
        if refusal is not None:
            return refusal
        body = as_dict(request.get_json(force=True, silent=True))
        name = as_str(body.get("name")).strip().lower()
        region = as_str(body.get("region")) or REGIONS[0]
        if not name:
            return error(422, "missing_required_field", "Missing `name` field.")
        if region not in REGIONS:
            return error(
                422, "validation_error", f"Invalid region. Region must be one of: {', '.join(REGIONS)}."
            )
        domain = _new_domain(name, region, as_str(body.get("custom_return_path")) or "send")
        store.add_domain(PROVIDER, domain)
        return json_reply(domain.details, 201)

    @blueprint.get("/domains/<domain_id>")
    def read_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        return domain if isinstance(domain, Response) else json_reply(domain.details)

    @blueprint.post("/domains/<domain_id>/verify")
    def verify_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        if isinstance(domain, Response):
            return domain
        _verify(domain)
        return json_reply({"object": "domain", "id": domain.id})

    @blueprint.delete("/domains/<domain_id>")
    def delete_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        if isinstance(domain, Response):
            return domain
        store.remove_domain(PROVIDER, domain_id)
        return json_reply({"object": "domain", "id": domain.id, "deleted": True})
