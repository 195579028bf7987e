"""Postmark domains (``/domains``, account token), as Postmark's API has them: DomainDetails with the DKIM
TXT pair pending until verified, the Return-Path CNAME (``pm.mtasv.net``) and the deprecated SPF
pair. ``verifyDkim`` / ``verifyReturnPath`` match any path casing, as Postmark does. Verification
succeeds unless the domain's first label starts with ``pending``. An unknown id answers 422 with
ErrorCode 510 "Domain not found." (our reading of Postmark's error list)."""

from __future__ import annotations

import itertools
from typing import Any

from flask import Blueprint, Response, abort, request

from herald.domain.clock import utc_now
from herald_local.sandbox.core.context import SandboxContext
from herald_local.sandbox.core.domain_rules import dkim_public_key, found_domain, verifies
from herald_local.sandbox.core.json_fields import as_dict, as_str
from herald_local.sandbox.core.records import Domain
from herald_local.sandbox.core.replies import json_reply
from herald_local.sandbox.postmark.send import ACCOUNT_TOKEN_HEADER, PROVIDER, authenticate, error

RETURN_PATH_TARGET = "pm.mtasv.net"
_SUMMARY_FIELDS = ("ID", "Name", "SPFVerified", "DKIMVerified", "WeakDKIM", "ReturnPathDomainVerified")
_ids = itertools.count(3_150_001)


def _new_domain(name: str, return_path: str) -> Domain:
    domain_id = next(_ids)
    selector = utc_now().strftime("%Y%m%d%H%M%S") + "pm"
    details: dict[str, Any] = {
        "ID": domain_id,
        "Name": name,
        "SPFVerified": False,
        "SPFHost": name,
        "SPFTextValue": "v=spf1 a mx include:spf.mtasv.net ~all",
        "DKIMVerified": False,
        "WeakDKIM": False,
        "DKIMHost": "",
        "DKIMTextValue": "",
        "DKIMPendingHost": f"{selector}._domainkey.{name}",
        "DKIMPendingTextValue": f"k=rsa;p={dkim_public_key(name)}",
        "DKIMRevokedHost": "",
        "DKIMRevokedTextValue": "",
        "SafeToRemoveRevokedKeyFromDNS": False,
        "DKIMUpdateStatus": "Pending",
        "ReturnPathDomain": return_path,
        "ReturnPathDomainVerified": False,
        "ReturnPathDomainCNAMEValue": RETURN_PATH_TARGET,
    }
    return Domain(str(domain_id), name, details)


def _verify_dkim(domain: Domain) -> None:
    details = domain.details
    if details["DKIMVerified"] or not verifies(domain.name):
        return
    details.update(
        DKIMVerified=True,
        DKIMHost=details["DKIMPendingHost"],
        DKIMTextValue=details["DKIMPendingTextValue"],
        DKIMPendingHost="",
        DKIMPendingTextValue="",
        DKIMUpdateStatus="Verified",
    )


def _verify_return_path(domain: Domain) -> None:
    if domain.details["ReturnPathDomain"] and verifies(domain.name):
        domain.details["ReturnPathDomainVerified"] = True


def _not_found() -> Response:
    return error(422, 510, "Domain not found.")


_VERIFIERS = {"verifydkim": _verify_dkim, "verifyreturnpath": _verify_return_path}


def authenticate_account() -> Response | None:
    return authenticate(request, ACCOUNT_TOKEN_HEADER)


def add_routes(blueprint: Blueprint, context: SandboxContext) -> None:
    store = context.store

    def found(domain_id: str) -> Domain | Response:
        return found_domain(store, PROVIDER, domain_id, authenticate_account(), _not_found)

    @blueprint.get("/domains")
    def list_domains() -> Response:
        refusal = authenticate_account()
        if refusal is not None:
            return refusal
        domains = [{key: d.details[key] for key in _SUMMARY_FIELDS} for d in store.domains(PROVIDER)]
        return json_reply({"TotalCount": len(domains), "Domains": domains})

    @blueprint.post("/domains")
    def create_domain() -> Response:
        refusal = authenticate_account()
        if refusal is not None:
            return refusal
        body = as_dict(request.get_json(force=True, silent=True))
        name = as_str(body.get("Name")).strip().lower()
        if not name:
            return error(422, 300, "Invalid domain name: ''.")
        domain = _new_domain(name, as_str(body.get("ReturnPathDomain")).strip().lower())
        store.add_domain(PROVIDER, domain)
        return json_reply(domain.details)

    @blueprint.get("/domains/<domain_id>")
    def read_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        return domain if isinstance(domain, Response) else json_reply(domain.details)

    @blueprint.put("/domains/<domain_id>/<action>")
    def verify_domain(domain_id: str, action: str) -> Response:
        verifier = _VERIFIERS.get(action.lower())
        if verifier is None:
            abort(404)
        domain = found(domain_id)
        if isinstance(domain, Response):
            return domain
        verifier(domain)
        return json_reply(domain.details)

    @blueprint.delete("/domains/<domain_id>")
    def delete_domain(domain_id: str) -> Response:
        domain = found(domain_id)
        if isinstance(domain, Response):
            return domain
        store.remove_domain(PROVIDER, domain_id)
        return json_reply({"ErrorCode": 0, "Message": f"Domain {domain.name} removed."})
