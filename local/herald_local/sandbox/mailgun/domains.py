"""Mailgun domains (``/v4/domains``, and ``DELETE /v3/domains/<name>``), as Mailgun's API has them: a
domain object with its ``state`` (``unverified`` until verified, then ``active``), the sending
records (an SPF TXT, a DKIM TXT, the tracking CNAME) and the receiving MX records, each with a
``valid`` state. Verifying succeeds unless the domain's first label starts with ``pending``. Domains
go by their names; an unknown one answers 404 "Domain not found"."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from herald.domain.clock import utc_now
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.domain_rules import dkim_public_key, found_domain, verifies
from herald_local.sandbox.core.records import Domain
from herald_local.sandbox.core.replies import json_reply
from herald_local.sandbox.mailgun.send import PROVIDER, authenticate, error

_NOT_FOUND = "Domain not found"


def _sending_records(name: str) -> list[dict[str, Any]]:
    return [
        {"record_type": "TXT", "name": name, "value": "v=spf1 include:mailgun.org ~all", "valid": "unknown"},
        {
            "record_type": "TXT",
            "name": f"k1._domainkey.{name}",
            "value": f"k=rsa; p={dkim_public_key(name)}",
            "valid": "unknown",
        },
        {"record_type": "CNAME", "name": f"email.{name}", "value": "mailgun.org", "valid": "unknown"},
    ]


def _receiving_records() -> list[dict[str, Any]]:
    return [
        {"record_type": "MX", "priority": "10", "value": host, "valid": "unknown"}
        for host in ("mxa.mailgun.org", "mxb.mailgun.org")
    ]


def _new_domain(name: str) -> Domain:
    details = {
        "domain": {
            "created_at": utc_now().strftime("%a, %d %b %Y %H:%M:%S GMT"),
            "name": name,
            "smtp_login": f"postmaster@{name}",
            "spam_action": "disabled",
            "state": "unverified",
            "type": "custom",
            "web_prefix": "email",
            "wildcard": False,
        },
        "receiving_dns_records": _receiving_records(),
        "sending_dns_records": _sending_records(name),
    }
    return Domain(name, name, details)


def _verify(domain: Domain) -> None:
    if not verifies(domain.name):
        return
    domain.details["domain"]["state"] = "active"
    for record in (*domain.details["sending_dns_records"], *domain.details["receiving_dns_records"]):
        record["valid"] = "valid"


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    def found(name: str) -> Domain | Response:
        return found_domain(store, PROVIDER, name, authenticate(request), lambda: error(404, _NOT_FOUND))

    @blueprint.get("/v4/domains")
    def list_domains() -> Response:
        refusal = authenticate(request)
        if refusal is not None:
            return refusal
        items = [domain.details["domain"] for domain in store.domains(PROVIDER)]
        return json_reply({"total_count": len(items), "items": items})

    @blueprint.post("/v4/domains")
    def create_domain() -> Response:
        refusal = authenticate(request)
        if refusal is not None:
            return refusal
        name = request.form.get("name", "").strip().lower()
        if not name:
            return error(400, "Missing parameter 'name'")
        if store.domain(PROVIDER, name) is not None:
            return error(400, "This domain name is already taken")
        domain = _new_domain(name)
        store.add_domain(PROVIDER, domain)
        return json_reply({**domain.details, "message": "Domain DNS records have been created"})

    @blueprint.get("/v4/domains/<name>")
    def read_domain(name: str) -> Response:
        domain = found(name)
        return domain if isinstance(domain, Response) else json_reply(domain.details)

    @blueprint.put("/v4/domains/<name>/verify")
    def verify_domain(name: str) -> Response:
        domain = found(name)
        if isinstance(domain, Response):
            return domain
        _verify(domain)
        return json_reply({**domain.details, "message": "Domain DNS records have been updated"})

    @blueprint.delete("/v3/domains/<name>")
    def delete_domain(name: str) -> Response:
        domain = found(name)
        if isinstance(domain, Response):
            return domain
        store.remove_domain(PROVIDER, name)
        return json_reply({"message": "Domain has been deleted"})
