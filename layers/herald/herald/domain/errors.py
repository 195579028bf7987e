"""Domain errors. A service raises ``HeraldError`` with a machine code and one human sentence; the HTTP
edge (``herald.http.error_table``) is the one place that turns a code into a status."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import msgspec


class ErrorCode(StrEnum):
    """Every machine code a client can see in the error envelope."""

    VALIDATION_ERROR = "validation_error"
    INVALID_JSON = "invalid_json"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    INVALID_CURSOR = "invalid_cursor"
    IDEMPOTENCY_KEY_MISMATCH = "idempotency_key_mismatch"
    URL_NOT_ALLOWED = "url_not_allowed"
    ATTACHMENT_TOO_LARGE = "attachment_too_large"
    ATTACHMENT_UNAVAILABLE = "attachment_unavailable"
    FROM_NOT_ALLOWED = "from_not_allowed"
    PROVIDER_NOT_CONFIGURED = "provider_not_configured"
    PROVIDER_KEY_INVALID = "provider_key_invalid"
    INVALID_PRIORITY = "invalid_priority"
    SEND_AT_OUT_OF_RANGE = "send_at_out_of_range"
    UNKNOWN_PROVIDER = "unknown_provider"
    MISSING_API_KEY = "missing_api_key"
    MALFORMED_API_KEY = "malformed_api_key"
    INVALID_API_KEY = "invalid_api_key"
    INVALID_SIGNATURE = "invalid_signature"
    INVALID_SESSION = "invalid_session"
    INVALID_CODE = "invalid_code"
    PORTAL_LINK_INVALID = "portal_link_invalid"
    CROSS_ORIGIN_REQUEST = "cross_origin_request"
    PROCESSOR_NOT_AVAILABLE = "processor_not_available"
    TENANT_DISABLED = "tenant_disabled"
    PLAN_REQUIRED = "plan_required"
    PROVIDER_REQUIRED = "provider_required"
    QUOTA_EXCEEDED = "quota_exceeded"
    NOT_FOUND = "not_found"
    JOB_NOT_FOUND = "job_not_found"
    PROVIDER_NOT_FOUND = "provider_not_found"
    JOB_NOT_RETRYABLE = "job_not_retryable"
    TENANT_NOT_FOUND = "tenant_not_found"
    DOMAIN_NOT_FOUND = "domain_not_found"
    SIGNING_SECRET_NOT_FOUND = "signing_secret_not_found"
    SUPPRESSION_NOT_FOUND = "suppression_not_found"
    UNSUBSCRIBE_NOT_FOUND = "unsubscribe_not_found"
    WEBHOOK_NOT_FOUND = "webhook_not_found"
    ENDPOINT_NOT_FOUND = "endpoint_not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    DUPLICATE_REQUEST = "duplicate_request"
    JOB_NOT_CANCELLABLE = "job_not_cancellable"
    KEY_ROTATED = "key_rotated"
    INSUFFICIENT_SCOPE = "insufficient_scope"
    KEY_NOT_FOUND = "key_not_found"
    KEY_LIMIT_REACHED = "key_limit_reached"
    MEMBER_NOT_FOUND = "member_not_found"
    MEMBER_EXISTS = "member_exists"
    MEMBER_LIMIT_REACHED = "member_limit_reached"
    LAST_OWNER = "last_owner"
    SIGNING_SECRET_EXISTS = "signing_secret_exists"
    DOMAIN_TAKEN = "domain_taken"
    ALREADY_SUBSCRIBED = "already_subscribed"
    NOT_SUBSCRIBED = "not_subscribed"
    PROVIDER_KEY_UNREADABLE = "provider_key_unreadable"
    TEMPLATE_INVALID = "template_invalid"
    TEMPLATE_RENDER_FAILED = "template_render_failed"
    TEMPLATE_NOT_FOUND = "template_not_found"
    TEMPLATE_NOT_PUBLISHED = "template_not_published"
    TEMPLATE_CHANGED = "template_changed"
    TEMPLATE_LIMIT_REACHED = "template_limit_reached"
    EVENT_TYPE_INVALID = "event_type_invalid"
    EVENT_TYPE_NOT_FOUND = "event_type_not_found"
    EVENT_TYPE_EXISTS = "event_type_exists"
    EVENT_TYPE_ARCHIVED = "event_type_archived"
    EVENT_TYPE_CHANGED = "event_type_changed"
    EVENT_TYPE_LIMIT_REACHED = "event_type_limit_reached"
    EVENT_PAYLOAD_INVALID = "event_payload_invalid"
    SUBSCRIPTION_NOT_FOUND = "subscription_not_found"
    SUBSCRIPTION_CHANGED = "subscription_changed"
    SUBSCRIPTION_LIMIT_REACHED = "subscription_limit_reached"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    EVENT_NOT_FOUND = "event_not_found"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    RATE_LIMIT_EXCEEDED = "rate_limit_exceeded"
    INTERNAL_ERROR = "internal_error"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    STORAGE_UNAVAILABLE = "storage_unavailable"
    QUEUE_UNAVAILABLE = "queue_unavailable"
    DEPENDENCY_UNAVAILABLE = "dependency_unavailable"


# One invalid field of a request, as the error envelope's details list it (no other field: the API's
# document says so).
class FieldProblem(msgspec.Struct, forbid_unknown_fields=True):
    field: str
    message: str


@dataclass
class HeraldError(Exception):
    """An error the client should see: one human sentence plus a machine code.

    ``extra`` holds fields the envelope carries beside ``error`` (``jobId``, ``retryAfter``, ...)."""

    message: str
    code: ErrorCode = ErrorCode.INTERNAL_ERROR
    details: list[FieldProblem] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def copy(self) -> HeraldError:
        """A fresh instance of a shared error (an exception object must not be raised twice)."""
        return HeraldError(self.message, self.code, list(self.details), dict(self.extra))


def validation_failed(problems: list[FieldProblem]) -> HeraldError:
    """One sentence naming every problem (what SDKs show), with the same problems as ``details``."""
    lines = [
        f"{problem.field}: {problem.message}" if problem.field else problem.message for problem in problems
    ]
    return HeraldError(
        f"Invalid request: {'; '.join(lines)}.",
        ErrorCode.VALIDATION_ERROR,
        details=problems,
        extra={"message": lines},
    )


class DependencyError(Exception):
    """A dependency (table, queue, KMS, provider) failed; the message names it but holds no secret."""
