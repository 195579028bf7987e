"""The one table from machine codes to HTTP statuses. Services raise ``HeraldError`` with a code;
only the HTTP edge decides what status that is."""

from __future__ import annotations

from collections.abc import Mapping

from herald.domain.errors import ErrorCode

STATUS: Mapping[ErrorCode, int] = {
    ErrorCode.VALIDATION_ERROR: 400,
    ErrorCode.INVALID_JSON: 400,
    ErrorCode.INVALID_CURSOR: 400,
    ErrorCode.IDEMPOTENCY_KEY_MISMATCH: 400,
    ErrorCode.URL_NOT_ALLOWED: 400,
    ErrorCode.FROM_NOT_ALLOWED: 400,
    ErrorCode.PROVIDER_NOT_CONFIGURED: 400,
    ErrorCode.PROVIDER_KEY_INVALID: 400,
    ErrorCode.INVALID_PRIORITY: 400,
    ErrorCode.SEND_AT_OUT_OF_RANGE: 400,
    ErrorCode.MISSING_API_KEY: 401,
    ErrorCode.MALFORMED_API_KEY: 401,
    ErrorCode.INVALID_API_KEY: 401,
    ErrorCode.INVALID_SIGNATURE: 401,
    ErrorCode.INVALID_SESSION: 401,
    ErrorCode.INVALID_CODE: 401,
    ErrorCode.CROSS_ORIGIN_REQUEST: 403,
    ErrorCode.PROCESSOR_NOT_AVAILABLE: 400,
    ErrorCode.TEMPLATE_INVALID: 400,
    ErrorCode.TEMPLATE_RENDER_FAILED: 400,
    ErrorCode.TENANT_DISABLED: 403,
    ErrorCode.INSUFFICIENT_SCOPE: 403,
    ErrorCode.PLAN_REQUIRED: 403,
    ErrorCode.PROVIDER_REQUIRED: 403,
    ErrorCode.QUOTA_EXCEEDED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.UNKNOWN_PROVIDER: 404,
    ErrorCode.JOB_NOT_FOUND: 404,
    ErrorCode.PROVIDER_NOT_FOUND: 404,
    ErrorCode.JOB_NOT_RETRYABLE: 404,
    ErrorCode.TENANT_NOT_FOUND: 404,
    ErrorCode.DOMAIN_NOT_FOUND: 404,
    ErrorCode.SIGNING_SECRET_NOT_FOUND: 404,
    ErrorCode.SUPPRESSION_NOT_FOUND: 404,
    ErrorCode.WEBHOOK_NOT_FOUND: 404,
    ErrorCode.ENDPOINT_NOT_FOUND: 404,
    ErrorCode.KEY_NOT_FOUND: 404,
    ErrorCode.MEMBER_NOT_FOUND: 404,
    ErrorCode.TEMPLATE_NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.DUPLICATE_REQUEST: 409,
    ErrorCode.JOB_NOT_CANCELLABLE: 409,
    ErrorCode.KEY_ROTATED: 409,
    ErrorCode.KEY_LIMIT_REACHED: 409,
    ErrorCode.MEMBER_EXISTS: 409,
    ErrorCode.MEMBER_LIMIT_REACHED: 409,
    ErrorCode.LAST_OWNER: 409,
    ErrorCode.TEMPLATE_NOT_PUBLISHED: 409,
    ErrorCode.TEMPLATE_CHANGED: 409,
    ErrorCode.TEMPLATE_LIMIT_REACHED: 409,
    ErrorCode.SIGNING_SECRET_EXISTS: 409,
    ErrorCode.DOMAIN_TAKEN: 409,
    ErrorCode.ALREADY_SUBSCRIBED: 409,
    ErrorCode.NOT_SUBSCRIBED: 409,
    ErrorCode.PROVIDER_KEY_UNREADABLE: 409,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 422,
    ErrorCode.RATE_LIMIT_EXCEEDED: 429,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.PROVIDER_UNAVAILABLE: 502,
    ErrorCode.STORAGE_UNAVAILABLE: 503,
    ErrorCode.QUEUE_UNAVAILABLE: 503,
    ErrorCode.DEPENDENCY_UNAVAILABLE: 503,
}


def status_of(code: ErrorCode) -> int:
    return STATUS[code]
