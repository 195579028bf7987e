"""Amazon SES v2, the platform's own provider: free-plan mail goes out through it, each tenant's
through its own SES tenant (``TenantName``), so a pause for one tenant's reputation is that
tenant's alone (``herald.adapters.providers.ses_tenants``).

Tenants bring no SES key, so the ``credential`` arguments of the provider interface are ignored
here and SES offers no domain management.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from email.utils import formataddr
from typing import TYPE_CHECKING, Final

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
    NoCredentialsError,
    PartialCredentialsError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from herald.adapters.provider_fields import safe_reason
from herald.adapters.providers.ses_tenants import SesSending, SesTenants, ses_tenant_name
from herald.adapters.providers.transport import status_kind
from herald.domain.errors import DependencyError
from herald.domain.notifications import EmailNotification
from herald.domain.providers import (
    JOB_ID_TAG,
    TENANT_ID_TAG,
    Credential,
    Delivered,
    FailureKind,
    KeyCheck,
    ProviderFailure,
    Routing,
)
from herald.domain.vendors import ProviderName

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client
    from mypy_boto3_sesv2.type_defs import (
        BodyTypeDef,
        MessageTypeDef,
        SendEmailRequestTypeDef,
        SendEmailResponseTypeDef,
    )

CHARSET = "UTF-8"
# The words a paused tenant's failed job names, as endpoint_disabled names a disabled endpoint.
SENDING_PAUSED = "sending_paused"
PAUSED_REASON = (
    "SES paused this account's free-plan sending after too many bounces or complaints "
    f"({SENDING_PAUSED}); other accounts keep sending, and the operator can resume it"
)

# Error codes whose class the HTTP status alone gets wrong (most SES refusals are plain 400s).
_CODE_KIND: Mapping[str, FailureKind] = {
    "MailFromDomainNotVerifiedException": FailureKind.PROVIDER_PERMANENT,
    "AccountSuspendedException": FailureKind.PROVIDER_PERMANENT,
    # Paused until someone acts on the account; re-checked with get_account, not by retrying.
    "SendingPausedException": FailureKind.PROVIDER_PERMANENT,
    "NotFoundException": FailureKind.PROVIDER_PERMANENT,
    "TooManyRequestsException": FailureKind.TRANSIENT,
    # On SendEmail most likely the 24-hour quota: another provider now, SES again tomorrow.
    "LimitExceededException": FailureKind.TRANSIENT,
    "BadRequestException": FailureKind.MESSAGE_PERMANENT,
    # AWS common errors: the platform's own credentials or IAM policy.
    "AccessDeniedException": FailureKind.PROVIDER_PERMANENT,
    "UnrecognizedClientException": FailureKind.PROVIDER_PERMANENT,
    "InvalidClientTokenId": FailureKind.PROVIDER_PERMANENT,
    "InvalidSignatureException": FailureKind.PROVIDER_PERMANENT,
    "SignatureDoesNotMatch": FailureKind.PROVIDER_PERMANENT,
    "ExpiredTokenException": FailureKind.PROVIDER_PERMANENT,
    "ExpiredToken": FailureKind.PROVIDER_PERMANENT,
    "ThrottlingException": FailureKind.TRANSIENT,
    "Throttling": FailureKind.TRANSIENT,
    "InternalFailure": FailureKind.TRANSIENT,
    "InternalServiceErrorException": FailureKind.TRANSIENT,
    "ServiceUnavailable": FailureKind.TRANSIENT,
    "ServiceUnavailableException": FailureKind.TRANSIENT,
}


class SesProvider:
    name: Final = ProviderName.SES

    def __init__(self, client: Callable[[], SESV2Client], sender: str) -> None:
        # A factory: the client is only built when a free-plan email is actually sent.
        self._client = client
        self._sender = sender
        self._tenants = SesTenants(client, sender)

    def send(self, email: EmailNotification, routing: Routing, credential: Credential) -> Delivered:  # noqa: ARG002 - platform account
        request = self._request(email, routing)
        try:
            answer = self._ses().send_email(**request)
        except ClientError as exc:
            if _error_code(exc) != "NotFoundException" or not self._set_up(routing.tenant_id):
                raise self._failure(exc, routing.tenant_id) from exc
            # A tenant whose SES tenant sign-up could not create: set up now, then one more try.
            answer = self._send_again(request, routing.tenant_id)
        except BotoCoreError as exc:
            raise failure_from(exc) from exc
        return Delivered(self.name, answer.get("MessageId") or None)

    def _send_again(self, request: SendEmailRequestTypeDef, tenant_id: str) -> SendEmailResponseTypeDef:
        try:
            return self._ses().send_email(**request)
        except ClientError as exc:
            raise self._failure(exc, tenant_id) from exc
        except BotoCoreError as exc:
            raise failure_from(exc) from exc

    def _set_up(self, tenant_id: str) -> bool:
        try:
            self._tenants.ensure(tenant_id)
        except DependencyError:
            return False
        return True

    def _failure(self, exc: ClientError, tenant_id: str) -> ProviderFailure:
        """SES answers a paused tenant as it answers a paused account; only the tenant's status tells
        them apart (one read, on this failure only)."""
        failure = failure_from(exc)
        if failure.code != "SendingPausedException":
            return failure
        try:
            tenant = self._tenants.status(tenant_id)
        except DependencyError:
            return failure
        if tenant is None or tenant.sending is not SesSending.PAUSED:
            return failure
        return ProviderFailure(
            self.name,
            FailureKind.PROVIDER_PERMANENT,
            PAUSED_REASON,
            status=failure.status,
            code=SENDING_PAUSED,
        )

    def check_key(self, credential: Credential) -> KeyCheck:  # noqa: ARG002 - platform account
        """Whether the platform account may send now (for /health), from ``get_account``."""
        try:
            account = self._ses().get_account()
        except (ClientError, BotoCoreError) as exc:
            failure = failure_from(exc)
            if failure.kind is FailureKind.PROVIDER_PERMANENT:
                return KeyCheck(valid=False, reason=failure.reason)
            raise failure from exc
        quota = account.get("SendQuota", {})
        details: dict[str, object] = {
            "sending_enabled": account.get("SendingEnabled") is True,
            "production_access": account.get("ProductionAccessEnabled") is True,
            "enforcement_status": account.get("EnforcementStatus"),
            "max_24_hour_send": quota.get("Max24HourSend"),
            "max_send_rate": quota.get("MaxSendRate"),
            "sent_last_24_hours": quota.get("SentLast24Hours"),
        }
        if account.get("SendingEnabled") is not True:
            return KeyCheck(valid=False, reason="sending is disabled for the SES account", details=details)
        return KeyCheck(valid=True, details=details)

    def _ses(self) -> SESV2Client:
        return self._client()

    def _request(self, email: EmailNotification, routing: Routing) -> SendEmailRequestTypeDef:
        sender = self._sender
        body: BodyTypeDef = {"Html": {"Data": email.body, "Charset": CHARSET}}
        if email.text:
            body["Text"] = {"Data": email.text, "Charset": CHARSET}
        simple: MessageTypeDef = {"Subject": {"Data": email.subject, "Charset": CHARSET}, "Body": body}
        request: SendEmailRequestTypeDef = {
            "FromEmailAddress": formataddr((routing.from_name, sender)) if routing.from_name else sender,
            "Destination": {"ToAddresses": [email.to]},
            "Content": {"Simple": simple},
            "TenantName": ses_tenant_name(routing.tenant_id),
            # Also the tenant: every SES event arrives on the one platform topic.
            "EmailTags": [
                {"Name": JOB_ID_TAG, "Value": routing.job_id},
                {"Name": TENANT_ID_TAG, "Value": routing.tenant_id},
            ],
        }
        if email.reply_to:
            request["ReplyToAddresses"] = [email.reply_to]
        if routing.headers:
            simple["Headers"] = [{"Name": name, "Value": value} for name, value in routing.headers]
        if email.attachments:
            # SES v2's simple content carries attachments itself (raw bytes; botocore encodes them).
            request["Content"]["Simple"]["Attachments"] = [
                {
                    "RawContent": content,
                    "FileName": item.filename,
                    "ContentType": item.content_type,
                    "ContentDisposition": "ATTACHMENT",
                }
                for item, content in email.files()
            ]
        return request


def failure_from(exc: ClientError | BotoCoreError) -> ProviderFailure:
    """Translate a botocore error into Herald's classes, once, here."""
    ses = ProviderName.SES
    if isinstance(exc, ClientError):
        return _client_failure(exc)
    if isinstance(exc, BotoConnectionError | HTTPClientError):
        return ProviderFailure(ses, FailureKind.TRANSIENT, "could not reach SES or it did not answer in time")
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return ProviderFailure(ses, FailureKind.PROVIDER_PERMANENT, "no AWS credentials for SES")
    return ProviderFailure(ses, FailureKind.TRANSIENT, f"SES client error {type(exc).__name__}")


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code") or "")


def _client_failure(exc: ClientError) -> ProviderFailure:
    error = exc.response.get("Error", {})
    code = error.get("Code") or None
    message = error.get("Message") or ""
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if code == "MessageRejected":
        # The same code covers a virus and an unverified sender (or sandboxed recipient).
        not_verified = "not verified" in message.lower()
        kind = FailureKind.PROVIDER_PERMANENT if not_verified else FailureKind.MESSAGE_PERMANENT
    elif code is not None and code in _CODE_KIND:
        kind = _CODE_KIND[code]
    else:
        kind = status_kind(status) if status else FailureKind.TRANSIENT
    reason = safe_reason(message, ()) or f"SES refused the request ({code or 'no error code'})"
    return ProviderFailure(ProviderName.SES, kind, reason, status=status, code=code)
