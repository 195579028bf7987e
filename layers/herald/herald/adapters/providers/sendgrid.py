"""SendGrid v3: mail send, the scope check and domain authentication."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

import requests

from herald.adapters.provider_fields import safe_reason, text_field
from herald.adapters.providers.transport import (
    HttpProvider,
    base64_text,
    delay_header,
    epoch_header,
    fallback_reason,
    json_object,
    qualify_host,
    rejects_key,
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

MAIL_SEND_SCOPE = "mail.send"
# Domain authentication lives under SendGrid's historical "whitelabel" name.
DOMAIN_SCOPES = frozenset({"whitelabel.create", "whitelabel.read", "whitelabel.update", "whitelabel.delete"})

# Keys of the `dns` object of a domain authentication, by what the record does.
_DNS_PURPOSE: Mapping[str, str] = {
    "mail_cname": "return-path",
    "dkim1": "dkim",
    "dkim2": "dkim",
    "dkim": "dkim",
    "mail_server": "mx",
    "subdomain_spf": "spf",
    "domain_spf": "spf",
}


class SendGridProvider(HttpProvider):
    name: Final = ProviderName.SENDGRID

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        response = self._call("POST", "/v3/mail/send", _auth(credential), body=mail_body(email, routing))
        if not succeeded(response):
            raise self._failure(response, credential)
        # 202 has no body; the id is only in this header.
        return Delivered(self.name, response.headers.get("X-Message-Id") or None)

    def check_key(self, credential: Credential) -> KeyCheck:
        response = self._call("GET", "/v3/scopes", _auth(credential))
        if not succeeded(response):
            failure = self._failure(response, credential)
            if rejects_key(failure):
                return KeyCheck(valid=False, reason=failure.reason)
            raise failure
        raw = json_object(response).get("scopes")
        scopes = sorted(scope for scope in raw if isinstance(scope, str)) if isinstance(raw, list) else []
        domains = DOMAIN_SCOPES.issubset(scopes)
        details = {"scopes": tuple(scopes), "domain_management": domains}
        if MAIL_SEND_SCOPE not in scopes:
            return KeyCheck(valid=False, reason="the SendGrid key lacks the mail.send scope", details=details)
        note = None if domains else "the key cannot manage sending domains (no whitelabel scopes)"
        return KeyCheck(valid=True, reason=note, details=details)

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration:
        # Automatic security: three CNAMEs, so SendGrid can rotate DKIM keys without DNS changes.
        body = {"domain": domain, "automatic_security": True}
        created = self._expect(
            self._call("POST", "/v3/whitelabel/domains", _auth(credential), body=body), credential
        )
        domain_id = created.get("id")
        if not isinstance(domain_id, int | str) or isinstance(domain_id, bool) or domain_id == "":
            raise unexpected_answer(self.name, "no domain id", 201)
        return DomainRegistration(
            provider=self.name,
            provider_domain_id=str(domain_id),
            records=dns_records(created, domain),
            verified=created.get("valid") is True,
        )

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification:
        path = _domain_path(registration_ref)
        checked = self._expect(self._call("POST", f"{path}/validate", _auth(credential)), credential)
        # The validation answer has per-record verdicts but not the records; the domain has both.
        current = self._expect(self._call("GET", path, _auth(credential)), credential)
        domain = text_field(current, "domain") or ""
        return DomainVerification(verified=checked.get("valid") is True, records=dns_records(current, domain))

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        self._delete(_domain_path(registration_ref), _auth(credential), credential)

    def _failure(self, response: requests.Response, credential: Credential) -> ProviderFailure:
        status = response.status_code
        error = _first_error(json_object(response))
        message = text_field(error, "message") or ""
        kind = status_kind(status)
        # 403 is ambiguous: a missing scope or an unverified sender is the
        # key's problem, but the "too many bad requests" block lifts by itself.
        if status == 403 and "too many bad requests" in message.lower():
            kind = FailureKind.TRANSIENT
        field = text_field(error, "field")
        text = f"{message} (field {field})" if message and field else message
        return ProviderFailure(
            self.name,
            kind,
            safe_reason(text, credential.secret_values()) or fallback_reason(status),
            status=status,
            retry_after_seconds=self._wait(response) if kind is FailureKind.TRANSIENT else None,
        )

    def _wait(self, response: requests.Response) -> float | None:
        # SendGrid sends the Unix time the rate window resets, not a delay.
        reset = epoch_header(response, "X-RateLimit-Reset", self._clock)
        return reset if reset is not None else delay_header(response, "Retry-After", self._clock)


def mail_body(email: EmailNotification, routing: Routing) -> dict[str, object]:
    sender: dict[str, str] = {"email": routing.from_address}
    if routing.from_name:
        sender["name"] = routing.from_name
    body: dict[str, object] = {
        "personalizations": [
            {
                "to": [{"email": email.to}],
                "custom_args": {JOB_ID_TAG: routing.job_id, TENANT_ID_TAG: routing.tenant_id},
            }
        ],
        "from": sender,
    }
    if email.reply_to:
        body["reply_to"] = {"email": email.reply_to}
    if routing.headers:
        body["headers"] = dict(routing.headers)
    # SendGrid answers 400 unless text/plain comes before text/html.
    content = [{"type": "text/plain", "value": email.text}] if email.text else []
    content.append({"type": "text/html", "value": email.body})
    body["subject"] = email.subject
    body["content"] = content
    if email.attachments:
        body["attachments"] = [
            {
                "content": base64_text(content),
                "filename": item.filename,
                "type": item.content_type,
                "disposition": "attachment",
            }
            for item, content in email.files()
        ]
    return body


def dns_records(domain_body: Mapping[str, Any], domain: str) -> tuple[DnsRecord, ...]:
    dns = domain_body.get("dns")
    if not isinstance(dns, dict):
        return ()
    records = []
    for key, entry in dns.items():
        if not isinstance(entry, dict):
            continue
        kind, host, value = (text_field(entry, field) for field in ("type", "host", "data"))
        if not (kind and host and value):
            continue
        records.append(
            DnsRecord(
                type=kind.upper(),
                host=qualify_host(host, domain),
                value=value,
                purpose=_DNS_PURPOSE.get(key, key),
                status="verified" if entry.get("valid") is True else "pending",
            )
        )
    return tuple(records)


def _auth(credential: Credential) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential.api_key}"}


def _first_error(body: Mapping[str, Any]) -> dict[str, Any]:
    errors = body.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return errors[0]
    return {}


def _domain_path(registration_ref: str) -> str:
    # The ref is only ever an id SendGrid gave us; quoting keeps it one path segment regardless.
    return f"/v3/whitelabel/domains/{quote(registration_ref, safe='')}"
