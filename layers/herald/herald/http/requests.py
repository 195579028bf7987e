"""The request bodies of the API, as validation rules (pydantic models with ``extra="forbid"``, so an
unknown field is a 400 naming it). Size rules raise the ``too_large`` error type, which the API
answers with 413 instead of 400. The rules are described for clients in docs/api.md.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal, cast

from annotated_types import Ge
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    StrictInt,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from herald.domain.addresses import refused_local_characters
from herald.domain.attachments import (
    ALLOWED_TYPES,
    MAX_ATTACHMENTS,
    MAX_FILENAME_CHARACTERS,
    AttachmentRefused,
    AttachmentUpload,
    clean_filename,
    refused_type,
)
from herald.domain.clock import NOT_RFC3339, InvalidTime, TimeOutOfRange, iso, parse_timestamp
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.jobs import PRIORITY_QUEUES, Channel, JobStatus, compact_json
from herald.domain.notifications import (
    IDEMPOTENCY_KEY,
    ONE_LINE_PATTERN,
    ORDERING_KEY,
    PRINTABLE_ASCII,
    VISIBLE_LINE_PATTERN,
    EmailNotification,
    NotificationRequest,
    WebhookNotification,
    format_character,
    line_breaking_character,
)
from herald.domain.providers import HEADER_VALUE
from herald.domain.search import JobSearch
from herald.domain.templates import TemplateUse
from herald.domain.unsubscribes import TOPIC_PATTERN
from herald.domain.vendors import TENANT_PROVIDERS, ProviderName, tenant_provider_names
from herald.domain.webhooks import HeaderOwner, reserved_header

MAX_BODY_BYTES = 256 * 1024
MAX_WEBHOOK_PAYLOAD_BYTES = 10_240
MAX_WEBHOOK_HEADERS = 20
MAX_WEBHOOK_HEADER_BYTES = 8 * 1024
TOO_LARGE = "too_large"
# A sendAt no calendar can hold in UTC: answered like one too far ahead.
SEND_AT_OUT_OF_RANGE = "send_at_out_of_range"

# These patterns are applied with fullmatch: their "$" alone would also match before a final line
# break (the anchors stay, for the JSON Schema copies of them).
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# What an HTTP/1.1 header value may carry: visible Latin-1 text, spaces and tabs; no control bytes.
_HEADER_VALUE = re.compile(r"^[\t\x20-\x7e\xa0-\xff]*$")
# The patterns fields and query parameters are checked against by pydantic, each with the sentence a
# client is told when a value does not match it: a client reads that sentence, never the pattern.
DOMAIN_NAME = r"^([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63}$"
UTC_DAY = r"^\d{4}-\d{2}-\d{2}$"
EMAILED_CODE = r"^\s*\d{6}\s*$"
SEARCHED_ADDRESS = r"^[^@\s]+@[^@\s]+$"
SEARCHED_HOST = r"^[A-Za-z0-9.:\-]+$"
# A topic in the unsubscribe routes: as sends name it, or * (every topic).
UNSUBSCRIBE_TOPIC = r"^([a-z0-9._-]{1,64}|\*)$"
PATTERN_TEXTS: Mapping[str, str] = {
    DOMAIN_NAME: "must be a domain name such as mail.example.com: names of letters, digits and hyphens"
    " joined by dots, none starting or ending with a hyphen, the last one of two or more letters",
    UTC_DAY: "must be a UTC day written YYYY-MM-DD, such as 2026-12-04",
    EMAILED_CODE: "must be the six digits of the emailed code",
    SEARCHED_ADDRESS: "must be one whole email address, such as ada@example.com",
    UNSUBSCRIBE_TOPIC: "must be a topic (1-64 lower-case letters, digits, dots, underscores or hyphens)"
    " or * for every topic",
    TOPIC_PATTERN: "must be 1-64 lower-case letters, digits, dots, underscores or hyphens",
    SEARCHED_HOST: "must be a host name as in the webhook's URL, such as hooks.example.com (punycode for"
    " international names)",
}
# What ``idempotency_key`` checks, as JSON Schema (for the body field and the header alike).
IDEMPOTENCY_KEY_RULE = {"minLength": 1, "maxLength": 255, "pattern": f"^{PRINTABLE_ASCII}+$"}


def _address(value: str) -> str:
    # Imported by the first address checked: a webhook-only container never loads it (~20 ms).
    from email_validator import EmailNotValidError, validate_email

    refused = refused_local_characters(value)
    if refused:
        raise PydanticCustomError(
            "invalid_email",
            "The email address contains invalid characters before the @-sign: {found}",
            {"found": ", ".join(map(_character_name, refused))},
        )
    try:
        # strict: also RFC 5321's 64 characters before the @-sign, which the library skips otherwise.
        validate_email(value, check_deliverability=False, strict=True)
    except EmailNotValidError as exc:
        raise PydanticCustomError("invalid_email", "{reason}", {"reason": str(exc)}) from exc
    return value


def _character_name(char: str) -> str:
    """'<' for a visible character; a space or a control character by its name, as email-validator
    names the characters it refuses (SPACE), or its code point when it has none (U+0009)."""
    if char.isprintable() and not char.isspace():
        return f"'{char}'"
    return unicodedata.name(char, f"U+{ord(char):04X}")


def bounded_utf8(limit: int, what: str) -> AfterValidator:
    def check(value: str) -> str:
        if len(value.encode()) > limit:
            raise PydanticCustomError(
                TOO_LARGE, "{what} is larger than {limit} bytes", {"what": what, "limit": limit}
            )
        return value

    return AfterValidator(check)


def idempotency_key(value: str) -> str:
    """The rule of the ``idempotencyKey`` field and of the ``Idempotency-Key`` header alike."""
    if not IDEMPOTENCY_KEY.fullmatch(value):
        raise PydanticCustomError("invalid_idempotency_key", "must be 1-255 printable ASCII characters")
    return value


def _header_safe(value: str) -> str:
    if not HEADER_VALUE.fullmatch(value):
        raise PydanticCustomError(
            "invalid_credential",
            "must be printable ASCII without a space at either end (it is sent in an HTTP header)",
        )
    return value


EmailAddress = Annotated[
    str, Field(max_length=320, json_schema_extra={"format": "email"}), AfterValidator(_address)
]
# A provider key or token: Herald presents it to the provider in a request header.
ProviderCredential = Annotated[
    str,
    Field(min_length=1, max_length=512, json_schema_extra={"pattern": f"^{HEADER_VALUE.pattern}$"}),
    AfterValidator(_header_safe),
]
IdempotencyKey = Annotated[
    str, AfterValidator(idempotency_key), WithJsonSchema({"type": "string", **IDEMPOTENCY_KEY_RULE})
]


def whole_number(value: Any) -> Any:
    # JSON Schema's "integer" is any number without a fractional part, so 5.0 is the integer 5.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# A JSON Schema integer: a whole number, written 5 or 5.0; never a string, a boolean or 5.5.
WholeNumber = Annotated[StrictInt, BeforeValidator(whole_number)]


def _priority(value: int) -> int:
    if value not in PRIORITY_QUEUES:
        raise PydanticCustomError("invalid_priority", "must be 1 (high), 5 (normal) or 10 (low)")
    return value


def _client_time(value: Any, error_type: str, out_of_range_type: str) -> datetime:
    # A string only: pydantic alone would take a number for a Unix time and "1700000000" too.
    if not isinstance(value, str):
        raise PydanticCustomError(error_type, NOT_RFC3339)
    try:
        return parse_timestamp(value)
    except TimeOutOfRange as exc:
        raise PydanticCustomError(out_of_range_type, str(exc)) from exc
    except InvalidTime as exc:
        raise PydanticCustomError(error_type, str(exc)) from exc


def _send_at(value: str) -> str:
    return iso(_client_time(value, "invalid_send_at", SEND_AT_OUT_OF_RANGE))


def _window_edge(value: Any) -> datetime:
    return _client_time(value, "invalid_time", "invalid_time")


# A time window's edge, as the JSON Schema's date-time string.
WindowEdge = Annotated[AwareDatetime, BeforeValidator(_window_edge)]


# A time with an offset; how far ahead it may be is checked on acceptance (send_at_out_of_range).
SendAt = Annotated[
    str,
    Field(
        max_length=64,
        description="When to send: now to 30 days ahead (a minute in the past means now)",
        json_schema_extra={"format": "date-time"},
    ),
    AfterValidator(_send_at),
]


def _ordering_key(value: str) -> str:
    if not ORDERING_KEY.fullmatch(value):
        raise PydanticCustomError("invalid_ordering_key", "must be 1-128 printable ASCII characters")
    return value


OrderingKey = Annotated[
    str,
    AfterValidator(_ordering_key),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": 128,
            "pattern": f"^{PRINTABLE_ASCII}+$",
            "description": "Jobs of yours of this channel with the same key are delivered one after "
            "another, in acceptance order; an email and a webhook with the same key do not wait for "
            "each other (each channel has its own queue)",
        }
    ),
]


# Exactly the SDK's three priorities: "5" and true are not priorities.
Priority = Annotated[
    WholeNumber,
    AfterValidator(_priority),
    Field(description="1 = high, 5 = normal (default), 10 = low", json_schema_extra={"enum": [1, 5, 10]}),
]


_TENANT_PROVIDERS = tuple(name.value for name in TENANT_PROVIDERS)
# As pydantic words an enum's choices: 'A', 'B' or 'C'.
_CHOICES = tenant_provider_names(repr)


def _tenant_provider(value: object) -> object:
    """Only the tenants' own providers, in the API's spelling (SES is the platform's account)."""
    if value not in _TENANT_PROVIDERS:
        raise PydanticCustomError("enum", "Input should be {expected}", {"expected": _CHOICES})
    return value


# The provider table's vendors, spelled as the API writes them.
ProviderChoice = Annotated[
    ProviderName,
    BeforeValidator(_tenant_provider),
    WithJsonSchema({"type": "string", "enum": list(_TENANT_PROVIDERS), "title": "ProviderChoice"}),
]


class StrictBody(BaseModel):
    # defer_build: each model's validator is built by the first request that carries its body (a
    # request carries one), not at cold start; the rules and the JSON Schema stay the same.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    def document(self) -> dict[str, Any]:
        """The body as a client sends it: each field under its name in the API, absent ones left out.
        Read from the field declarations: a dump would build the deferred schema (some 50 ms)."""
        return {
            field.alias or name: value.document() if isinstance(value, StrictBody) else value
            for name, field in type(self).model_fields.items()
            if (value := getattr(self, name)) is not None
        }


def _options(request: NotificationRequest) -> dict[str, Any]:
    """The fields every send body shares, as ``request`` carries them."""
    return {
        "priority": request.priority,
        "idempotencyKey": request.idempotency_key,
        "sendAt": request.send_at,
        "orderingKey": request.ordering_key,
    }


# Subject and body are optional only beside a template: the document states them as strings, with
# no null and no default to offer.
_STRING: JsonDict = {"type": "string", "minLength": 1}


def _without_default(**extra: JsonValue) -> Callable[[JsonDict], None]:
    def edit(schema: JsonDict) -> None:
        schema.pop("default", None)
        schema.update(extra)

    return edit


# A template's version. The bound sits on the integer itself, before the whole-number validator: on
# WholeNumber inside an optional type, pydantic would state it as "ge", which JSON Schema ignores.
TemplateVersionNumber = Annotated[StrictInt, Ge(1), BeforeValidator(whole_number)]


class TemplateCall(StrictBody):
    id: str = Field(min_length=1, max_length=40, description="The template's id (tpl_…)")
    version: TemplateVersionNumber | None = Field(
        default=None, description="A kept version (a draft too); default: the published one"
    )
    data: dict[str, Any] = Field(
        default_factory=dict, description="The template's variables (any JSON values)"
    )


# A send names a template, or writes subject and body itself: never both (text goes with them).
# A null template is none.
_A_TEMPLATE = {"required": ["template"], "properties": {"template": {"type": "object"}}}
_TEMPLATE_OR_CONTENT: dict[str, Any] = {
    "oneOf": [
        {"required": ["subject", "body"], "not": _A_TEMPLATE},
        {
            **_A_TEMPLATE,
            "not": {"anyOf": [{"required": ["subject"]}, {"required": ["body"]}, {"required": ["text"]}]},
        },
    ]
}


def _provider_pair_rule() -> dict[str, Any]:
    """``_provider_pair`` as JSON Schema: a fallback needs a provider, and the two differ. Either may
    be sent as null, which is leaving it out, so this is an if/then on string values rather than
    dependentRequired, which a null fallback would satisfy only with a provider beside it."""
    chosen = {"type": "string"}
    same = [
        {
            "required": ["provider", "fallback"],
            "properties": {"provider": {"const": name}, "fallback": {"const": name}},
        }
        for name in _TENANT_PROVIDERS
    ]
    return {
        "if": {"required": ["fallback"], "properties": {"fallback": chosen}},
        "then": {"required": ["provider"], "properties": {"provider": chosen}},
        "not": {"anyOf": same},
    }


class UnsubscribeOption(StrictBody):
    topic: str = Field(
        min_length=1,
        max_length=64,
        pattern=TOPIC_PATTERN,
        description="What the recipient unsubscribes from in one click: 1-64 of a-z 0-9 . _ -",
    )


def _decoded(value: Any) -> bytes:
    # A string only: decoded once, here, so a 4 MB file is not decoded twice.
    if not isinstance(value, str):
        raise PydanticCustomError("invalid_base64", "must be a base64 string")
    try:
        content = base64.b64decode(value, validate=True)
    except binascii.Error as exc:
        raise PydanticCustomError(
            "invalid_base64", "is not valid base64: {reason}", {"reason": str(exc)}
        ) from exc
    if not content:
        raise PydanticCustomError("invalid_base64", "is empty: an attachment holds at least one byte")
    return content


# RFC 4648 base64 of at least one byte, padded: what _decoded takes, as a JSON Schema pattern.
_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
Base64Content = Annotated[
    bytes,
    BeforeValidator(_decoded),
    WithJsonSchema({"type": "string", "contentEncoding": "base64", "pattern": _BASE64}),
]


class AttachmentBody(StrictBody):
    """One attachment: its content in base64, or an https URL Herald fetches it from at accept."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [{"required": ["content"]}, {"required": ["url"]}],
            "examples": [
                {"filename": "invoice.pdf", "contentType": "application/pdf", "content": "JVBERi0="}
            ],
        }
    )

    filename: str = Field(
        min_length=1,
        max_length=MAX_FILENAME_CHARACTERS,
        description="Shown to the recipient: its last path segment, without control or format"
        " characters; characters Windows refuses in a name become _",
    )
    contentType: str = Field(  # noqa: N815 (the API's field name)
        min_length=1,
        max_length=255,
        description="One of the allowed media types (docs/api.md, Attachments)",
        json_schema_extra={"enum": list(ALLOWED_TYPES)},
    )
    content: Base64Content | None = Field(default=None, description="The file, base64 (RFC 4648)")
    url: str | None = Field(
        default=None,
        min_length=1,
        max_length=2048,
        description="https:// URL on a public host; fetched once, at accept",
        json_schema_extra={"pattern": ONE_LINE_PATTERN},
    )

    @field_validator("filename")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        try:
            return clean_filename(value)
        except AttachmentRefused as exc:
            raise PydanticCustomError("invalid_filename", "{reason}", {"reason": str(exc)}) from exc

    @field_validator("contentType")
    @classmethod
    def _allowed_type(cls, value: str) -> str:
        reason = refused_type(value)
        if reason is not None:
            raise PydanticCustomError("content_type_not_allowed", "{reason}", {"reason": reason})
        return value

    @model_validator(mode="after")
    def _one_source(self) -> AttachmentBody:
        if (self.content is None) == (self.url is None):
            raise PydanticCustomError("invalid_attachment", "give either content (base64) or url")
        return self

    def upload(self) -> AttachmentUpload:
        return AttachmentUpload(
            filename=self.filename, content_type=self.contentType, content=self.content, url=self.url
        )


class EmailRequest(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"to": "someone@example.com", "subject": "Your order", "body": "<p>It has shipped.</p>"},
                {
                    "to": "someone@example.com",
                    "template": {"id": "tpl_5f2c9a1e7b3d4c60", "data": {"name": "Ada"}},
                },
            ],
            **_provider_pair_rule(),
            **_TEMPLATE_OR_CONTENT,
        }
    )

    to: EmailAddress = Field(description="One RFC 5322 address, without a display name")
    subject: Annotated[str | None, WithJsonSchema(_STRING | {"maxLength": 998})] = Field(
        default=None,
        min_length=1,
        max_length=998,
        description="One line of visible text: no control character, line or paragraph separator, or"
        " invisible or bidirectional format character (U+200C and U+200D allowed); required without"
        " a template",
        json_schema_extra=_without_default(pattern=VISIBLE_LINE_PATTERN),
    )
    body: Annotated[
        Annotated[str, Field(min_length=1), bounded_utf8(MAX_BODY_BYTES, "body")] | None,
        WithJsonSchema(_STRING),
    ] = Field(
        default=None,
        description="HTML body, 1 byte to 256 KiB; required without a template",
        json_schema_extra=_without_default(),
    )
    text: Annotated[str, bounded_utf8(MAX_BODY_BYTES, "text")] | None = Field(
        default=None, description="Plain-text alternative, up to 256 KiB"
    )
    from_: EmailAddress | None = Field(default=None, alias="from")
    replyTo: EmailAddress | None = None  # noqa: N815 (the SDK's field name)
    priority: Priority | None = None
    idempotencyKey: IdempotencyKey | None = None  # noqa: N815
    sendAt: SendAt | None = None  # noqa: N815
    orderingKey: OrderingKey | None = None  # noqa: N815
    provider: ProviderChoice | None = None
    fallback: ProviderChoice | None = None
    unsubscribe: UnsubscribeOption | None = Field(
        default=None,
        description="Adds RFC 8058 one-click unsubscribe headers for this topic; a recipient who "
        "unsubscribed from it gets no more mail of it",
    )
    attachments: list[AttachmentBody] | None = Field(
        default=None,
        max_length=MAX_ATTACHMENTS,
        description=f"Up to {MAX_ATTACHMENTS} files; their total size is capped by your providers'"
        " smallest message size (docs/api.md, Attachments)",
    )
    template: TemplateCall | None = Field(
        default=None, description="A template of the account, instead of subject, body and text"
    )

    @field_validator("subject")
    @classmethod
    def _single_line(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if "\r" in value or "\n" in value:
            raise PydanticCustomError("invalid_subject", "must not contain line breaks")
        found = line_breaking_character(value)
        if found is not None:
            raise PydanticCustomError(
                "invalid_subject",
                "must not contain control characters or line separators ({found})",
                {"found": found},
            )
        hidden = format_character(value)
        if hidden is not None:
            raise PydanticCustomError(
                "invalid_subject",
                "must not contain invisible or bidirectional format characters ({found})",
                {"found": hidden},
            )
        return value

    @model_validator(mode="after")
    def _content(self) -> EmailRequest:
        # Written, even as null: a template goes without them.
        written = [name for name in ("subject", "body", "text") if name in self.model_fields_set]
        if self.template is not None and written:
            raise PydanticCustomError(
                "template_or_content",
                "send either a template or subject and body, not both ({fields} beside template)",
                {"fields": ", ".join(written)},
            )
        if self.template is None and (self.subject is None or self.body is None):
            missing = [name for name in ("subject", "body") if getattr(self, name) is None]
            raise PydanticCustomError(
                "template_or_content",
                "needs subject and body, or a template ({fields} missing)",
                {"fields": " and ".join(missing)},
            )
        return self

    @model_validator(mode="after")
    def _provider_pair(self) -> EmailRequest:
        if self.fallback is not None and self.provider is None:
            raise PydanticCustomError("invalid_fallback", "fallback needs provider")
        if self.fallback is not None and self.fallback == self.provider:
            raise PydanticCustomError("invalid_fallback", "fallback must differ from provider")
        return self

    @classmethod
    def of(cls, request: NotificationRequest, email: EmailNotification) -> EmailRequest:
        """The body ``to_request`` made ``request`` of (not validated again: it was on its way in)."""
        return cls.model_construct(
            to=email.to,
            subject=email.subject,
            body=email.body,
            text=email.text,
            from_=email.sender,
            replyTo=email.reply_to,
            **_options(request),
            provider=email.provider,
            fallback=email.fallback,
            unsubscribe=UnsubscribeOption.model_construct(topic=email.unsubscribe_topic)
            if email.unsubscribe_topic
            else None,
        )

    def to_request(self) -> NotificationRequest:
        call = self.template
        email = EmailNotification(
            to=self.to,
            # A templated email's parts are rendered at accept (herald.services.templates).
            subject=self.subject or "",
            body=self.body or "",
            text=self.text,
            sender=self.from_,
            reply_to=self.replyTo,
            provider=self.provider,
            fallback=self.fallback,
            unsubscribe_topic=self.unsubscribe.topic if self.unsubscribe else None,
            attachments=tuple(item.upload() for item in self.attachments or ()),
            template=TemplateUse(call.id, call.version, call.data) if call is not None else None,
        )
        return NotificationRequest(
            email,
            priority=self.priority,
            idempotency_key=self.idempotencyKey,
            send_at=self.sendAt,
            ordering_key=self.orderingKey,
        )


def _webhook_headers(value: dict[str, str]) -> dict[str, str]:
    if len(value) > MAX_WEBHOOK_HEADERS:
        raise PydanticCustomError("too_many_headers", "at most {n} headers", {"n": MAX_WEBHOOK_HEADERS})
    size = sum(len(name.encode()) + len(v.encode()) for name, v in value.items())
    if size > MAX_WEBHOOK_HEADER_BYTES:
        raise PydanticCustomError(TOO_LARGE, "headers are larger than 8 KiB in all")
    for name, header_value in value.items():
        if not _HEADER_NAME.fullmatch(name):
            raise PydanticCustomError("invalid_header", "invalid header name '{name}'", {"name": name[:64]})
        owner = reserved_header(name)
        if owner is HeaderOwner.HERALD:
            raise PydanticCustomError("reserved_header", "header '{name}' is set by Herald", {"name": name})
        if owner is HeaderOwner.CONNECTION:
            raise PydanticCustomError(
                "reserved_header",
                "header '{name}' is hop-by-hop: it concerns the connection, not the receiver",
                {"name": name},
            )
        if "\r" in header_value or "\n" in header_value:
            raise PydanticCustomError(
                "invalid_header", "header '{name}' contains a line break", {"name": name}
            )
        if not _HEADER_VALUE.fullmatch(header_value):
            raise PydanticCustomError(
                "invalid_header",
                "header '{name}' holds a control character or a character outside Latin-1",
                {"name": name},
            )
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    return True


def json_object_within(limit: int) -> AfterValidator:
    """A JSON object's check: finite numbers only, and at most ``limit`` bytes as compact JSON (what
    is stored and sent)."""

    def check(value: dict[str, Any]) -> dict[str, Any]:
        if not _finite(value):
            raise PydanticCustomError("invalid_number", "NaN and Infinity are not JSON numbers")
        if len(compact_json(value)) > limit:
            raise PydanticCustomError(
                TOO_LARGE, "payload is larger than {limit} bytes as compact JSON", {"limit": limit}
            )
        return value

    return AfterValidator(check)


WebhookMethod = Literal["POST", "PUT", "PATCH", "DELETE", "GET"]
# A webhook's custom headers (a job's, a subscription's): checked, then sealed before they are stored.
WebhookHeaders = Annotated[dict[str, str], AfterValidator(_webhook_headers)]
WEBHOOK_HEADERS_SCHEMA: JsonDict = {
    "maxProperties": MAX_WEBHOOK_HEADERS,
    "propertyNames": {"pattern": _HEADER_NAME.pattern},
    "additionalProperties": {"type": "string", "pattern": _HEADER_VALUE.pattern},
}
WEBHOOK_HEADERS_TEXT = "Up to 20 headers, 8 KiB in all; names Herald or the connection owns are refused"


class WebhookRequest(StrictBody):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"url": "https://hooks.example.com/orders", "payload": {"event": "order.paid", "id": 42}}
            ]
        }
    )

    url: str = Field(
        min_length=1,
        max_length=2048,
        description="https:// URL on a public host",
        json_schema_extra={"pattern": ONE_LINE_PATTERN},
    )
    method: WebhookMethod = "POST"
    headers: WebhookHeaders | None = Field(
        default=None, description=WEBHOOK_HEADERS_TEXT, json_schema_extra=WEBHOOK_HEADERS_SCHEMA
    )
    payload: Annotated[dict[str, Any], json_object_within(MAX_WEBHOOK_PAYLOAD_BYTES)] = Field(
        description="JSON object, at most 10 240 bytes as compact JSON"
    )
    priority: Priority | None = None
    idempotencyKey: IdempotencyKey | None = None  # noqa: N815
    sendAt: SendAt | None = None  # noqa: N815
    orderingKey: OrderingKey | None = None  # noqa: N815

    @classmethod
    def of(
        cls, request: NotificationRequest, webhook: WebhookNotification, headers: Mapping[str, str]
    ) -> WebhookRequest:
        """The body ``to_request`` made ``request`` of, with ``headers`` for its custom headers (not
        validated again: it was on its way in, its method among them)."""
        return cls.model_construct(
            url=webhook.url,
            method=cast("WebhookMethod", webhook.method),
            headers=dict(headers) or None,
            payload=dict(webhook.payload),
            **_options(request),
        )

    def to_request(self) -> NotificationRequest:
        webhook = WebhookNotification(
            url=self.url, payload=self.payload, method=self.method, headers=self.headers or {}
        )
        return NotificationRequest(
            webhook,
            priority=self.priority,
            idempotency_key=self.idempotencyKey,
            send_at=self.sendAt,
            ordering_key=self.orderingKey,
        )


# ---------------------------------------------------------------- the job routes


class RecoverRequest(StrictBody):
    """Which failed jobs to re-queue: those accepted in [since, until) (until: now), of one type."""

    since: WindowEdge = Field(description="ISO-8601 time with offset: the window's start")
    until: WindowEdge | None = Field(default=None, description="The window's end (default: now)")
    type: Literal["email", "webhook"] | None = None
    cursor: str | None = Field(default=None, max_length=512, description="nextCursor of the previous call")


def job_search(
    *,
    recipient: str | None,
    host: str | None,
    subject: str | None,
    window: tuple[datetime | None, datetime | None],
    day: date | None,
    channel: str | None,
    status: str | None,
) -> JobSearch:
    """The jobs list's query parameters as one search: ``day`` (the older filter) is the window of
    one UTC day, narrowed further by ``since`` and ``until`` when those are given too."""
    if recipient is not None and host is not None:
        raise HeraldError(
            "Invalid request: host: give recipient or host, not both (a job has one).",
            ErrorCode.VALIDATION_ERROR,
        )
    since, until = (iso(edge) if edge is not None else None for edge in window)
    if day is not None:
        first, after = iso_day(day), iso_day(day + timedelta(days=1))
        since, until = max(since or first, first), min(until or after, after)
    term = recipient or host
    return JobSearch(
        term=term.lower() if term else None,
        subject=subject.lower() if subject else None,
        since=since,
        until=until,
        channel=Channel(channel) if channel else None,
        status=JobStatus(status) if status else None,
    )


def iso_day(day: date) -> str:
    """Midnight UTC of ``day``, as the stored acceptance times are written."""
    return iso(datetime(day.year, day.month, day.day, tzinfo=UTC))
