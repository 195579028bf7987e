"""What a tenant asks Herald to send: an email or a webhook, with the options of its request.

The HTTP edge builds these once from a validated request body; the accept service, the stores, the
queue messages and the workers all carry them as they are. How a request is stored and queued is
the adapters' (``herald.adapters.store.conversions``); how it is shown, the HTTP edge's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec.structs import replace

from herald.domain.attachments import Attachment, AttachmentUpload
from herald.domain.jobs import Channel
from herald.domain.secrets import SealedSecret
from herald.domain.templates import TemplateUse
from herald.domain.vendors import ProviderName

# Shown instead of a custom header's value where a copy leaves Herald (the operator's dead-letter copy).
REDACTED = "[redacted]"
# Shown instead of a sensitive header's value in a job document (the tenant's own view).
MASKED = "[masked]"
# Header names whose values are credentials: never shown again, like every other secret.
SENSITIVE_HEADER = re.compile(
    r"authorization|proxy-authorization|cookie|.*-key|.*-token|.*-secret|.*-signature|.*password.*",
    re.IGNORECASE,
)
# An idempotency key, whether it comes in the body or in the Idempotency-Key header: 1-255 of these.
PRINTABLE_ASCII = r"[\x20-\x7e]"
IDEMPOTENCY_KEY = re.compile(PRINTABLE_ASCII + "{1,255}")
# An ordering key: the tenant's jobs that share one are delivered one after another.
ORDERING_KEY = re.compile(PRINTABLE_ASCII + "{1,128}")

# Text that must stay on one line: an email subject (a header line) and a webhook URL (a request
# line). Nothing in it may end or break that line, for any reader: no C0 or C1 control character (tab,
# CR, LF and NEL among them), no DEL, and no Unicode line or paragraph separator (U+2028, U+2029).
# HTTP stacks and mail servers do not agree on these: some strip them silently, some break the line,
# some fail to encode. (Lone surrogates never get this far: the request parser refuses them.)
#
# A subject is also read by a person: it carries no invisible or bidirectional format character
# (Unicode category Cf: zero-width spaces, byte-order marks, right-to-left overrides and the rest),
# which hide text or show it in another order than it is sent. Two are allowed, because scripts
# and emoji need them: the zero-width non-joiner (Persian, Indic scripts) and joiner (emoji sequences).
# Written with \uXXXX escapes, which Python's re and ECMA-262 (JSON Schema's dialect) read alike.
_BREAKING = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"
# The rule as a JSON Schema pattern, for the OpenAPI document's copy of it.
ONE_LINE_PATTERN = f"^[^{_BREAKING}]*$"
_LINE_BREAKING = re.compile(f"[{_BREAKING}]")


# Unicode 15's category Cf but U+200C and U+200D, as ranges (a test compares it with unicodedata).
_FORMAT_BMP = (
    "\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u180e\\u200b\\u200e-\\u200f"
    "\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb"
)
# Outside the Basic Multilingual Plane: Python's \U escapes, which ECMA-262 has no spelling for, so
# the JSON Schema copy leaves these out.
_FORMAT_ASTRAL = (
    "\\U000110bd\\U000110cd\\U00013430-\\U0001343f\\U0001bca0-\\U0001bca3\\U0001d173-\\U0001d17a"
    "\\U000e0001\\U000e0020-\\U000e007f"
)
VISIBLE_LINE_PATTERN = f"^[^{_BREAKING}{_FORMAT_BMP}]*$"
_FORMAT = re.compile(f"[{_FORMAT_BMP}{_FORMAT_ASTRAL}]")


def format_character(value: str) -> str | None:
    """The first invisible or bidirectional format character of ``value``, as ``U+XXXX``; None if
    there is none."""
    found = _FORMAT.search(value)
    return f"U+{ord(found.group()):04X}" if found else None


def line_breaking_character(value: str) -> str | None:
    """The first character of ``value`` that does not belong on one line, as ``U+XXXX``; None if
    there is none."""
    found = _LINE_BREAKING.search(value)
    return f"U+{ord(found.group()):04X}" if found else None


class EmailNotification(msgspec.Struct, frozen=True):
    to: str
    subject: str
    # The HTML body.
    body: str
    text: str | None = None
    # The `from` address; None: the tenant's default sender.
    sender: str | None = None
    reply_to: str | None = None
    # A provider forced for this email (and its fallback) instead of the tenant's order.
    provider: ProviderName | None = None
    fallback: ProviderName | None = None
    # The topic a recipient can unsubscribe from in one click (``herald.domain.unsubscribes``).
    unsubscribe_topic: str | None = None
    # Uploads from the request until the accept stores them; references from then on.
    attachments: tuple[Attachment | AttachmentUpload, ...] = ()
    # The template the send named: until accepted, subject and body are empty and the accept
    # service renders them from it; afterwards it names the template and version used.
    template: TemplateUse | None = None

    @property
    def channel(self) -> Channel:
        return Channel.EMAIL

    def stored_attachments(self) -> tuple[Attachment, ...]:
        """The references of a stored email's attachments (a job's, never a request's)."""
        stored = tuple(item for item in self.attachments if isinstance(item, Attachment))
        if len(stored) != len(self.attachments):
            raise TypeError("the email's attachments are not stored yet")
        return stored

    def files(self) -> tuple[tuple[Attachment, bytes], ...]:
        """Each attachment with its content, as the worker read them for a pass."""
        loaded = tuple((item, item.content) for item in self.stored_attachments() if item.content is not None)
        if len(loaded) != len(self.attachments):
            raise TypeError("the email's attachments were not read for this pass")
        return loaded

    def forced_providers(self) -> tuple[ProviderName, ...]:
        return tuple(name for name in (self.provider, self.fallback) if name is not None)


class SealedHeaders(msgspec.Struct, frozen=True):
    """A webhook's custom headers at rest (table and queue): the names in clear, the values sealed
    together, as one secret of the tenant."""

    names: tuple[str, ...]
    sealed: SealedSecret


class DeliveryRef(msgspec.Struct, frozen=True):
    """What ties a delivery job to its event and subscription (kept with the job's request)."""

    event_id: str
    subscription_id: str
    event_type: str
    # The subscription's rate when the event was fanned out: its deliveries are paced to it.
    rate_limit_per_second: int | None = None


class WebhookNotification(msgspec.Struct, frozen=True):
    url: str
    # The JSON object that is sent as the body.
    payload: Mapping[str, Any]
    method: str = "POST"
    # In clear only in memory (as the request brought them, or opened just before sending).
    headers: Mapping[str, str] | SealedHeaders = msgspec.field(default_factory=dict)
    # A subscription's delivery of an event (None: a webhook the client addressed itself).
    delivery: DeliveryRef | None = None

    @property
    def channel(self) -> Channel:
        return Channel.WEBHOOK

    def header_names(self) -> tuple[str, ...]:
        headers = self.headers
        return headers.names if isinstance(headers, SealedHeaders) else tuple(headers)

    def redacted(self) -> WebhookNotification:
        """Custom headers often carry the receiver's credentials: their names only."""
        return replace(self, headers=dict.fromkeys(self.header_names(), REDACTED))

    def shown_headers(self) -> dict[str, str]:
        """The headers as the tenant's job document shows them: credentials masked, and every value
        still sealed masked as well."""
        headers = self.headers
        if isinstance(headers, SealedHeaders):
            return dict.fromkeys(headers.names, MASKED)
        return {
            name: MASKED if SENSITIVE_HEADER.fullmatch(name) else value for name, value in headers.items()
        }


Notification = EmailNotification | WebhookNotification


class NotificationRequest(msgspec.Struct, frozen=True):
    """One accepted request: the notification and the options it came with."""

    notification: Notification
    # As requested (1, 5 or 10); None: the default. The plan may lower it (``plans``).
    priority: int | None = None
    idempotency_key: str | None = None
    # When to send it (ISO-8601, as Herald writes times); None: now (``herald.domain.scheduling``).
    send_at: str | None = None
    # Jobs of the tenant with the same key are delivered in acceptance order, one at a time.
    ordering_key: str | None = None

    @property
    def channel(self) -> Channel:
        return self.notification.channel

    @property
    def clear_headers(self) -> Mapping[str, str] | None:
        """A webhook's custom headers while they are still in clear (None: nothing to seal)."""
        notification = self.notification
        if isinstance(notification, WebhookNotification) and isinstance(notification.headers, Mapping):
            return notification.headers or None
        return None

    def redacted(self) -> NotificationRequest:
        """The request as a copy that leaves Herald may show it (webhook header values hidden)."""
        if isinstance(self.notification, WebhookNotification):
            return replace(self, notification=self.notification.redacted())
        return self
