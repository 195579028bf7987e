"""Resend: idempotent send, the key check and domains."""

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

RESTRICTED_KEY_REASON = (
    "the Resend key is restricted to sending; Herald needs a full-access key to manage sending domains"
)

# Resend error `name`s whose class differs from what the HTTP status alone says.
_NAME_KIND: Mapping[str, FailureKind] = {
    # The same job is still being sent under this Idempotency-Key: ask again later.
    "concurrent_idempotent_requests": FailureKind.TRANSIENT,
    # The key was used with another body: repeating it can never succeed.
    "invalid_idempotent_request": FailureKind.PROVIDER_PERMANENT,
    "daily_quota_exceeded": FailureKind.TRANSIENT,
    "monthly_quota_exceeded": FailureKind.PROVIDER_PERMANENT,
}

# The `record` label of a domain's DNS records, by what the record does; the SPF label covers
# both the TXT and the bounce MX of the return-path subdomain.
_RECORD_PURPOSE: Mapping[str, str] = {
    "DKIM": "dkim",
    "SPF": "spf",
    "RECEIVING": "receiving",
    "TRACKING": "tracking",
    "TRACKINGCAA": "tracking-caa",
}
_RECORD_STATUS: Mapping[str, str] = {"verified": "verified", "failed": "failed"}


class ResendProvider(HttpProvider):
    name: Final = ProviderName.RESEND

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        # The job id as Idempotency-Key turns a repeated attempt (e.g. after a read timeout) into
        # the original answer instead of a second email, as long as the body is byte-identical.
        headers = {"Idempotency-Key": routing.job_id}
        body = email_body(email, routing)
        response = self._call("POST", "/emails", {**_auth(credential), **headers}, body=body)
        if not succeeded(response):
            raise self._failure(response, credential)
        return Delivered(self.name, text_field(json_object(response), "id"))

    def check_key(self, credential: Credential) -> KeyCheck:
        response = self._call("GET", "/domains", _auth(credential))
        if succeeded(response):
            return KeyCheck(valid=True, details={"full_access": True})
        failure = self._failure(response, credential)
        if failure.code == "restricted_api_key":
            # Valid, but a sending-only key cannot register domains, which Herald must do.
            return KeyCheck(valid=False, reason=RESTRICTED_KEY_REASON, details={"full_access": False})
        if rejects_key(failure):
            return KeyCheck(valid=False, reason=failure.reason)
        raise failure

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration:
        created = self._expect(
            self._call("POST", "/domains", _auth(credential), body={"name": domain}), credential
        )
        domain_id = text_field(created, "id")
        if not domain_id:
            raise unexpected_answer(self.name, "no domain id", 201)
        return DomainRegistration(
            provider=self.name,
            provider_domain_id=domain_id,
            records=dns_records(created, text_field(created, "name") or domain),
            verified=created.get("status") == "verified",
        )

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification:
        path = f"/domains/{quote(registration_ref, safe='')}"
        # Verification runs asynchronously at Resend; the domain read shows where it stands.
        self._expect(self._call("POST", f"{path}/verify", _auth(credential)), credential)
        current = self._expect(self._call("GET", path, _auth(credential)), credential)
        return DomainVerification(
            verified=current.get("status") == "verified",
            records=dns_records(current, text_field(current, "name") or ""),
        )

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        self._delete(f"/domains/{quote(registration_ref, safe='')}", _auth(credential), credential)

    def _failure(self, response: requests.Response, credential: Credential) -> ProviderFailure:
        status = response.status_code
        body = json_object(response)
        name = text_field(body, "name")
        message = text_field(body, "message") or ""
        kind = _classify(status, name, message)
        return ProviderFailure(
            self.name,
            kind,
            safe_reason(message, credential.secret_values()) or fallback_reason(status),
            status=status,
            code=name,
            retry_after_seconds=self._wait(response) if kind is FailureKind.TRANSIENT else None,
        )

    def _wait(self, response: requests.Response) -> float | None:
        wait = delay_header(response, "retry-after", self._clock)
        # `ratelimit-reset` is already a delay in seconds (not a Unix time as at SendGrid).
        return wait if wait is not None else delay_header(response, "ratelimit-reset", self._clock)


def _auth(credential: Credential) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential.api_key}"}


def _classify(status: int, name: str | None, message: str) -> FailureKind:
    if status == 400 and "api key is invalid" in message.lower():
        # Newer Resend answers an invalid key with 400 validation_error.
        return FailureKind.PROVIDER_PERMANENT
    named = _NAME_KIND.get(name or "")
    if status in {409, 429} and named is not None:
        return named
    if status == 409:
        # An idempotency conflict Resend did not name: resending the same body cannot help.
        return FailureKind.PROVIDER_PERMANENT
    return status_kind(status)


def email_body(email: EmailNotification, routing: Routing) -> dict[str, object]:
    """Built from the email and its job alone, never from the attempt: every retry must send the same
    bytes, or Resend rejects the repeated Idempotency-Key as a different request."""
    body: dict[str, object] = {
        "from": sender_field(routing),
        "to": [email.to],
        "subject": email.subject,
        "html": email.body,
    }
    if email.text:
        body["text"] = email.text
    if email.reply_to:
        body["reply_to"] = [email.reply_to]
    if routing.headers:
        # Signed without a time: the same job's headers are the same bytes on every attempt.
        body["headers"] = dict(routing.headers)
    body["tags"] = [
        {"name": JOB_ID_TAG, "value": routing.job_id},
        {"name": TENANT_ID_TAG, "value": routing.tenant_id},
    ]
    if email.attachments:
        body["attachments"] = [
            {"filename": item.filename, "content": base64_text(content), "content_type": item.content_type}
            for item, content in email.files()
        ]
    return body


def dns_records(domain_body: Mapping[str, Any], domain: str) -> tuple[DnsRecord, ...]:
    raw = domain_body.get("records")
    if not isinstance(raw, list):
        return ()
    records = []
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        label, kind, host, value = (text_field(entry, field) for field in ("record", "type", "name", "value"))
        if not (kind and host is not None and value):
            continue
        priority = entry.get("priority")
        records.append(
            DnsRecord(
                type=kind.upper(),
                host=qualify_host(host, domain),
                value=value,
                purpose=_purpose(label, kind),
                priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
                status=_RECORD_STATUS.get(text_field(entry, "status") or "", "pending"),
            )
        )
    return tuple(records)


def _purpose(label: str | None, kind: str) -> str:
    upper = (label or "").upper()
    if upper == "SPF" and kind.upper() == "MX":
        return "mx"
    return _RECORD_PURPOSE.get(upper, upper.lower() or kind.lower())
