"""The bodies of POST /notifications/email and /notifications/webhook (api.md field rules).

Pydantic models with ``extra="forbid"`` so an unknown field is a 400 naming it. Size rules raise
the ``too_large`` error type, which the API answers with 413 instead of 400.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, field_validator, model_validator
from pydantic_core import PydanticCustomError

MAX_BODY_BYTES = 256 * 1024
MAX_WEBHOOK_PAYLOAD_BYTES = 10_240
MAX_WEBHOOK_HEADERS = 20
MAX_WEBHOOK_HEADER_BYTES = 8 * 1024
TOO_LARGE = "too_large"

# Header names Herald sets itself; a tenant may not override them.
RESERVED_HEADERS = frozenset({"content-type", "user-agent", "host", "content-length"})
RESERVED_HEADER_PREFIXES = ("x-webhook-", "webhook-")
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_PRINTABLE = re.compile(r"^[\x20-\x7e]+$")


def _address(value: str) -> str:
    try:
        validate_email(value, check_deliverability=False)
    except EmailNotValidError as exc:
        raise PydanticCustomError("invalid_email", "{reason}", {"reason": str(exc)}) from exc
    return value


def _bounded_utf8(limit: int, what: str) -> AfterValidator:
    def check(value: str) -> str:
        if len(value.encode()) > limit:
            raise PydanticCustomError(
                TOO_LARGE, "{what} is larger than {limit} bytes", {"what": what, "limit": limit}
            )
        return value

    return AfterValidator(check)


def _idempotency_key(value: str) -> str:
    if not _PRINTABLE.match(value):
        raise PydanticCustomError("invalid_idempotency_key", "must be 1-255 printable ASCII characters")
    return value


EmailAddress = Annotated[str, Field(max_length=320), AfterValidator(_address)]
IdempotencyKey = Annotated[str, Field(min_length=1, max_length=255), AfterValidator(_idempotency_key)]
# Strict: "5", 5.0 and true are not priorities.
Priority = Annotated[
    int, Strict(), Field(ge=1, le=10, description="1 = high, 5 = normal (default), 10 = low")
]


class ProviderChoice(StrEnum):
    SENDGRID = "SENDGRID"
    RESEND = "RESEND"
    POSTMARK = "POSTMARK"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class EmailRequest(_Strict):
    to: EmailAddress = Field(description="One RFC 5322 address, without a display name")
    subject: str = Field(min_length=1, max_length=998)
    body: Annotated[str, Field(min_length=1), _bounded_utf8(MAX_BODY_BYTES, "body")] = Field(
        description="HTML body, 1 byte to 256 KiB"
    )
    text: Annotated[str, _bounded_utf8(MAX_BODY_BYTES, "text")] | None = Field(
        default=None, description="Plain-text alternative, up to 256 KiB"
    )
    from_: EmailAddress | None = Field(default=None, alias="from")
    replyTo: EmailAddress | None = None  # noqa: N815 (the SDK's field name)
    priority: Priority | None = None
    idempotencyKey: IdempotencyKey | None = None  # noqa: N815
    provider: ProviderChoice | None = None
    fallback: ProviderChoice | None = None

    @field_validator("subject")
    @classmethod
    def _single_line(cls, value: str) -> str:
        if "\r" in value or "\n" in value:
            raise PydanticCustomError("invalid_subject", "must not contain line breaks")
        return value

    @model_validator(mode="after")
    def _provider_pair(self) -> EmailRequest:
        if self.fallback is not None and self.provider is None:
            raise PydanticCustomError("invalid_fallback", "fallback needs provider")
        if self.fallback is not None and self.fallback == self.provider:
            raise PydanticCustomError("invalid_fallback", "fallback must differ from provider")
        return self


def _webhook_headers(value: dict[str, str]) -> dict[str, str]:
    if len(value) > MAX_WEBHOOK_HEADERS:
        raise PydanticCustomError("too_many_headers", "at most {n} headers", {"n": MAX_WEBHOOK_HEADERS})
    size = sum(len(name.encode()) + len(v.encode()) for name, v in value.items())
    if size > MAX_WEBHOOK_HEADER_BYTES:
        raise PydanticCustomError(TOO_LARGE, "headers are larger than 8 KiB in all")
    for name, header_value in value.items():
        lowered = name.lower()
        if not _HEADER_NAME.match(name):
            raise PydanticCustomError("invalid_header", "invalid header name {name!r}", {"name": name})
        if lowered in RESERVED_HEADERS or lowered.startswith(RESERVED_HEADER_PREFIXES):
            raise PydanticCustomError("reserved_header", "header {name!r} is set by Herald", {"name": name})
        if "\r" in header_value or "\n" in header_value:
            raise PydanticCustomError(
                "invalid_header", "header {name!r} contains a line break", {"name": name}
            )
    return value


def _compact_payload(value: dict[str, Any]) -> dict[str, Any]:
    if len(compact_json(value)) > MAX_WEBHOOK_PAYLOAD_BYTES:
        raise PydanticCustomError(TOO_LARGE, "payload is larger than 10240 bytes as compact JSON")
    return value


class WebhookRequest(_Strict):
    url: str = Field(min_length=1, max_length=2048, description="https:// URL on a public host")
    method: Literal["POST", "PUT", "PATCH", "DELETE", "GET"] = "POST"
    headers: Annotated[dict[str, str], AfterValidator(_webhook_headers)] | None = None
    payload: Annotated[dict[str, Any], AfterValidator(_compact_payload)] = Field(
        description="JSON object, at most 10 240 bytes as compact JSON"
    )
    priority: Priority | None = None
    idempotencyKey: IdempotencyKey | None = None  # noqa: N815


def compact_json(value: Any) -> bytes:
    """The one serialisation of payloads: what is hashed, stored, signed and sent."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=False).encode()
