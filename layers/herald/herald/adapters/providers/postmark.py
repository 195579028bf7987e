"""Postmark: send with the server token, key checks, domains with the account token."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

import requests

from herald.adapters.provider_fields import int_field, safe_reason, text_field
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

MESSAGE_STREAM = "outbound"
DOMAINS_NEED_ACCOUNT_KEY = "Postmark domain management needs an account token"
SANDBOX_REASON = "the Postmark server is in Sandbox mode: it accepts mail but does not deliver it"
# Postmark's suggested return-path subdomain; a CNAME there aligns bounces with the domain (DMARC).
RETURN_PATH_LABEL = "pm-bounces"

INVALID_REQUEST = 300
INACTIVE_RECIPIENT = 406
RATE_LIMITED = 429
# Bad token, sender signature missing or unconfirmed, out of credits, account pending or suspended.
_PROVIDER_CODES = frozenset({10, 400, 401, 405, 412, 413})
# HTTP statuses whose meaning does not depend on the ErrorCode.
_STATUS_DECIDES = frozenset({401, 408, 413, 429})
# A 300 "Invalid email request" about the From address means the sender is not set up there.
_SENDER_PROBLEM = re.compile(r"sender signature|'from'|\bfrom address\b", re.IGNORECASE)


class PostmarkProvider(HttpProvider):
    name: Final = ProviderName.POSTMARK

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:
        response = self._call("POST", "/email", _server_auth(credential), body=email_body(email, routing))
        body = self._expect(response, credential)
        return Delivered(self.name, text_field(body, "MessageID"))

    def check_key(self, credential: Credential) -> KeyCheck:
        response = self._call("GET", "/server", _server_auth(credential))
        if not succeeded(response):
            return self._refused(response, credential, "server token")
        # The server object holds the server's API tokens in clear: read one fact, keep nothing.
        delivery_type = text_field(json_object(response), "DeliveryType")
        details: dict[str, object] = {"delivery_type": delivery_type}
        if credential.account_token:
            params = {"count": "1", "offset": "0"}
            checked = self._call("GET", "/domains", _account_auth(credential), params=params)
            if not succeeded(checked):
                return self._refused(checked, credential, "account token")
            details["account_token"] = True
        reason = SANDBOX_REASON if delivery_type == "Sandbox" else None
        return KeyCheck(valid=True, reason=reason, details=details)

    def register_domain(self, domain: str, credential: Credential) -> DomainRegistration:
        body = {"Name": domain, "ReturnPathDomain": f"{RETURN_PATH_LABEL}.{domain}"}
        created = self._expect(
            self._call("POST", "/domains", _account_auth(credential), body=body), credential
        )
        domain_id = int_field(created, "ID")
        if domain_id is None:
            raise unexpected_answer(self.name, "no domain id", 200)
        return DomainRegistration(
            provider=self.name,
            provider_domain_id=str(domain_id),
            records=dns_records(created),
            verified=_verified(created),
        )

    def verify_domain(self, registration_ref: str, credential: Credential) -> DomainVerification:
        auth = _account_auth(credential)
        path = _domain_path(registration_ref)
        self._expect(self._call("PUT", f"{path}/verifyDkim", auth), credential)
        # The second answer already includes the DKIM outcome of the first.
        current = self._expect(self._call("PUT", f"{path}/verifyReturnPath", auth), credential)
        return DomainVerification(verified=_verified(current), records=dns_records(current))

    def delete_domain(self, registration_ref: str, credential: Credential) -> None:
        self._delete(_domain_path(registration_ref), _account_auth(credential), credential)

    def _expect(self, response: requests.Response, credential: Credential) -> dict[str, Any]:
        body = json_object(response)
        # Postmark can also report a refusal as a 200 with a non-zero ErrorCode.
        if not succeeded(response) or int_field(body, "ErrorCode") not in {0, None}:
            raise self._failure(response, credential)
        return body

    def _refused(self, response: requests.Response, credential: Credential, what: str) -> KeyCheck:
        failure = self._failure(response, credential)
        if rejects_key(failure):
            return KeyCheck(valid=False, reason=f"the {what} was refused: {failure.reason}")
        raise failure

    def _failure(self, response: requests.Response, credential: Credential) -> ProviderFailure:
        status = response.status_code
        body = json_object(response)
        error_code = int_field(body, "ErrorCode")
        message = text_field(body, "Message") or ""
        kind = _classify(status, error_code, message)
        reason = safe_reason(message, credential.secret_values())
        if reason is None and status == 403:
            # An HTML 403 without ErrorCode comes from a network security layer in front of Postmark.
            reason = "blocked by Postmark's network security layer"
        wait = delay_header(response, "Retry-After", self._clock) if kind is FailureKind.TRANSIENT else None
        return ProviderFailure(
            self.name,
            kind,
            reason or fallback_reason(status),
            status=status,
            code=str(error_code) if error_code is not None else None,
            retry_after_seconds=wait,
            # Postmark has deactivated the address (hard bounce, complaint or manual suppression).
            suppress_recipient=kind is FailureKind.MESSAGE_PERMANENT and error_code == INACTIVE_RECIPIENT,
        )


def _classify(status: int, error_code: int | None, message: str) -> FailureKind:
    """The HTTP status is coarse at Postmark; on a 4xx (or a 200) the ErrorCode is the real reason."""
    if error_code is None or status in _STATUS_DECIDES or status >= 500 or status < 200:
        return status_kind(status)
    if error_code in _PROVIDER_CODES:
        return FailureKind.PROVIDER_PERMANENT
    if error_code == INVALID_REQUEST and _SENDER_PROBLEM.search(message):
        return FailureKind.PROVIDER_PERMANENT
    if error_code == RATE_LIMITED:
        return FailureKind.TRANSIENT
    return FailureKind.MESSAGE_PERMANENT


def email_body(email: EmailNotification, routing: Routing) -> dict[str, object]:
    body: dict[str, object] = {
        "From": sender_field(routing),
        "To": email.to,
        "Subject": email.subject,
        "HtmlBody": email.body,
    }
    if email.text:
        body["TextBody"] = email.text
    if email.reply_to:
        body["ReplyTo"] = email.reply_to
    if routing.headers:
        body["Headers"] = [{"Name": name, "Value": value} for name, value in routing.headers]
    body["Metadata"] = {JOB_ID_TAG: routing.job_id, TENANT_ID_TAG: routing.tenant_id}
    body["MessageStream"] = MESSAGE_STREAM
    if email.attachments:
        body["Attachments"] = [
            {"Name": item.filename, "Content": base64_text(content), "ContentType": item.content_type}
            for item, content in email.files()
        ]
    return body


def dns_records(domain_body: Mapping[str, Any]) -> tuple[DnsRecord, ...]:
    """Postmark gives host/value pairs, not typed records: label them here. The SPF fields are
    deprecated at Postmark (the return-path CNAME covers SPF), so they are not handed out."""
    domain = text_field(domain_body, "Name") or ""
    dkim_verified = domain_body.get("DKIMVerified") is True
    # A new key waits in the Pending pair; the plain pair is empty until it is verified.
    dkim_host = text_field(domain_body, "DKIMPendingHost") or text_field(domain_body, "DKIMHost")
    dkim_value = text_field(domain_body, "DKIMPendingTextValue") or text_field(domain_body, "DKIMTextValue")
    records = []
    if dkim_host and dkim_value:
        records.append(
            DnsRecord(
                type="TXT",
                host=qualify_host(dkim_host, domain),
                value=dkim_value,
                purpose="dkim",
                status="verified" if dkim_verified else "pending",
            )
        )
    return_path = text_field(domain_body, "ReturnPathDomain")
    target = text_field(domain_body, "ReturnPathDomainCNAMEValue")
    if return_path and target:
        records.append(
            DnsRecord(
                type="CNAME",
                host=qualify_host(return_path, domain),
                value=target,
                purpose="return-path",
                status="verified" if domain_body.get("ReturnPathDomainVerified") is True else "pending",
            )
        )
    return tuple(records)


def _verified(domain_body: Mapping[str, Any]) -> bool:
    return domain_body.get("DKIMVerified") is True and domain_body.get("ReturnPathDomainVerified") is True


def _server_auth(credential: Credential) -> dict[str, str]:
    return {"X-Postmark-Server-Token": credential.api_key}


def _account_auth(credential: Credential) -> dict[str, str]:
    if not credential.account_token:
        raise ProviderFailure(ProviderName.POSTMARK, FailureKind.PROVIDER_PERMANENT, DOMAINS_NEED_ACCOUNT_KEY)
    return {"X-Postmark-Account-Token": credential.account_token}


def _domain_path(registration_ref: str) -> str:
    return f"/domains/{quote(registration_ref, safe='')}"
