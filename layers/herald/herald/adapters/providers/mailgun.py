"""Mailgun: send with the private API key (HTTP Basic auth, user ``api``), the key check and domains.

A Mailgun account lives in its US or its EU region, each with an API of its own. A key of an EU
account is stored with ``eu:`` before it; a key without a region is the US region's.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import quote

import requests

from herald.adapters.provider_fields import safe_reason, text_field
from herald.adapters.providers.transport import (
    FilePart,
    HttpProvider,
    delay_header,
    fallback_reason,
    json_object,
    qualify_host,
    rejects_key,
    sender_field,
    status_kind,
    succeeded,
    unexpected_answer,
)
from herald.domain.notifications import EmailNotification
from herald.domain.providers import (
    JOB_ID_TAG,
    TENANT_ID_TAG,
    Credential,
    Delivered,
    DnsRecord,
    DomainRegistration,
    DomainVerification,
    FailureKind,
    KeyCheck,
    ProviderFailure,
    Routing,
)
from herald.domain.vendors import ProviderName

US, EU = "us", "eu"
# Mailgun answers 402 for an account it has suspended or that must be paid for: the key's problem.
PAYMENT_REQUIRED = 402
# What a DNS record's ``valid`` says, in Herald's words; "unknown" until Mailgun has checked.
_RECORD_STATUS: Mapping[str, str] = {"valid": "verified", "invalid": "failed"}


class MailgunProvider(HttpProvider):
    name: Final = ProviderName.MAILGUN

    def __init__(
        self,
        base_url: str,
        eu_base_url: str,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(base_url, session, clock)
        self._regions = {US: base_url, EU: eu_base_url}

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        base_url, key = self._account(credential)
        domain = routing.from_address.rpartition("@")[2]
        path = f"/v3/{quote(domain, safe='')}/messages"
        form = message_form(email, routing)
        files = attachment_parts(email)
        response = self._call("POST", path, _auth(key), form=form, files=files, base_url=base_url)
        body = self._expect(response, credential)
        return Delivered(self.name, text_field(body, "id"))

    def check_key(self, credential: Credential) -> KeyCheck:
        base_url, key = self._account(credential)
        response = self._call("GET", "/v4/domains", _auth(key), params={"limit": "1"}, base_url=base_url)
        if succeeded(response):
            return KeyCheck(valid=True, details={"region": self._region_and_key(credential)[0]})
        failure = self._failure(response, credential)
        if rejects_key(failure):
            return KeyCheck(valid=False, reason=failure.reason)
        raise failure

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration:
        base_url, key = self._account(credential)
        answer = self._call("POST", "/v4/domains", _auth(key), form={"name": domain}, base_url=base_url)
        created = self._expect(answer, credential)
        name = text_field(_domain(created), "name")
        if not name:
            raise unexpected_answer(self.name, "no domain name", answer.status_code)
        return DomainRegistration(
            provider=self.name,
            provider_domain_id=name,
            records=dns_records(created),
            verified=_active(created),
        )

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification:
        base_url, key = self._account(credential)
        path = f"/v4/domains/{quote(registration_ref, safe='')}/verify"
        current = self._expect(self._call("PUT", path, _auth(key), base_url=base_url), credential)
        return DomainVerification(verified=_active(current), records=dns_records(current))

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        base_url, key = self._account(credential)
        path = f"/v3/domains/{quote(registration_ref, safe='')}"
        self._delete(path, _auth(key), credential, base_url)

    def _account(self, credential: Credential) -> tuple[str, str]:
        """The base URL of the key's region, and the key without its region."""
        region, key = self._region_and_key(credential)
        return self._regions[region], key

    def _region_and_key(self, credential: Credential) -> tuple[str, str]:
        region, colon, key = credential.api_key.partition(":")
        return (region, key) if colon and region in self._regions else (US, credential.api_key)

    def _failure(self, response: requests.Response, credential: Credential) -> ProviderFailure:
        status = response.status_code
        kind = FailureKind.PROVIDER_PERMANENT if status == PAYMENT_REQUIRED else status_kind(status)
        # Mailgun may echo the key without its region: both spellings are kept out of the reason.
        secrets = (*credential.secret_values(), self._region_and_key(credential)[1])
        message = text_field(json_object(response), "message") or _plain_text(response)
        return ProviderFailure(
            self.name,
            kind,
            safe_reason(message, secrets) or fallback_reason(status),
            status=status,
            retry_after_seconds=delay_header(response, "Retry-After", self._clock)
            if kind is FailureKind.TRANSIENT
            else None,
        )


def message_form(email: EmailNotification, routing: Routing) -> dict[str, str]:
    """The form fields of a message: custom headers as ``h:<Name>``, Herald's ids as ``v:`` variables
    (Mailgun's events carry them back in ``user-variables``)."""
    form = {
        "from": sender_field(routing),
        "to": email.to,
        "subject": email.subject,
        "html": email.body,
    }
    if email.text:
        form["text"] = email.text
    if email.reply_to:
        form["h:Reply-To"] = email.reply_to
    form |= {f"h:{name}": value for name, value in routing.headers}
    form[f"v:{JOB_ID_TAG}"] = routing.job_id
    form[f"v:{TENANT_ID_TAG}"] = routing.tenant_id
    return form


def attachment_parts(email: EmailNotification) -> list[FilePart]:
    """Each attachment as an ``attachment`` file part: Mailgun takes files only in multipart form."""
    return [("attachment", (item.filename, content, item.content_type)) for item, content in email.files()]


def dns_records(domain_body: Mapping[str, Any]) -> tuple[DnsRecord, ...]:
    """The sending records (SPF and DKIM TXT, the tracking CNAME) and the receiving MX records."""
    domain = text_field(_domain(domain_body), "name") or ""
    entries = [
        *_entries(domain_body.get("sending_dns_records")),
        *_entries(domain_body.get("receiving_dns_records")),
    ]
    return tuple(record for entry in entries if (record := _record(entry, domain)) is not None)


def _entries(raw: object) -> list[dict[str, Any]]:
    return [entry for entry in raw if isinstance(entry, dict)] if isinstance(raw, list) else []


def _record(entry: Mapping[str, Any], domain: str) -> DnsRecord | None:
    kind, value = text_field(entry, "record_type"), text_field(entry, "value")
    if not (kind and value):
        return None
    host = text_field(entry, "name") or domain
    priority = text_field(entry, "priority") or ""
    return DnsRecord(
        type=kind.upper(),
        host=qualify_host(host, domain),
        value=value,
        purpose=_purpose(kind.upper(), host, value),
        priority=int(priority) if priority.isdigit() else None,
        status=_RECORD_STATUS.get(text_field(entry, "valid") or "", "pending"),
    )


def _purpose(kind: str, host: str, value: str) -> str:
    if kind == "MX":
        return "receiving"
    if kind == "CNAME":
        return "tracking"
    if "._domainkey." in f".{host.lower()}." or value.startswith("k=rsa"):
        return "dkim"
    return "spf" if value.lower().startswith("v=spf1") else kind.lower()


def _domain(domain_body: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = domain_body.get("domain")
    return inner if isinstance(inner, dict) else {}


def _active(domain_body: Mapping[str, Any]) -> bool:
    return text_field(_domain(domain_body), "state") == "active"


def _plain_text(response: requests.Response) -> str | None:
    """A refusal Mailgun words as plain text ("Forbidden"); an HTML page of a proxy says nothing."""
    return response.text if response.headers.get("Content-Type", "").startswith("text/plain") else None


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"api:{key}".encode()).decode("ascii")}
