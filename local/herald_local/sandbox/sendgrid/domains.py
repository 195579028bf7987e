"""SendGrid domain authentication (``/v3/whitelabel/domains``), as SendGrid documents it.

With ``automatic_security`` (the default) the records are three CNAMEs (``mail_cname``, ``dkim1``,
``dkim2``); without it an MX, an SPF TXT and a DKIM TXT. Validation passes unless the domain's first
label starts with ``pending``.
"""

from __future__ import annotations

import itertools
from typing import Any

from flask import Blueprint, Response, request

from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.domain_rules import dkim_public_key, found_domain, verifies
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.records import Domain
from herald_local.sandbox.core.replies import empty_reply, json_reply
from herald_local.sandbox.sendgrid.send import PROVIDER, authenticate, errors_reply

USER_ID = 7_302_051
_WL_CLUSTER = f"u{USER_ID}.wl051.sendgrid.net"
_ids = itertools.count(21_700_001)


def _error(status: int, message: str, field: str | None = None) -> Response:
    return errors_reply(status, [{"field": field, "message": message}])


def _not_found() -> Response:
    return _error(404, "authenticated domain not found")


def _record(record_type: str, host: str, data: str) -> dict[str, Any]:
    return {"valid": False, "type": record_type, "host": host, "data": data}


def _dns(body: dict[str, Any], name: str, subdomain: str) -> dict[str, dict[str, Any]]:
    selector = as_str(body.get("custom_dkim_selector"))
    first, second = (selector, f"{selector}2") if selector else ("s1", "s2")
    if body.get("automatic_security", True):
        return {
            "mail_cname": _record("cname", f"{subdomain}.{name}", _WL_CLUSTER),
            "dkim1": _record("cname", f"{first}._domainkey.{name}", f"{first}.domainkey.{_WL_CLUSTER}"),
            "dkim2": _record("cname", f"{second}._domainkey.{name}", f"{second}.domainkey.{_WL_CLUSTER}"),
        }
    return {
        "mail_server": _record("mx", f"{subdomain}.{name}", "mx.sendgrid.net."),
        "subdomain_spf": _record("txt", f"{subdomain}.{name}", "v=spf1 include:sendgrid.net ~all"),
        "dkim": _record("txt", f"m1._domainkey.{name}", f"k=rsa; t=s; p={dkim_public_key(name)}"),
    }


def _new_domain(body: dict[str, Any], name: str) -> Domain:
    domain_id = next(_ids)
    subdomain = as_str(body.get("subdomain")) or f"em{domain_id % 9000 + 1000}"
    details = {
        "id": domain_id,
        "user_id": USER_ID,
        "subdomain": subdomain,
        "domain": name,
        "username": "herald-sandbox",
        "ips": [],
        "custom_spf": bool(body.get("custom_spf", False)),
        "default": bool(body.get("default", False)),
        "legacy": False,
        "automatic_security": bool(body.get("automatic_security", True)),
        "valid": False,
        "dns": _dns(body, name, subdomain),
    }
    return Domain(str(domain_id), name, details)


def _validate(domain: Domain) -> dict[str, Any]:
    valid = verifies(domain.name)
    results: dict[str, Any] = {}
    for key, record in domain.details["dns"].items():
        record["valid"] = valid
        reason = (
            None
            if valid
            else f'Expected {record["type"].upper()} for "{record["host"]}" to match "{record["data"]}".'
        )
        results[key] = {"valid": valid, "reason": reason}
    domain.details["valid"] = valid
    return {"id": domain.details["id"], "valid": valid, "validation_results": results}


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    def found(domain_id: str) -> Domain | Response:
        return found_domain(store, PROVIDER, domain_id, authenticate(request), _not_found)

    @blueprint.post("/v3/whitelabel/domains")
    def create_domain() -> Response:
        refusal = authenticate(request)
        if refusal is not None:
            return refusal
        body = as_dict(request.get_json(force=True, silent=True))
        name = as_str(body.get("domain")).strip().lower()
        if not name:
            return _error(400, "domain is required", "domain")
        domain = _new_domain(body, name)
        store.add_domain(PROVIDER, domain)
        return json_reply(domain.details, 201)

    @blueprint.get("/v3/whitelabel/domains/<domain_id>")
    def read_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        return domain if isinstance(domain, Response) else json_reply(domain.details)

    @blueprint.post("/v3/whitelabel/domains/<domain_id>/validate")
    def validate_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        return domain if isinstance(domain, Response) else json_reply(_validate(domain))

    @blueprint.delete("/v3/whitelabel/domains/<domain_id>")
    def delete_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        if isinstance(domain, Response):
            return domain
        store.remove_domain(PROVIDER, domain_id)
        return empty_reply(204)
